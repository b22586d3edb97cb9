// holdfast::inspect(): what a name holds in Redis, read without changing anything.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "holdfast/export.hpp"
#include "holdfast/client.hpp"

namespace holdfast {

/// A snapshot of the keys under one name, decoded by the Redisson layout
/// (docs/redisson-layout.md): which primitive's they look like and its
/// state. The layouts do not record which class wrote them: an RLock, a
/// FairLock, a SpinLock and a FencedLock look alike while nobody waits, and a
/// Semaphore and a CountDownLatch are both one integer. What tells them apart
/// (a fair-lock queue, a fencing token) is reported beside them.
///
/// Each part is read with its own command, so a lock that changes while it is
/// read can show a mix of before and after (a holder from before, a queue from
/// after). A key deleted while it is read shows as free.
struct HOLDFAST_EXPORT LockState {
    using Duration = std::chrono::milliseconds;
    using TimePoint = std::chrono::system_clock::time_point;

    enum class Kind {
        /// No key `name`. A fair-lock queue or a fencing token may still exist.
        free,
        /// A hash of owner -> hold count: Lock, FairLock, SpinLock, FencedLock.
        lock,
        /// A hash with a `mode` field: ReadWriteLock.
        read_write_lock,
        /// A hash of values held by owners (`<field>` -> owner, with
        /// `<field>:<owner>:expire_time` and `:lock_count`): a group of
        /// MultiValueLock (Redisson's getMultiLock(group, values)).
        multi_value_lock,
        /// A string holding an integer: a Semaphore's free permits or a
        /// CountDownLatch's count (stored alike).
        counter,
        /// A counter of free permits beside the ZSET `{name}:timeout` of
        /// permits taken: PermitExpirableSemaphore.
        permit_expirable_semaphore,
        /// A string holding anything else: the `SET name token NX PX` lock of
        /// SimpleLock, go-redsync, node-redlock and redis-plus-plus.
        simple_lock,
        /// Any other key: a list, a set, a hash that is not a lock, ...
        not_a_primitive,
    };

    struct Holder {
        /// The owner id, `<client uuid>:<thread or owner number>` as Redisson
        /// writes it (a read-write lock's writer without its `:write` suffix).
        std::string owner;
        std::int64_t hold_count = 0;
        /// Read-write lock: true for the writer (field `<owner>:write`).
        bool writer = false;
        /// Read-write lock readers: how many of the hold_count read holds
        /// still have their lease key `{name}:<owner>:rwlock_timeout:<n>`
        /// (fewer means leases ran out). nullopt for writers, other kinds, and
        /// hold counts too large to check (over 1024).
        std::optional<std::int64_t> live_read_holds;
    };

    /// One entry of a fair lock's queue `redisson_lock_queue:{name}`.
    struct Waiter {
        std::string owner;
        /// When the waiter is passed over unless it retries first, from
        /// `redisson_lock_timeout:{name}` (the waiter's clock); nullopt when
        /// it has no deadline there.
        std::optional<TimePoint> deadline;
    };

    /// One value held in a group (multi_value_lock). The value itself is not
    /// stored, only its field: MultiValueLock::field_of(value) names it.
    struct HeldValue {
        std::string field;
        std::string owner;
        std::int64_t hold_count = 0;
        /// When the owner's hold of it ends unless renewed (the acquiring
        /// client's clock, holdfast's: the server's); nullopt when the hash
        /// has no expire time for it. A time past means the value is free.
        std::optional<TimePoint> expires;
    };

    /// One permit taken from a permit-expirable semaphore.
    struct Permit {
        /// The permit id in lowercase hex (32 digits for Redisson's 16 bytes),
        /// as PermitExpirableSemaphore::acquire() returns it.
        std::string id;
        /// When its lease ends and the permit returns at the next acquire
        /// (the holder's clock); nullopt: never (Redisson's 922337203685477).
        std::optional<TimePoint> expires;
    };

    /// As given to inspect(); the keys read are Config::key_prefix + name.
    std::string name;
    Kind kind = Kind::free;
    /// What TYPE says of key `name`: "none", "hash", "string", "list", ...
    std::string type = "none";
    /// Time left before key `name` expires; nullopt when it has no expiry
    /// (or no key: kind free).
    std::optional<Duration> ttl;

    /// lock and read_write_lock: the holders in hash order; a read-write
    /// lock's writer first.
    std::vector<Holder> holders;
    /// read_write_lock: "read" or "write".
    std::string mode;
    /// multi_value_lock: the values held, in hash order (no holders above).
    std::vector<HeldValue> values;
    /// free, lock: the fair-lock queue, head first. Waiters stay queued while
    /// the lock is free only for the moment between a release and their retry,
    /// or when dead waiters' deadlines have passed and no acquire has run since.
    std::vector<Waiter> queue;
    /// free, lock: the last fencing token handed out
    /// (`redisson_lock_token:{name}`); the next holder gets a higher one.
    /// nullopt when there is none (or it does not hold an integer).
    std::optional<std::int64_t> fencing_token;

    /// counter: the value (free permits, or the latch's count);
    /// permit_expirable_semaphore: the free permits.
    std::int64_t count = 0;
    /// permit_expirable_semaphore: the permits taken, soonest expiry first.
    std::vector<Permit> permits;
    /// simple_lock: the value, the holder's token (bytes as stored).
    std::string token;

    /// not_a_primitive: what the key holds instead, for a message: "a list",
    /// "a hash with field 'color' = 'blue' (not a hold count)" (field and
    /// value as stored: escape them before printing).
    std::string description;

    /// Where it was read, "host:port": the server, the master the sentinels
    /// name, or the cluster node serving `name`.
    std::string server;
    /// What runs there, as the client's connection learnt it when it
    /// connected: "Redis 7.0.15", "Valkey 8.0.1"; empty if the server refused
    /// to tell (an ACL without EVAL_RO).
    std::string server_version;
};

/// Reads what `name` holds (its keys under Config::key_prefix) on `client`'s
/// server with read-only commands
/// (TYPE, PTTL, HGETALL, GET, EXISTS, LRANGE, ZRANGE) and decodes it. Blocks
/// the calling thread for a few round trips (up to eight), plus one per
/// reader of a read-write lock.
///
/// A key of another type is not an error: it comes back as
/// Kind::not_a_primitive. Throws std::invalid_argument for an empty name,
/// ConnectionError when the server cannot be reached within Config::timeout,
/// ServerError when it refuses a command (ACLs, or a side key such as the
/// queue holding another type: WrongTypeError), std::logic_error on the
/// client's event loop thread.
///
/// Thread safety: may be called from any thread but the client's event loop.
HOLDFAST_EXPORT LockState inspect(Client& client, const std::string& name);

/// The names in `client`'s database that match `pattern` (a glob, as SCAN
/// MATCH reads it), found with SCAN, never KEYS, so the server is not blocked.
/// A side key (a fair-lock queue `redisson_lock_queue:{name}`, a fencing token,
/// a permit-expirable semaphore's `{name}:timeout`, a reader's lease key)
/// stands for its name; the rest stand for themselves. Under a
/// Config::key_prefix only names under it are found, and given without it, as
/// inspect() and the constructors take them. Sorted, each once.
/// What each name holds is for inspect() to say: the list includes keys of any
/// kind. SCAN's guarantee applies: a name present for the whole scan is found;
/// one added or removed meanwhile may or may not be. Blocks for one round trip
/// per 1000 keys or so; same errors as inspect().
HOLDFAST_EXPORT std::vector<std::string> find_names(Client& client, const std::string& pattern = "*");

}  // namespace holdfast
