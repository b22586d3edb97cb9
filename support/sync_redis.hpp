// A plain blocking hiredis connection, for looking at Redis from outside
// holdfast (tests check raw keys with it) and for the demo's business data.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace holdfast::support {

struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

class SyncRedis {
public:
    SyncRedis(const std::string& host, int port);
    explicit SyncRedis(int port) : SyncRedis("127.0.0.1", port) {}
    SyncRedis(const SyncRedis&) = delete;
    SyncRedis& operator=(const SyncRedis&) = delete;

    /// Every later read and write gives up after `timeout` (an I/O error):
    /// for a caller that must not wait on a stopped server.
    void set_timeout(std::chrono::milliseconds timeout);
    /// Runs one command; throws std::runtime_error on an I/O error (not on an error reply).
    ReplyPtr command(const std::vector<std::string>& args);
    /// The next pushed reply (after SUBSCRIBE); throws if none comes within 10 s.
    ReplyPtr read_reply();
    /// Integer reply, or the string reply parsed as one; throws on anything else.
    long long integer(const std::vector<std::string>& args);
    /// String or status reply; "" for nil; throws on an error reply.
    std::string string(const std::vector<std::string>& args);

private:
    std::unique_ptr<redisContext, void (*)(redisContext*)> context_;
};

}  // namespace holdfast::support
