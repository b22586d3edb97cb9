#include "unlock_listener.hpp"

#include <poll.h>

#include <memory>

#include "sync_redis.hpp"

namespace holdfast::check {
namespace {

using Subscription = std::unique_ptr<redisContext, void (*)(redisContext*)>;

constexpr Nanos recheck_every = 100'000'000;  // whether it still listens to the master

// The first of `ports` whose ROLE says master; 0 if none answers so (a
// failover under way, a node paused: each is given 50 ms).
std::uint16_t master_among(const std::vector<std::uint16_t>& ports) {
    for (const std::uint16_t port : ports) {
        try {
            support::SyncRedis node(port);
            node.set_timeout(std::chrono::milliseconds(50));
            const auto role = node.command({"ROLE"});
            if (role->type == REDIS_REPLY_ARRAY && role->elements > 0 &&
                std::string(role->element[0]->str, role->element[0]->len) == "master")
                return port;
        } catch (const std::exception&) {
        }
    }
    return 0;
}

// A connection subscribed to every channel of the run's locks and semaphores; null if it failed.
Subscription subscribe(std::uint16_t port) {
    Subscription sub(redisConnect("127.0.0.1", port), redisFree);
    if (!sub || sub->err) return Subscription(nullptr, redisFree);
    const std::string tag = "{" + lock_name(0).substr(0, lock_name(0).size() - 1) + "*";  // "{check:lock:*"
    const std::string lock = "redisson_lock__channel:" + tag, rwlock = "redisson_rwlock:" + tag,
                      semaphore = "redisson_sc:" + tag;
    const char* argv[] = {"PSUBSCRIBE", lock.c_str(), rwlock.c_str(), semaphore.c_str()};
    if (redisAppendCommandArgv(sub.get(), 4, argv, nullptr) != REDIS_OK) return Subscription(nullptr, redisFree);
    int done = 0;
    while (!done)
        if (redisBufferWrite(sub.get(), &done) != REDIS_OK) return Subscription(nullptr, redisFree);
    return sub;
}

}  // namespace

UnlockListener::UnlockListener(std::vector<std::uint16_t> ports, const std::string& path)
    : ports_(std::move(ports)), log_(path), thread_([this](std::stop_token stop) { run(stop); }) {}

UnlockListener::~UnlockListener() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
}

// Reads what has come (poll, then one read of the socket: it never waits on a
// paused node), and every 100 ms asks which node is master, to follow it.
void UnlockListener::run(std::stop_token stop) {
    Subscription sub(nullptr, redisFree);
    std::uint16_t port = 0;
    Nanos checked = 0;
    while (!stop.stop_requested()) {
        if (now_ns() - checked > recheck_every) {
            checked = now_ns();
            const std::uint16_t master = master_among(ports_);
            if (master != 0 && (master != port || !sub)) {
                sub = subscribe(master);
                port = sub ? master : 0;
            }
        }
        if (!sub) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
        }
        pollfd ready{sub->fd, POLLIN, 0};
        if (::poll(&ready, 1, 50) <= 0) continue;
        if (redisBufferRead(sub.get()) != REDIS_OK) {  // closed: a restart, a kill
            sub.reset();
            port = 0;
            continue;
        }
        for (void* reply = nullptr; redisGetReplyFromReader(sub.get(), &reply) == REDIS_OK && reply;) {
            support::ReplyPtr message(static_cast<redisReply*>(reply));
            reply = nullptr;
            if (message->type != REDIS_REPLY_ARRAY || message->elements != 4 ||
                std::string(message->element[0]->str, message->element[0]->len) != "pmessage")
                continue;
            Heard heard{now_ns(), port, -1, std::string(message->element[2]->str, message->element[2]->len),
                        std::string(message->element[3]->str, message->element[3]->len)};
            heard.lock = lock_of_channel(heard.channel);
            log_.write(heard);
        }
    }
}

}  // namespace holdfast::check
