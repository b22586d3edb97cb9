// The registry of re-sends on its own (hold/resends.hpp): no server, no clock.
// Each interleaving of an owner's acquire with the re-send of its last
// release: the re-send is never sent while the acquire may take the hold, and
// never again once it took it.
#include "hold/resends.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace holdfast::detail {
namespace {

using Turn = Resends::Turn;
using namespace std::chrono_literals;

const std::string key = "orders", owner = "uuid:7", other = "uuid:8";

// Takes a turn; whether `send` ran is what the turn says.
Turn turn(Resends& resends, Resends::Id id, const std::string& field = owner) {
    bool ran = false;
    const Turn t = resends.send(key, field, id, [&ran] { ran = true; });
    EXPECT_EQ(ran, t == Turn::sent);
    return t;
}

TEST(Resends, WithNothingPendingAnAcquirePausesNothing) {
    Resends resends;
    EXPECT_EQ(resends.acquiring(key, owner), 0u);
    resends.acquire_ended(key, owner, 0, true);  // nothing to end
    EXPECT_EQ(resends.size(), 0u);
}

TEST(Resends, APendingReSendIsSentUntilFinished) {
    Resends resends;
    const auto id = resends.add(key, owner);
    EXPECT_EQ(turn(resends, id), Turn::sent);
    EXPECT_EQ(turn(resends, id), Turn::sent);  // unconfirmed: its next round
    resends.finished(key, owner, id);
    EXPECT_EQ(turn(resends, id), Turn::dropped);
    EXPECT_EQ(resends.size(), 0u);
}

// The owner locks again before the re-send's turn: paused while the acquire
// runs; dropped once it took the lock, and going on if it did not (refused,
// timed out, failed: the hold a failover may bring back still goes).
TEST(Resends, AnAcquirePausesTheReSendAndEndsItIfItTookTheHold) {
    for (const bool took : {true, false}) {
        SCOPED_TRACE(took ? "took the hold" : "did not take it");
        Resends resends;
        const auto id = resends.add(key, owner);
        const auto paused = resends.acquiring(key, owner);
        ASSERT_EQ(paused, id);
        EXPECT_EQ(turn(resends, id), Turn::paused);
        resends.acquire_ended(key, owner, paused, took);
        EXPECT_EQ(turn(resends, id), took ? Turn::dropped : Turn::sent);
        EXPECT_EQ(resends.size(), took ? 0u : 1u);
    }
}

TEST(Resends, EveryAcquireUnderWayPausesIt) {
    Resends resends;
    const auto id = resends.add(key, owner);
    const auto first = resends.acquiring(key, owner), second = resends.acquiring(key, owner);
    resends.acquire_ended(key, owner, first, false);
    EXPECT_EQ(turn(resends, id), Turn::paused);
    resends.acquire_ended(key, owner, second, false);
    EXPECT_EQ(turn(resends, id), Turn::sent);
}

TEST(Resends, AcquiresOfOtherOwnersOrKeysDoNotPauseIt) {
    Resends resends;
    const auto id = resends.add(key, owner);
    EXPECT_EQ(resends.acquiring(key, other), 0u);
    EXPECT_EQ(resends.acquiring("invoices", owner), 0u);
    EXPECT_EQ(turn(resends, id), Turn::sent);
}

// The owner's next unconfirmed release of the hold covers the older one,
// whose acquires (the owner's, before that release) pause nothing now.
TEST(Resends, ANewerReleaseReplacesTheReSend) {
    Resends resends;
    const auto old_id = resends.add(key, owner);
    const auto paused = resends.acquiring(key, owner);
    const auto new_id = resends.add(key, owner);
    EXPECT_NE(new_id, old_id);
    EXPECT_EQ(turn(resends, old_id), Turn::dropped);
    EXPECT_EQ(turn(resends, new_id), Turn::sent);
    resends.acquire_ended(key, owner, paused, true);  // the old one's acquire: changes nothing
    EXPECT_EQ(turn(resends, new_id), Turn::sent);
    resends.finished(key, owner, old_id);  // nor does the old one's end
    EXPECT_EQ(resends.size(), 1u);
}

// A turn taken first holds the registry until its command is submitted: an
// acquire starting meanwhile returns only after, so its first attempt goes
// behind the re-send on the connection.
TEST(Resends, AnAcquireStartingDuringATurnWaitsUntilItsCommandIsSubmitted) {
    Resends resends;
    const auto id = resends.add(key, owner);
    std::atomic<bool> submitted{false}, acquire_returned_early{false};
    std::thread acquire;
    const Turn t = resends.send(key, owner, id, [&] {
        acquire = std::thread([&] {
            resends.acquiring(key, owner);
            acquire_returned_early = !submitted.load();
        });
        // Room for an acquire that does not wait to get in first.
        std::this_thread::sleep_for(100ms);
        submitted = true;
    });
    acquire.join();
    EXPECT_EQ(t, Turn::sent);
    EXPECT_FALSE(acquire_returned_early) << "an acquire got ahead of a re-send being submitted";
    EXPECT_EQ(turn(resends, id), Turn::paused);
}

}  // namespace
}  // namespace holdfast::detail
