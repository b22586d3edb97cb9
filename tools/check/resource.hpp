// The resource the critical sections update: per lock, a counter read and
// written back (read-modify-write) in a separate redis-server that no nemesis
// touches, optionally refusing stale fencing tokens (resource_access.lua); a
// semaphore's holders only add themselves to its set.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sync_redis.hpp"

namespace holdfast::check {

/// A worker's connection to the resource. Not thread safe: one per worker.
class Resource {
public:
    /// fenced: refuse an operation whose token is below the highest seen.
    Resource(std::uint16_t port, bool fenced);

    struct Result {
        bool accepted = false;
        std::int64_t value = 0;  // accepted: the value read or written; refused: the highest token seen
    };
    Result read(int lock, const std::string& hold, std::int64_t token);
    Result write(int lock, const std::string& hold, std::int64_t token, std::int64_t value);
    /// Adds `hold` to the set of writers without touching the counter; value: the set's size.
    Result add(int lock, const std::string& hold);

private:
    Result access(const char* kind, int lock, const std::string& hold, std::int64_t token, std::int64_t value);
    support::SyncRedis redis_;
    bool fenced_;
};

/// What the resource of one lock holds at the end of a run.
struct ResourceState {
    struct Entry {
        char kind = 'r';  // 'r' read, 'w' write, 'a' add to the set only
        std::string hold;
        std::int64_t token = -1;
        std::int64_t value = 0;
    };
    std::int64_t counter = 0;
    std::set<std::string> writers;
    std::vector<Entry> log;  // in the order the resource accepted them
};

/// Reads the final state of `lock`'s resource; throws std::runtime_error
/// naming the key of anything malformed.
ResourceState read_resource(std::uint16_t port, int lock);

}  // namespace holdfast::check
