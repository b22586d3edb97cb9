// holdfast::MultiValueLock: Redisson's group lock (RedissonFasterMultiLock,
// from getMultiLock(group, values)), all of a set of values of one group.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "holdfast/client.hpp"
#include "holdfast/completion.hpp"
#include "holdfast/export.hpp"
#include "holdfast/lock.hpp"

namespace holdfast {

/// Holds every value of a set, or none, within one group: a Redis hash named
/// `group` in which each value held has a field (the value's hash) naming its
/// owner, beside that owner's expire time and hold count. Taking the set and
/// giving it back are one script call each however many values it has, and
/// on a cluster the group lives in one slot. Two sets of one group exclude
/// each other only where they share a value: "seat 12A" and "seat 12B" of
/// group "flight:LH401" are taken independently, "12A and 12B" waits for both.
///
/// Named so it does not clash with MultiLock (all of N separate Lock objects,
/// on any servers) and LockGroup (their base): this is one object over one
/// hash, whose members are values, not locks.
///
/// Redisson: a Java client's RedissonClient.getMultiLock(group, values)
/// shares the lock when its codec writes each value as the bytes holdfast is
/// given: StringCodec (and LongCodec, IntegerCodec, DoubleCodec) for string
/// values; not the default Kryo5Codec, which writes a class tag first
/// (docs/redisson-layout.md, "Group lock", says how to match it).
///
/// Leases, watchdog, waiting, owners, durations, lease-lost token, the
/// release rule (release() and async_release() checked, unlock() the quiet
/// Lockable face: docs/design.md, "Releasing") and the Lockable /
/// TimedLockable requirements: as Lock's. A hold is reentrant per set: an owner may take the same set again
/// (each value counts its holds), and sets of one owner may overlap. A
/// release frees the values whose count reaches 0 and wakes every waiter of
/// the group, since any of them may wait for a value it freed.
///
/// Errors: std::invalid_argument for an empty group or no values; otherwise
/// as Lock's (WrongTypeError when `group` holds another type).
///
/// Thread safety: an object may be shared by threads; it holds the group, the
/// values' fields and a reference to its Client, which must outlive it.
class HOLDFAST_EXPORT MultiValueLock : public detail::TimedTries<MultiValueLock> {
public:
    using Duration = std::chrono::milliseconds;

    /// `values`: at least one; each is hashed as its bytes, a value given
    /// twice counts once.
    MultiValueLock(Client& client, std::string group, const std::vector<std::string>& values);

    /// The hash's key: Config::key_prefix, then the group given.
    const std::string& group() const { return group_; }
    /// The set's fields in the hash, sorted.
    const std::vector<std::string>& fields() const { return fields_; }
    /// The field a value has in any group (22 characters): Redisson's
    /// HighwayHash-128 of its bytes, in Base64 (docs/redisson-layout.md).
    static std::string field_of(std::string_view value);

    void lock();
    void lock(Duration lease);
    template <class Rep, class Period>
    void lock(const std::chrono::duration<Rep, Period>& lease) {
        lock(detail::to_ms(lease));
    }
    bool lock(std::stop_token stop);
    template <class Rep, class Period>
    bool lock(const std::chrono::duration<Rep, Period>& lease, std::stop_token stop) {
        return lock_ms(detail::to_ms(lease), std::move(stop));
    }
    bool try_lock();
    // try_lock_for(wait[, lease | stop]), try_lock_until(deadline): see detail::TimedTries.
    /// Never throws (but std::logic_error on the client's loop thread); as Lock::unlock().
    void unlock();
    /// unlock(), checked: NotOwnerError when the calling thread does not hold
    /// every value of the set (the values it did hold are given back all the
    /// same), LeaseLostError, ServerError, ConnectionError: as Lock::release().
    void release();

    /// Frees every value of the set, whoever holds it, and wakes the group's
    /// waiters. True if some value was held.
    bool force_unlock();
    /// Whether some value of the set is held, by anyone.
    bool is_locked() const;
    bool is_held_by_current_thread() const;
    /// Whether `owner` holds every value of the set.
    bool is_held_by(const std::string& owner) const;
    /// Holds of the set by the calling thread (0 if it does not hold all of it).
    std::int64_t hold_count() const;
    std::int64_t hold_count(const std::string& owner) const;

    /// As Lock's: requested when the hold is lost, or its local lease deadline passes unrenewed.
    std::stop_token lease_lost_token() const;
    std::stop_token lease_lost_token(const std::string& owner) const;

    /// Async forms with an explicit owner, as Lock's.
    std::future<bool> async_try_lock(std::string owner, Duration wait = Duration::zero(),
                                     std::optional<Duration> lease = std::nullopt, std::stop_token stop = {});
    std::future<bool> async_lock(std::string owner, std::optional<Duration> lease = std::nullopt,
                                 std::stop_token stop = {});
    std::future<void> async_release(std::string owner);
    std::future<bool> async_force_unlock();
    std::future<bool> async_is_locked() const;
    std::future<std::int64_t> async_hold_count(std::string owner) const;

    /// Callback forms, as Lock's (docs/async.md; holdfast/asio.hpp adapts them to Asio).
    void async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                        Completion<bool> done);
    void async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop, Completion<bool> done);
    void async_release(std::string owner, Completion<> done);
    void async_force_unlock(Completion<bool> done);
    void async_is_locked(Completion<bool> done) const;
    void async_hold_count(std::string owner, Completion<std::int64_t> done) const;

private:
    friend class detail::TimedTries<MultiValueLock>;

    bool try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop);
    bool lock_ms(Duration lease, std::stop_token stop);
    /// nullopt wait: as long as it takes; true when taken.
    bool acquire_blocking(std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop);
    void acquire(std::string owner, std::optional<Duration> wait, std::optional<Duration> lease,
                 std::stop_token stop, Completion<bool> done);
    /// The set, then `owner`: how the scripts, the ledger and the watchdog name a hold.
    std::string hold_name(const std::string& owner) const;

    Client* client_;
    std::string group_;
    std::vector<std::string> fields_;
};

}  // namespace holdfast
