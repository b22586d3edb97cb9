// The waiters a transport tells at shutdown (Transport::add_waiter), so that
// each ends, and leaves its queue, while the connections still carry what it
// sends on the way out. A waiter is linked in through a Link it owns: listing
// one costs no allocation, and a million waiters no map of a million nodes.
// Any thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/channel_listener.hpp"

namespace holdfast::detail {

class WaiterList {
public:
    /// A waiter's place in the list; a waiter dropped while listed leaves it.
    class Link {
    public:
        Link() = default;
        Link(const Link&) = delete;
        Link& operator=(const Link&) = delete;
        ~Link();

    private:
        friend class WaiterList;
        // Set while listed: a waiter destroyed after leaving (on another
        // thread, the client gone by then) does not reach for the list.
        std::atomic<WaiterList*> list_{nullptr};
        Link* prev_ = nullptr;  // both null: not listed
        Link* next_ = nullptr;
        // Locked at shutdown: a waiter being destroyed is skipped, not called.
        std::weak_ptr<ChannelListener> waiter_;
    };

    WaiterList() = default;
    ~WaiterList();
    WaiterList(const WaiterList&) = delete;
    WaiterList& operator=(const WaiterList&) = delete;

    /// Lists `waiter` through its `link` (a no-op if listed); false once closed.
    bool add(Link& link, const std::shared_ptr<ChannelListener>& waiter);
    /// Unlists it; a no-op if not listed.
    void remove(Link& link);
    /// No waiter is listed from now on: returns those listed and still
    /// alive, in the order they were listed, and unlists them all.
    std::vector<std::shared_ptr<ChannelListener>> close();

    /// Waiters listed, for tests.
    std::size_t size();

private:
    void unlink(Link& link);

    std::mutex mutex_;
    Link head_;  // head_.next_ the first, head_.prev_ the last; itself when empty
    bool closed_ = false;
    std::size_t size_ = 0;
};

}  // namespace holdfast::detail
