// The transport's list of waiters to tell at shutdown, on its own: linked
// through each waiter, closed once, and safe against a waiter that goes
// while listed. No server.
#include "transport/waiter_list.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace holdfast::detail {
namespace {

class Named : public ChannelListener {
public:
    explicit Named(std::string name) : name(std::move(name)) {}
    void on_subscribed() override {}
    void on_message(std::string_view) override {}
    void on_closed() override {}
    void on_refused(const Failure&) override {}

    const std::string name;
    WaiterList::Link listed;
};

std::vector<std::string> names(const std::vector<std::shared_ptr<ChannelListener>>& waiters) {
    std::vector<std::string> out;
    for (const auto& w : waiters) out.push_back(static_cast<const Named&>(*w).name);
    return out;
}

TEST(WaiterList, ClosingGivesTheListedWaitersInOrderAndRefusesLaterOnes) {
    WaiterList list;
    auto a = std::make_shared<Named>("a"), b = std::make_shared<Named>("b"), c = std::make_shared<Named>("c");
    EXPECT_TRUE(list.add(a->listed, a));
    EXPECT_TRUE(list.add(b->listed, b));
    EXPECT_TRUE(list.add(b->listed, b));  // listed once
    EXPECT_TRUE(list.add(c->listed, c));
    list.remove(b->listed);
    list.remove(b->listed);  // a no-op once unlisted
    EXPECT_EQ(list.size(), 2u);
    EXPECT_EQ(names(list.close()), (std::vector<std::string>{"a", "c"}));
    EXPECT_EQ(list.size(), 0u);
    EXPECT_FALSE(list.add(b->listed, b));
    EXPECT_TRUE(list.close().empty());
}

TEST(WaiterList, AWaiterDroppedWhileListedLeavesTheList) {
    WaiterList list;
    auto a = std::make_shared<Named>("a"), b = std::make_shared<Named>("b");
    list.add(a->listed, a);
    list.add(b->listed, b);
    a.reset();
    EXPECT_EQ(list.size(), 1u);
    EXPECT_EQ(names(list.close()), (std::vector<std::string>{"b"}));
}

// A waiter that left, or that the list let go at closing, may outlive the
// list (the last reference dropped on a caller's thread after the client is
// gone): it does not reach for it (AddressSanitizer would tell).
TEST(WaiterList, AWaiterOutlivesTheListItLeft) {
    auto left = std::make_shared<Named>("left"), closed = std::make_shared<Named>("closed"),
         listed = std::make_shared<Named>("listed");
    {
        auto list = std::make_unique<WaiterList>();
        list->add(left->listed, left);
        list->add(closed->listed, closed);
        list->remove(left->listed);
        EXPECT_EQ(names(list->close()), (std::vector<std::string>{"closed"}));
        WaiterList never_closed;
        never_closed.add(listed->listed, listed);
    }
    left.reset();
    closed.reset();
    listed.reset();
}

// Waiters come and go on other threads while the list closes: each is either
// given by close() alive or gone from the list, never half of each (run under
// ThreadSanitizer by the concurrency tests).
TEST(WaiterList, WaitersGoingOnOtherThreadsWhileItClosesAreNeverGivenHalfDestroyed) {
    // Rounds: the race is at the one close() of each.
    for (int round = 0; round < 8; ++round) {
        WaiterList list;
        std::vector<std::thread> threads;
        std::atomic<bool> closed{false};
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                std::vector<std::shared_ptr<Named>> kept(32);
                for (int i = 0; i < 4000; ++i) {
                    auto w = std::make_shared<Named>("w");
                    list.add(w->listed, w);  // refused once closed
                    if (i % 3 == 0) list.remove(w->listed);
                    kept[i % kept.size()] = std::move(w);  // drops an older one, listed or not
                }
                while (!closed) std::this_thread::yield();  // the last kept are listed till then
            });
        while (list.size() < 40) std::this_thread::yield();
        const auto given = list.close();
        closed = true;
        for (auto& t : threads) t.join();
        EXPECT_FALSE(given.empty());
        for (const auto& w : given) EXPECT_EQ(static_cast<const Named&>(*w).name, "w");
        EXPECT_EQ(list.size(), 0u);
    }
}

}  // namespace
}  // namespace holdfast::detail
