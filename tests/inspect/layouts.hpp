// Layouts the inspect and status tests both look at, set up by the real primitives.
#pragma once

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "redis_fixture.hpp"

namespace holdfast::testing {

/// Read-locks `rw` twice for the calling thread and once for a new owner of
/// `client`, which it returns.
inline std::string hold_reads(Client& client, ReadWriteLock& rw) {
    rw.read_lock().lock();
    rw.read_lock().lock();
    std::string other = client.new_owner();
    rw.read_lock().async_lock(other).get();
    return other;
}

/// A fair lock held by one client with a holdfast waiter from another client
/// queued behind it, and Redisson waiters appended by hand.
class QueuedFairLock {
public:
    QueuedFairLock(const Config& config, support::SyncRedis& raw, const std::string& name)
        : raw_(raw), queue_("redisson_lock_queue:{" + name + "}"), timeouts_("redisson_lock_timeout:{" + name + "}"),
          holder_client_(config),
          waiter_client_(config), held_(holder_client_, name), wanted_(waiter_client_, name),
          holder_(holder_client_.current_owner()), waiter_(waiter_client_.new_owner()) {
        held_.lock();
        waiting_ = wanted_.async_lock(waiter_);
        ready_ = eventually([&] { return raw_.integer({"LLEN", queue_}) == 1; });
    }

    /// Leaves the queue as it found it: the hand-written waiters go, the
    /// holdfast waiter gets the lock and releases it.
    ~QueuedFairLock() {
        for (const auto& owner : appended_) raw_.command({"LREM", queue_, "0", owner});
        held_.unlock();
        EXPECT_EQ(waiting_.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        wanted_.async_release(waiter_).get();
    }

    /// True once the holdfast waiter is queued.
    bool ready() const { return ready_; }
    const std::string& holder() const { return holder_; }
    const std::string& waiter() const { return waiter_; }

    /// Appends `owner` as RFairLock queues a waiter, with its deadline in
    /// epoch ms (or none).
    void append(const std::string& owner, std::optional<std::int64_t> deadline_ms) {
        raw_.command({"RPUSH", queue_, owner});
        if (deadline_ms)
raw_.command({"ZADD", timeouts_, std::to_string(*deadline_ms), owner});
        appended_.push_back(owner);
    }

private:
    support::SyncRedis& raw_;
    std::string queue_, timeouts_;
    Client holder_client_, waiter_client_;
    FairLock held_, wanted_;
    std::string holder_, waiter_;
    std::future<bool> waiting_;
    bool ready_ = false;
    std::vector<std::string> appended_;
};

}  // namespace holdfast::testing
