// holdfast::RedLock: a lock held by a quorum of N independent Redis servers.
#pragma once

#include <concepts>
#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

#include "holdfast/export.hpp"
#include "holdfast/lock_group.hpp"

namespace holdfast {

namespace detail {
class RedLockState;
}

/// The Redlock algorithm over N independent servers: one Lock per server (any
/// kind, usually the same name; each on its own Client), held when a quorum
/// of N/2 + 1 of them is. Redisson's RedissonRedLock, and with SimpleLocks the
/// lock of go-redsync and node-redlock over N servers, on the same keys.
///
/// Acquiring: one attempt (try once, lease L) goes to every server at once.
/// As soon as a quorum is taken, the validity is L - elapsed - drift (drift =
/// L / 100 + 2 ms); if positive the RedLock is held, else the round failed.
/// As soon as a quorum can no longer be reached the round failed. A failed
/// round releases on every server that did not refuse (taken, failed, or no
/// reply yet) and, if the caller may wait, another round follows after a
/// backoff (1 ms doubling with jitter to 128 ms). When so many servers *fail*
/// (errors, not refusals) that no quorum is possible, the acquisition ends
/// with an error naming each failed server and why.
///
/// Leases: without an explicit lease, L is the first lock's client's
/// Config::lock_watchdog_timeout and the RedLock renews the hold on every
/// server every L/3 (the members' clients' watchdogs are not used). A renewal
/// round that reaches a quorum extends the validity; one that cannot (servers
/// down, keys gone) marks the hold lost. With an explicit lease nothing is
/// renewed; validity() tells how long is left. Either way, when the validity
/// runs out unrenewed (a round still out does not count), the hold is lost
/// at once and lease_lost_token() is requested, before another client can
/// have taken a quorum.
///
/// release() releases on every server; it succeeds once a quorum confirmed
/// the release. It throws NotOwnerError if the hold was lost, or when too few
/// servers knew the owner; a ConnectionError / ServerError naming the servers
/// when too many failed. unlock() does the same and reports instead of throwing.
///
/// Errors, owners, thread safety: see LockGroup. Besides, std::invalid_argument
/// when two locks are on the same server (they would not be independent).
class HOLDFAST_EXPORT RedLock : public LockGroup {
public:
    explicit RedLock(std::vector<std::reference_wrapper<Lock>> locks);
    RedLock(std::initializer_list<std::reference_wrapper<Lock>> locks)
        : RedLock(std::vector<std::reference_wrapper<Lock>>(locks)) {}
    template <std::derived_from<Lock>... Locks>
        requires(sizeof...(Locks) > 0)
    explicit RedLock(Locks&... locks) : RedLock(std::vector<std::reference_wrapper<Lock>>{locks...}) {}
    /// Stops renewing (held locks then expire with their lease).
    ~RedLock() override;

    /// Servers that must hold the lock: N / 2 + 1.
    std::size_t quorum() const;

    /// Time left on the calling thread's hold as this process's clock sees it:
    /// the lease minus the time the last successful acquisition or renewal
    /// round took, minus the drift. nullopt when it holds none, or lost it.
    std::optional<Duration> validity() const;
    std::optional<Duration> validity(const std::string& owner) const;

protected:
    void acquire(Owners owners, std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop,
                 Acquired done) override;
    void start_release(Owners owners, Released done) override;
    std::stop_token lost(const Owners& owners) const override;
    /// A quorum: is_held_by() asks the servers, not validity().
    std::size_t holds_needed() const override { return quorum(); }

private:
    std::shared_ptr<detail::RedLockState> state_;
};

}  // namespace holdfast
