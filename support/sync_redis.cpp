#include "sync_redis.hpp"

#include <stdexcept>

namespace holdfast::support {

SyncRedis::SyncRedis(const std::string& host, int port)
    : context_(redisConnect(host.c_str(), port), redisFree) {
    if (!context_ || context_->err)
        throw std::runtime_error("SyncRedis: cannot connect to " + host + ":" + std::to_string(port) +
                                 (context_ ? std::string(": ") + context_->errstr : ""));
}

void SyncRedis::set_timeout(std::chrono::milliseconds timeout) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
    redisSetTimeout(context_.get(), timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)});
}

ReplyPtr SyncRedis::command(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(context_.get(), static_cast<int>(args.size()), argv.data(), lens.data()));
    if (!reply) throw std::runtime_error(std::string("SyncRedis: ") + context_->errstr);
    return ReplyPtr(reply);
}

ReplyPtr SyncRedis::read_reply() {
    redisSetTimeout(context_.get(), timeval{10, 0});
    void* reply = nullptr;
    if (redisGetReply(context_.get(), &reply) != REDIS_OK || !reply)
        throw std::runtime_error(std::string("SyncRedis: no reply: ") + context_->errstr);
    return ReplyPtr(static_cast<redisReply*>(reply));
}

long long SyncRedis::integer(const std::vector<std::string>& args) {
    auto r = command(args);
    if (r->type == REDIS_REPLY_INTEGER) return r->integer;
    if (r->type == REDIS_REPLY_STRING) return std::stoll(std::string(r->str, r->len));
    if (r->type == REDIS_REPLY_NIL) return 0;
    throw std::runtime_error("SyncRedis: " + args.front() + " replied " +
                             (r->type == REDIS_REPLY_ERROR ? std::string(r->str, r->len) : "a non-integer"));
}

std::string SyncRedis::string(const std::vector<std::string>& args) {
    auto r = command(args);
    if (r->type == REDIS_REPLY_NIL) return {};
    if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error("SyncRedis: " + std::string(r->str, r->len));
    if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
    return std::string(r->str, r->len);
}

}  // namespace holdfast::support
