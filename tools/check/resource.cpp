#include "resource.hpp"

#include <sstream>
#include <stdexcept>

#include "holdfast_scripts.hpp"

namespace holdfast::check {
namespace {

struct Keys {
    std::string counter, writers, highest, log;
};

// One hash tag per lock, as a cluster-ready resource would have.
Keys keys_of(int lock) {
    const std::string base = "resource:{" + std::to_string(lock) + "}:";
    return {base + "counter", base + "writers", base + "highest-token", base + "log"};
}

}  // namespace

Resource::Resource(std::uint16_t port, bool fenced) : redis_(port), fenced_(fenced) {}

Resource::Result Resource::read(int lock, const std::string& hold, std::int64_t token) {
    return access("r", lock, hold, token, 0);
}

Resource::Result Resource::write(int lock, const std::string& hold, std::int64_t token, std::int64_t value) {
    return access("w", lock, hold, token, value);
}

Resource::Result Resource::add(int lock, const std::string& hold) { return access("a", lock, hold, -1, 0); }

Resource::Result Resource::access(const char* kind, int lock, const std::string& hold, std::int64_t token,
                                  std::int64_t value) {
    const Keys k = keys_of(lock);
    auto reply = redis_.command({"EVAL", check_scripts::check_resource_access.body, "4", k.counter, k.writers, k.highest,
                                 k.log, kind, hold, std::to_string(token), fenced_ ? "1" : "0",
                                 std::to_string(value)});
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_INTEGER ||
        reply->element[1]->type != REDIS_REPLY_INTEGER)
        throw std::runtime_error("resource: unexpected reply to " + std::string(kind) + " of " + k.counter +
                                 (reply->type == REDIS_REPLY_ERROR ? ": " + std::string(reply->str, reply->len) : ""));
    return {reply->element[0]->integer == 1, reply->element[1]->integer};
}

ResourceState read_resource(std::uint16_t port, int lock) {
    support::SyncRedis redis(port);
    const Keys k = keys_of(lock);
    ResourceState state;
    state.counter = redis.integer({"GET", k.counter});
    auto members = redis.command({"SMEMBERS", k.writers});
    for (std::size_t i = 0; i < members->elements; ++i)
        state.writers.emplace(members->element[i]->str, members->element[i]->len);
    auto log = redis.command({"LRANGE", k.log, "0", "-1"});
    for (std::size_t i = 0; i < log->elements; ++i) {
        const std::string line(log->element[i]->str, log->element[i]->len);
        std::istringstream in(line);
        ResourceState::Entry entry;
        if (!(in >> entry.kind >> entry.hold >> entry.token >> entry.value) || std::string("rwa").find(entry.kind) == std::string::npos)
            throw std::runtime_error("resource: malformed entry '" + line + "' in " + k.log);
        state.log.push_back(std::move(entry));
    }
    return state;
}

}  // namespace holdfast::check
