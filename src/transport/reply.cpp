#include "transport/reply.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <stdexcept>

#include "common/quoted.hpp"
#include "errors/acl_refusal.hpp"

namespace holdfast::detail {
namespace {

// hiredis builds nested replies by handing each element its parent's object.
// The root is the reader's slot (the task's privdata); elements live inside
// their parent's vector, which createArray sizes up front so their addresses
// stay put. Each is built in its place, keeping what that place holds
// allocated (the root's vector, its elements' strings), so a reply shaped
// like the one before costs no allocation; a reply moved out leaves nothing.
Reply* place(const redisReadTask* task, Reply::Type type) {
    Reply* r = task->parent == nullptr
                   ? static_cast<Reply*>(task->privdata)
                   : &static_cast<Reply*>(task->parent->obj)->elements[static_cast<std::size_t>(task->idx)];
    r->type = type;
    r->integer = 0;
    r->str.clear();
    if (type != Reply::Type::array) r->elements.clear();
    return r;
}

void* create_string(const redisReadTask* task, char* str, size_t len) {
    Reply::Type type = Reply::Type::string;
    if (task->type == REDIS_REPLY_ERROR) type = Reply::Type::error;
    if (task->type == REDIS_REPLY_STATUS) type = Reply::Type::status;
    Reply* r = place(task, type);
    r->str.assign(str, len);
    return r;
}

void* create_array(const redisReadTask* task, int elements) {
    Reply* r = place(task, Reply::Type::array);
    r->elements.resize(static_cast<std::size_t>(elements));
    return r;
}

void* create_integer(const redisReadTask* task, long long value) {
    Reply* r = place(task, Reply::Type::integer);
    r->integer = value;
    return r;
}

void* create_nil(const redisReadTask* task) { return place(task, Reply::Type::nil); }

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
    // A script's call refused by the ACL is an ERR (Redis 7.0: "ERR The user
    // executing the script can't ...", 7.2 and later: "ERR ACL failure in
    // script: ..."); a refusal is NOPERM whatever the server's wording.
    if (str.starts_with("ERR ") && acl_refusal(str)) return "NOPERM";
    const std::string_view word = std::string_view(str).substr(0, str.find(' '));
    for (const char c : word)
        if (!(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '_' && c != '-') return {};
    return word;
}

std::string Reply::describe() const {
    switch (type) {
        case Type::nil: return "(nil)";
        case Type::integer: return std::to_string(integer);
        // A server's bytes, escaped and cut: one printable line whatever it sent.
        case Type::string: return '"' + printable(str) + '"';
        case Type::status: return printable(str);
        case Type::error: return "(error) " + printable(str);
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

Reply* ReplyReader::next() {
    void* obj = nullptr;
    if (redisReaderGetReply(reader_, &obj) != REDIS_OK)
        throw std::runtime_error(std::string("the server's reply is not RESP: ") + reader_->errstr);
    return static_cast<Reply*>(obj);
}

void ReplyReader::reset() {
    redisReader* fresh = new_reader(&root_);
    redisReaderFree(reader_);  // a half-read root is cleared (free_object); the next reply is built over it
    reader_ = fresh;
}

}  // namespace holdfast::detail
