// What makes one member of the reentrant lock family (RLock, fair, spin,
// fenced, read, write): its scripts and hash layout. holdfast::Lock supplies
// everything else (waiting, leases, the watchdog, owners, futures) once.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/lock.hpp"
#include "primitive/acquire.hpp"
#include "primitive/script_call.hpp"
#include "transport/reply.hpp"
#include "transport/script.hpp"

namespace holdfast::detail {

class ClientCore;

class LockKind {
public:
    virtual ~LockKind() = default;

    /// Names the kind in errors: "lock", "fair lock", "read lock".
    virtual std::string_view noun() const = 0;

    /// How `owner` acquires `name`: attempt, channel, give-up. `try_once`: the
    /// caller will not wait, so it must not join a queue.
    virtual AcquireRequest acquire(ClientCore& core, const std::string& name, const std::string& owner,
                                   std::chrono::milliseconds lease, bool try_once) const = 0;

    /// Releases one hold of `owner`; replies nil (not a holder), 0 (still held)
    /// or 1 (its last hold released). `lease_ms` "0" keeps the TTL.
    virtual void release(ClientCore& core, const std::string& name, const std::string& owner,
                         const std::string& lease_ms, ReplyHandler done) const = 0;

    /// Deletes the lock whoever holds it and wakes its waiters; replies 1 or 0.
    virtual void force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const = 0;

    /// The watchdog's renew script for holds of this kind.
    virtual const Script& renew() const = 0;

    /// Every key this kind's scripts touch for `name`, its own first: on a
    /// cluster they must share a slot (primitive/one_slot.hpp).
    virtual std::vector<std::string> keys(const std::string& name) const { return {name}; }

    /// The hash field that counts `owner`'s holds (the write lock adds ":write").
    /// It also names the hold to the watchdog.
    virtual std::string hold_field(const std::string& owner) const { return owner; }

    /// The owner a hash field counts holds for; nullopt for fields that are not
    /// holds of this kind (the read-write lock's "mode").
    virtual std::optional<std::string> holder_of(std::string_view field) const { return std::string(field); }

    /// True when another kind shares this kind's hash (the read-write lock's
    /// two sides): the lock is then locked by this kind while holder_of() finds
    /// a holder in the hash, not whenever the key exists.
    virtual bool shares_key() const { return false; }

    /// Whether an owner may take it again while holding it (the simple lock may not).
    virtual bool reentrant() const { return true; }

    /// Lock's queries, each one command and how to read its reply (which may
    /// throw: a field that is no hold count). The defaults read the hash
    /// layout with hold_field(), holder_of() and shares_key(); a kind stored
    /// otherwise (the simple lock's string) overrides all three. `server`
    /// names where, in errors.
    template <class T>
    struct Question {
        std::vector<std::string> command;
        std::function<T(const Reply&)> answer;
    };
    virtual Question<bool> is_locked(const std::string& name, const std::string& server) const;
    virtual Question<std::int64_t> hold_count(const std::string& name, const std::string& owner,
                                              const std::string& server) const;
    virtual Question<std::vector<Lock::Holder>> holders(const std::string& name, const std::string& server) const;
};

/// Redisson's RedissonLock: one hash, one channel announcing final unlocks.
/// The spin and fenced locks share its release and renewal.
class ReentrantLockKind : public LockKind {
public:
    /// `announces`: publishes on the lock channel (the spin lock does not).
    explicit ReentrantLockKind(bool announces = true) : announces_(announces) {}

    std::string_view noun() const override { return "lock"; }
    AcquireRequest acquire(ClientCore& core, const std::string& name, const std::string& owner,
                           std::chrono::milliseconds lease, bool try_once) const override;
    void release(ClientCore& core, const std::string& name, const std::string& owner, const std::string& lease_ms,
                 ReplyHandler done) const override;
    void force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const override;
    const Script& renew() const override;

private:
    bool announces_;
};

/// The RLock's kind.
const LockKind& reentrant_lock_kind();

}  // namespace holdfast::detail
