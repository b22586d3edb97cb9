// The waiters' one timer on its own: alarms ring in time order, once, and
// can be moved and cancelled; ring() is driven by hand, then the real timer
// on a running loop. No server.
#include "primitive/alarm_clock.hpp"

#include <gtest/gtest.h>

#include <asio.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace holdfast::detail {
namespace {

using Clock = AlarmClock::Clock;
using std::chrono::milliseconds;

// Logs its name when rung; runs `then` from on_alarm() if given.
class Sleeper final : public AlarmClock::Sleeper {
public:
    Sleeper(std::string name, std::vector<std::string>& log) : name(std::move(name)), log_(log) {}
    void on_alarm(Clock::time_point) override {
        log_.push_back(name);
        if (then) then();
    }
    const std::string name;
    std::function<void()> then;

private:
    std::vector<std::string>& log_;
};

class AlarmClockTest : public ::testing::Test {
protected:
    std::shared_ptr<Sleeper> sleeper(const std::string& name) { return std::make_shared<Sleeper>(name, log); }

    asio::io_context io;
    AlarmClock clock{io};
    std::vector<std::string> log;
    const Clock::time_point t0 = Clock::now();
};

TEST_F(AlarmClockTest, RingsWhatIsDueInTimeOrderAndNothingElse) {
    auto a = sleeper("a"), b = sleeper("b"), c = sleeper("c");
    clock.set(c, t0 + milliseconds(30));
    clock.set(a, t0 + milliseconds(10));
    clock.set(b, t0 + milliseconds(20));
    clock.ring(t0 + milliseconds(25));
    EXPECT_EQ(log, (std::vector<std::string>{"a", "b"}));
    EXPECT_FALSE(AlarmClock::is_set(*a));
    EXPECT_TRUE(AlarmClock::is_set(*c));
    EXPECT_EQ(clock.size(), 1u);
    clock.ring(t0 + milliseconds(25));  // rung once only
    EXPECT_EQ(log.size(), 2u);
    clock.ring(t0 + milliseconds(30));
    EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(clock.size(), 0u);
}

TEST_F(AlarmClockTest, SettingAgainMovesTheOneAlarmEarlierOrLater) {
    auto a = sleeper("a"), b = sleeper("b");
    clock.set(a, t0 + milliseconds(10));
    clock.set(b, t0 + milliseconds(20));
    clock.set(a, t0 + milliseconds(30));  // later
    EXPECT_EQ(clock.size(), 2u);
    EXPECT_EQ(clock.due(*a), t0 + milliseconds(30));
    clock.ring(t0 + milliseconds(25));
    EXPECT_EQ(log, (std::vector<std::string>{"b"}));
    clock.set(a, t0 + milliseconds(5));  // earlier
    clock.ring(t0 + milliseconds(5));
    EXPECT_EQ(log, (std::vector<std::string>{"b", "a"}));
}

TEST_F(AlarmClockTest, ACancelledAlarmNeverRingsAndLetsItsSleeperGo) {
    auto a = sleeper("a"), b = sleeper("b");
    clock.set(a, t0 + milliseconds(10));
    clock.set(b, t0 + milliseconds(20));
    std::weak_ptr<Sleeper> gone = a;
    EXPECT_EQ(a.use_count(), 2);  // the clock keeps it while set
    clock.cancel(*a);
    clock.cancel(*a);  // a no-op once unset
    a.reset();
    EXPECT_TRUE(gone.expired());
    clock.ring(t0 + milliseconds(20));
    EXPECT_EQ(log, (std::vector<std::string>{"b"}));
}

TEST_F(AlarmClockTest, ASleeperMaySetItsAlarmAgainOrCancelAnotherWhenRung) {
    auto a = sleeper("a"), b = sleeper("b"), c = sleeper("c");
    clock.set(a, t0 + milliseconds(10));
    clock.set(b, t0 + milliseconds(20));
    clock.set(c, t0 + milliseconds(40));
    bool again = true;
    a->then = [&] {
        if (!std::exchange(again, false)) return;
        clock.set(a, t0 + milliseconds(30));  // again, after b: due in this ring too
        clock.cancel(*c);
    };
    clock.ring(t0 + milliseconds(50));
    EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "a"}));
    EXPECT_EQ(clock.size(), 0u);
}

// Many alarms set, moved and cancelled in random order ring in time order,
// each once: the heap stays a heap through every kind of change.
TEST_F(AlarmClockTest, ThousandsOfAlarmsMovedAndCancelledRingInOrder) {
    std::minstd_rand random(7);
    std::vector<std::shared_ptr<Sleeper>> sleepers;
    std::vector<Clock::time_point> due;
    std::vector<bool> cancelled;
    for (int i = 0; i < 5000; ++i) {
        sleepers.push_back(sleeper(std::to_string(i)));
        due.push_back(t0 + milliseconds(random() % 100000));
        cancelled.push_back(false);
        clock.set(sleepers.back(), due.back());
    }
    for (int i = 0; i < 5000; ++i) {
        const auto n = random() % sleepers.size();
        if (random() % 3 == 0) {
            clock.cancel(*sleepers[n]);
            cancelled[n] = true;
        } else {
            due[n] = t0 + milliseconds(random() % 100000);
            cancelled[n] = false;
            clock.set(sleepers[n], due[n]);
        }
    }
    std::vector<std::pair<Clock::time_point, std::string>> expected;
    for (std::size_t i = 0; i < sleepers.size(); ++i)
        if (!cancelled[i]) expected.emplace_back(due[i], sleepers[i]->name);
    std::vector<Clock::time_point> rung_at;
    for (auto& s : sleepers) s->then = [&, name = s->name] { rung_at.push_back(due[std::stoul(name)]); };
    clock.ring(t0 + milliseconds(100000));
    ASSERT_EQ(log.size(), expected.size());
    EXPECT_TRUE(std::is_sorted(rung_at.begin(), rung_at.end()));
    std::vector<std::string> expected_names;
    for (auto& [at, name] : expected) expected_names.push_back(name);
    std::sort(expected_names.begin(), expected_names.end());
    std::sort(log.begin(), log.end());
    EXPECT_EQ(log, expected_names);
    EXPECT_EQ(clock.size(), 0u);
    EXPECT_LE(clock.capacity(), 4096u);  // let go as they went
}

// On a running loop the one timer rings each alarm when due, the earliest
// first, also when a sooner one comes after the timer was armed.
TEST_F(AlarmClockTest, TheTimerRingsEachAlarmWhenDue) {
    auto late = sleeper("late"), soon = sleeper("soon");
    const auto start = Clock::now();
    clock.set(late, start + milliseconds(60));
    clock.set(soon, start + milliseconds(20));  // re-arms the timer sooner
    std::vector<Clock::time_point> rung;
    soon->then = [&] { rung.push_back(Clock::now()); };
    late->then = [&] { rung.push_back(Clock::now()); };
    io.run_for(std::chrono::seconds(10));  // returns once no wait is pending
    EXPECT_EQ(log, (std::vector<std::string>{"soon", "late"}));
    ASSERT_EQ(rung.size(), 2u);
    EXPECT_GE(rung[0], start + milliseconds(20));
    EXPECT_GE(rung[1], start + milliseconds(60));
    EXPECT_EQ(clock.size(), 0u);
}

}  // namespace
}  // namespace holdfast::detail
