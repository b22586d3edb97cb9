#include "transport/waiter_list.hpp"

namespace holdfast::detail {

WaiterList::Link::~Link() {
    if (WaiterList* list = list_.load(std::memory_order_acquire)) list->remove(*this);
}

// Nothing is listed after close(); a waiter still listed leaves, so that it
// never reaches for a list that is gone.
WaiterList::~WaiterList() {
    std::lock_guard lock(mutex_);
    while (head_.next_ && head_.next_ != &head_) unlink(*head_.next_);
}

bool WaiterList::add(Link& link, const std::shared_ptr<ChannelListener>& waiter) {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    if (link.next_) return true;
    if (!head_.next_) head_.next_ = head_.prev_ = &head_;
    link.list_.store(this, std::memory_order_release);
    link.waiter_ = waiter;
    link.prev_ = head_.prev_;
    link.next_ = &head_;
    head_.prev_->next_ = &link;
    head_.prev_ = &link;
    ++size_;
    return true;
}

void WaiterList::remove(Link& link) {
    std::lock_guard lock(mutex_);
    unlink(link);
}

std::vector<std::shared_ptr<ChannelListener>> WaiterList::close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    std::vector<std::shared_ptr<ChannelListener>> alive;
    alive.reserve(size_);
    while (head_.next_ && head_.next_ != &head_) {
        Link& link = *head_.next_;
        if (auto waiter = link.waiter_.lock()) alive.push_back(std::move(waiter));
        unlink(link);
    }
    return alive;
}

std::size_t WaiterList::size() {
    std::lock_guard lock(mutex_);
    return size_;
}

void WaiterList::unlink(Link& link) {
    if (!link.next_) return;
    link.prev_->next_ = link.next_;
    link.next_->prev_ = link.prev_;
    link.prev_ = link.next_ = nullptr;
    link.waiter_.reset();
    --size_;
    // Last: a waiter's destructor that finds no list may then run at once,
    // on another thread, and nothing here touches the link after it.
    link.list_.store(nullptr, std::memory_order_release);
}

}  // namespace holdfast::detail
