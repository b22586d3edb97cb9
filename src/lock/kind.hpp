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
#include "lock/layout.hpp"
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
    /// caller will not wait, so it must not join a queue. The steps get the
    /// hold ({noun(), name, hold_field(owner), owner}) when they run: they
    /// need not copy the name or owner.
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

    /// The hash field that counts `owner`'s holds (the write lock's: writer_field()).
    /// It also names the hold to the watchdog.
    virtual std::string hold_field(const std::string& owner) const { return owner; }
    /// Whether hold_field(owner) is `owner` itself, for every owner.
    virtual bool field_is_owner() const { return true; }
    /// The hold `owner` takes or releases on `name`.
    HoldId hold_id(const std::string& name, std::string owner) const;

    /// Which fields of the hash count this kind's holds (lock/layout.hpp): the
    /// holders' (a read-write lock's readers), or the writer's.
    virtual LockField::Role holds_as() const { return LockField::Role::holder; }

    /// True when another kind shares this kind's hash (the read-write lock's
    /// two sides): the hash is read as a read-write lock's, and the lock is
    /// locked by this kind while it has a field of its role (holds_as()), not
    /// whenever the key exists.
    virtual bool shares_key() const { return false; }

    /// This kind's holders in HGETALL's reply on its hash `name` on `server`.
    /// One of their fields holding no hold count: WrongTypeError (the key is no lock).
    std::vector<Lock::Holder> holders_in(const std::vector<Reply>& hgetall, std::string_view server,
                                         const std::string& name) const;

    /// Whether an owner may take it again while holding it (the simple lock may not).
    virtual bool reentrant() const { return true; }

    /// Lock's queries, each one command and how to read its reply (which may
    /// throw: a field that is no hold count). The defaults read the hash
    /// layout with hold_field(), holds_as() and shares_key(); a kind stored
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
    /// `lists_waiters`: its waiters are listed for targeted wake-ups (a kind
    /// with an acquire script of its own, which lists none, says false).
    /// `acquire_script`: one taking lock/acquire.lua's keys and arguments
    /// (the non-reentrant lock's, which refuses a second hold); null: that one.
    explicit ReentrantLockKind(bool announces = true, bool lists_waiters = true,
                               const Script* acquire_script = nullptr)
        : announces_(announces), lists_waiters_(announces && lists_waiters), acquire_script_(acquire_script) {}

    std::string_view noun() const override { return "lock"; }
    AcquireRequest acquire(ClientCore& core, const std::string& name, const std::string& owner,
                           std::chrono::milliseconds lease, bool try_once) const override;
    void release(ClientCore& core, const std::string& name, const std::string& owner, const std::string& lease_ms,
                 ReplyHandler done) const override;
    void force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const override;
    const Script& renew() const override;

private:
    bool announces_;
    bool lists_waiters_;
    const Script* acquire_script_;
};

/// The RLock's kind.
const LockKind& reentrant_lock_kind();

}  // namespace holdfast::detail
