// The local waiters of one release channel, in the order they joined, and
// what a message there means for them: how many wake-ups it is (the
// channel's meaning, per primitive), handed out in join order. A waiter
// decides whether it uses a wake-up (its acquire machine); one it declines,
// or passes on later, goes down the list and never back up. No I/O: the
// queue is the channel's one listener on the subscriber.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "transport/channel_listener.hpp"

namespace holdfast::detail {

namespace wakes {
/// A message that wakes every waiter.
inline constexpr std::size_t all = static_cast<std::size_t>(-1);
/// A message that names the one waiter it wakes (primitive/names.hpp,
/// waiter_named_in()): the next message, the `0` that follows the name,
/// wakes only the waiters that are not listed.
inline constexpr std::size_t named = static_cast<std::size_t>(-2);
}  // namespace wakes

/// Message policy of a release channel: how many waiters a payload wakes
/// (wakes::all, wakes::named, or a count).
using Wakes = std::size_t (*)(std::string_view payload);

/// A waiter hears its channel's events as a listener does, but for the
/// messages: those come as wake-ups, through the queue.
class Waiter : public ChannelListener {
public:
    /// A wake-up, offered in join order: true uses it, false passes it on to
    /// the next waiter.
    virtual bool on_wake() = 0;
    /// The id under which a release may name this waiter (0: it is not listed);
    /// read once, when it joins a queue.
    virtual std::uint64_t waiter_id() const { return 0; }
    /// A release named a waiter in another process (or one gone): the lock
    /// was promised to it. Told to the first listed waiter of a queue only.
    virtual void on_named_elsewhere() {}

private:
    void on_message(std::string_view) final {}
};

/// What a queue does with a name none of its waiters answers to.
using Unclaimed = std::function<void(std::uint64_t waiter_id)>;

/// Io thread only. Waiters may join and leave while the queue calls them.
class WaitQueue final : public ChannelListener {
public:
    explicit WaitQueue(Wakes wakes) : wakes_(wakes) {}

    /// Told each name no waiter here has (a waiter of this client that left
    /// without unlisting, its promise to pass on); the first one given is
    /// kept while the queue lives.
    void on_unclaimed(Unclaimed unclaimed) {
        if (unclaimed && !unclaimed_) unclaimed_ = std::move(unclaimed);
    }
    /// Has its hook: a waiter need not make one.
    bool hears_unclaimed() const { return static_cast<bool>(unclaimed_); }

    /// Adds `waiter` at the end; `subscribed`: the channel is listened to
    /// already, so it is told on_subscribed() at once.
    void join(std::shared_ptr<Waiter> waiter, bool subscribed);
    /// Takes `waiter` out (no-op if it is not in): it is offered nothing more.
    void leave(const Waiter* waiter);
    bool empty() const { return waiters_.empty(); }
    /// The subscriber let it go (closed, refused).
    bool off_channel() const { return let_go_; }
    std::size_t size() const { return waiters_.size(); }

    /// Offers `count` wake-ups (wakes::all: one to each) in join order, as a
    /// message would; a waiter that declines passes its one on.
    void hand_out(std::size_t count);
    /// As hand_out(), to the waiters that joined after `after` only (none if
    /// it left), so a wake-up passed on cannot circle back.
    void pass_on(std::size_t count, const Waiter* after);

    void on_message(std::string_view payload) override;
    /// Tells every waiter (a reconnect: messages may have been missed).
    void on_subscribed() override;
    /// Closed or refused, the subscriber let the queue go: the queue lets its
    /// waiters go, then tells each.
    void on_closed() override;
    void on_refused(const Failure& error) override;

private:
    struct Entry {
        std::uint64_t ticket;     // join order
        std::uint64_t waiter_id;  // the waiter's, kept here: a named release reads every entry, and a
                                  // million waiters' objects are far apart in memory
        std::shared_ptr<Waiter> waiter;
    };

    /// Offers `count` wake-ups to the waiters after ticket `from` that were
    /// there when the offer began; `unlisted_only`: to those with no waiter id.
    void offer(std::size_t count, std::uint64_t from, bool unlisted_only = false);
    /// A release named waiter `id`: woken if it is here; else the first
    /// listed waiter is told (and the unclaimed hook, with the id).
    void named(std::uint64_t id);
    /// Calls `tell` on each waiter there now, in join order.
    template <class Tell>
    void each(Tell tell);
    /// The first waiter after ticket `from`, if it joined before ticket `end`.
    Entry* next(std::uint64_t from, std::uint64_t end);
    /// Empties the queue, then tells each former waiter.
    template <class Tell>
    void let_go(Tell tell);

    const Wakes wakes_;
    Unclaimed unclaimed_;
    std::vector<Entry> waiters_;  // by ticket
    std::uint64_t next_ticket_ = 1;
    bool after_name_ = false;  // the last message named a waiter
    bool let_go_ = false;
};

}  // namespace holdfast::detail
