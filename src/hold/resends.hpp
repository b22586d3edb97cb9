// Releases waiting to be sent again (hold/release_hold.cpp): those no
// replica confirmed, and those of a last hold that got no reply. The one way
// a release reaches the server after its caller was told how it went. Kept per hold (key and hold field) so that a re-send never touches a
// hold its owner took after the release it repeats:
//
// - an acquire of the hold pauses its re-send before the acquire's first
//   attempt is sent (acquire_hold), and drops it once the acquire took the
//   hold (a hold a failover brings back beside the new one is then one the
//   server counts and the caller does not, which the owner's last release
//   gives back: primitive/release_verdict.hpp);
// - a re-send is sent under the registry's lock, once it checked that it is
//   still wanted, so an acquire that starts later is submitted behind it, on
//   the same connection (a key's commands always are), and its script goes
//   whole (Transport::InOrder): the server runs them in that order.
//
// No I/O: tests/hold/resends_test.cpp walks its interleavings.
// Thread safety: any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace holdfast::detail {

class Resends {
public:
    using Id = std::uint64_t;  ///< 0: none

    /// A release of the hold (`key`, hold `field`) to be sent again. Replaces an older re-send of the hold, which this
    /// release covers. `hurry` makes its next round come now (hurry_all()).
    Id add(const std::string& key, const std::string& field, std::function<void()> hurry = {});

    /// Before an acquire of the hold sends its first attempt: pauses the
    /// hold's re-send, if there is one, until acquire_ended(). Returns its id
    /// (0: none, and nothing to end). Cheap when no re-send is pending.
    Id acquiring(const std::string& key, const std::string& field);

    /// The acquire for which acquiring() paused re-send `id` ended. `took`:
    /// the owner holds the lock again, and the re-send is dropped. Otherwise
    /// it goes on once no acquire of the hold is under way.
    void acquire_ended(const std::string& key, const std::string& field, Id id, bool took);

    enum class Turn {
        sent,     ///< `send` ran: the release is submitted
        paused,   ///< an acquire of the hold is under way: try again later
        dropped,  ///< replaced, or the owner took the lock again: stop
    };
    /// Re-send `id`'s turn: runs `send` (which must submit its command before
    /// it returns) under the registry's lock, if the re-send is still wanted
    /// and no acquire of its hold is under way.
    Turn send(const std::string& key, const std::string& field, Id id, const std::function<void()>& send);

    /// Re-send `id` is over: confirmed, or the lease it guarded ended.
    void finished(const std::string& key, const std::string& field, Id id);

    /// The client is closing: every pending re-send's next round now, not
    /// after its pause, and the rounds after it soon (hurried()).
    void hurry_all();
    bool hurried() const { return hurried_.load(std::memory_order_relaxed); }
    /// Waits until every re-send still pending is one an acquire pauses (none
    /// at all, most often), or until `until`. Whether they were.
    bool settle(std::chrono::steady_clock::time_point until);

    /// Re-sends pending (tests check nothing is left behind).
    std::size_t size() const { return size_.load(std::memory_order_acquire); }

private:
    struct Pending {
        Id id = 0;
        int acquiring = 0;  // acquires of the hold under way
        std::function<void()> hurry;
    };
    using Hold = std::pair<std::string, std::string>;

    void changed();  // under mutex_: size_ kept, settle() told

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<Hold, Pending> pending_;
    std::atomic<std::size_t> size_{0};  // pending_.size(), read without the lock
    std::atomic<bool> hurried_{false};
    Id next_id_ = 1;
};

}  // namespace holdfast::detail
