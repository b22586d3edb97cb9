#include "transport/reply.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <stdexcept>

namespace holdfast::detail {
namespace {

// hiredis builds nested replies by handing each element its parent's object.
// The root goes in the reader's slot (the task's privdata), so a reply costs
// no allocation of its own; elements live inside their parent's vector,
// which createArray sizes up front so their addresses stay put.
Reply* place(const redisReadTask* task, Reply&& value) {
    if (task->parent == nullptr) {
        auto* root = static_cast<Reply*>(task->privdata);
        *root = std::move(value);
        return root;
    }
    auto* parent = static_cast<Reply*>(task->parent->obj);
    Reply& slot = parent->elements[static_cast<std::size_t>(task->idx)];
    slot = std::move(value);
    return &slot;
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
    Reply r;
    switch (task->type) {
        case REDIS_REPLY_ERROR: r.type = Reply::Type::error; break;
        case REDIS_REPLY_STATUS: r.type = Reply::Type::status; break;
        default: r.type = Reply::Type::string; break;
    }
    r.str.assign(str, len);
    return place(task, std::move(r));
}

void* create_array(const redisReadTask* task, int elements) {
    Reply r;
    r.type = Reply::Type::array;
    r.elements.resize(static_cast<std::size_t>(elements));
    return place(task, std::move(r));
}

void* create_integer(const redisReadTask* task, long long value) {
    Reply r;
    r.type = Reply::Type::integer;
    r.integer = value;
    return place(task, std::move(r));
}

void* create_nil(const redisReadTask* task) { return place(task, Reply{}); }

// Only roots are ever freed by hiredis (a half-read one, on an error or at
// the end); elements go with their root. A root is the reader's slot.
void free_object(void* obj) { *static_cast<Reply*>(obj) = Reply{}; }

redisReplyObjectFunctions reply_functions{create_string, create_array, create_integer, create_nil,
                                          free_object};

redisReader* new_reader(Reply* root) {
    redisReader* reader = redisReaderCreateWithFunctions(&reply_functions);
    if (!reader) throw std::bad_alloc();
    reader->privdata = root;
    return reader;
}

}  // namespace

bool Reply::is_error_code(std::string_view code) const { return type == Type::error && this->code() == code; }

// Redis's codes are upper-case words ("ERR", "WRONGTYPE", "NOPERM", "OOM").
std::string_view Reply::code() const {
    if (type != Type::error) return {};
    // Redis 7.0 reports a script's call refused by the ACL as ERR, 7.2 as NOPERM: one code for both.
    if (std::string_view(str).starts_with("ERR The user executing the script can't")) return "NOPERM";
    const std::string_view word = std::string_view(str).substr(0, str.find(' '));
    for (const char c : word)
        if (!(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '_' && c != '-') return {};
    return word;
}

std::string Reply::describe() const {
    switch (type) {
        case Type::nil: return "(nil)";
        case Type::integer: return std::to_string(integer);
        case Type::string: return '"' + str + '"';
        case Type::status: return str;
        case Type::error: return "(error) " + str;
        case Type::array: {
            std::string out = "[";
            for (std::size_t i = 0; i < elements.size(); ++i) {
                if (i) out += ", ";
                out += elements[i].describe();
            }
            return out + "]";
        }
    }
    return "?";
}

ReplyReader::ReplyReader() : reader_(new_reader(&root_)) {}

ReplyReader::~ReplyReader() { redisReaderFree(reader_); }

void ReplyReader::feed(const char* data, std::size_t size) {
    if (redisReaderFeed(reader_, data, size) != REDIS_OK)
        throw std::runtime_error(std::string("RESP reader: ") + reader_->errstr);
}

std::optional<Reply> ReplyReader::next() {
    void* obj = nullptr;
    if (redisReaderGetReply(reader_, &obj) != REDIS_OK)
        throw std::runtime_error(std::string("the server's reply is not RESP: ") + reader_->errstr);
    if (!obj) return std::nullopt;
    std::optional<Reply> reply(std::move(root_));
    root_ = Reply{};
    return reply;
}

void ReplyReader::reset() {
    redisReader* fresh = new_reader(&root_);
    redisReaderFree(reader_);
    reader_ = fresh;
    root_ = Reply{};
}

}  // namespace holdfast::detail
