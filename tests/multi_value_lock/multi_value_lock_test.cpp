// MultiValueLock: Redisson's group layout, all of a set or none, reentrant
// per set, one release frees what it frees and wakes every waiter, the
// watchdog renews the set, and the faces Lock has.
#include "holdfast/asio.hpp"

#include <asio/use_future.hpp>

#include <future>
#include <map>
#include <thread>

#include "multi_value_lock/field.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Group = RedisTest;

const std::string a = detail::value_field("12A"), b = detail::value_field("12B"), c = detail::value_field("12C");

std::map<std::string, std::string> hash_of(support::SyncRedis& raw, const std::string& key) {
    std::map<std::string, std::string> fields;
    auto reply = raw.command({"HGETALL", key});
    for (std::size_t i = 0; i + 1 < reply->elements; i += 2) fields[reply->element[i]->str] = reply->element[i + 1]->str;
    return fields;
}

// `config` as ACL user `user` (created with `nopass`: any password passes).
Config as_user(Config config, const std::string& user) {
    config.username = user;
    config.password = "x";
    return config;
}

long long epoch_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

TEST_F(Group, TheHashIsRedissons) {
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A", "12B"});
    const std::string me = client.current_owner();
    const long long before = epoch_ms();
    seats.lock();
    const auto fields = hash_of(*raw, "flight");
    ASSERT_EQ(fields.size(), 6u);
    for (const std::string& field : {a, b}) {
        EXPECT_EQ(fields.at(field), me);
        EXPECT_EQ(fields.at(field + ":" + me + ":lock_count"), "1");
        const long long until = std::stoll(fields.at(field + ":" + me + ":expire_time"));
        EXPECT_GE(until, before + 30000 - 1000);  // the watchdog's 30 s, on the server's clock
        EXPECT_LE(until, epoch_ms() + 30000 + 1000);
    }
    const long long pttl = raw->integer({"PTTL", "flight"});
    EXPECT_GT(pttl, 25000);
    EXPECT_LE(pttl, 30000);
    EXPECT_EQ(raw->integer({"DBSIZE"}), 1);  // one hash, nothing else
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_lock__channel:{flight}"});
    seats.unlock();
    auto message = listener.read_reply();
    ASSERT_EQ(message->elements, 3u);
    EXPECT_EQ(std::string(message->element[2]->str), "1");  // every waiter of the group tries
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Group, AllOrNothingAndOnlyWhereSetsShareAValue) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"}), bc(client, "flight", {"12B", "12C"}),
        c_only(client, "flight", {"12C"});
    const std::string first = client.new_owner(), second = client.new_owner();
    ASSERT_TRUE(ab.async_try_lock(first).get());
    EXPECT_FALSE(bc.async_try_lock(second).get());
    EXPECT_EQ(hash_of(*raw, "flight").count(c), 0u);  // a refusal takes no value of the set
    EXPECT_TRUE(c_only.async_try_lock(second).get());  // disjoint: independent
    EXPECT_TRUE(ab.is_locked());
    EXPECT_TRUE(bc.is_locked());
    EXPECT_TRUE(ab.is_held_by(first));
    EXPECT_FALSE(bc.is_held_by(second));  // holds 12C, not 12B
    c_only.async_release(second).get();
    ab.async_release(first).get();
    EXPECT_FALSE(bc.is_locked());
    EXPECT_TRUE(bc.async_try_lock(second).get());
    bc.async_release(second).get();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Group, ReentrantPerSetAndOverlappingSetsOfOneOwner) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"}), bc(client, "flight", {"12B", "12C"});
    ab.lock();
    ab.lock();
    EXPECT_EQ(ab.hold_count(), 2);
    bc.lock();  // the same owner: 12B counts both sets' holds
    EXPECT_EQ(hash_of(*raw, "flight").at(b + ":" + client.current_owner() + ":lock_count"), "3");
    EXPECT_EQ(bc.hold_count(), 1);
    ab.release();
    EXPECT_EQ(ab.hold_count(), 1);
    ab.release();  // 12A freed; 12B still held by bc
    EXPECT_EQ(ab.hold_count(), 0);
    EXPECT_EQ(hash_of(*raw, "flight").count(a), 0u);
    EXPECT_TRUE(bc.is_held_by_current_thread());
    bc.release();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Group, AReleaseOfASetNotWhollyHeldGivesBackWhatItHeldAndThrows) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"});
    ab.lock();
    raw->command({"HDEL", "flight", b, b + ":" + client.current_owner() + ":expire_time"});  // 12B lost
    EXPECT_THROW(ab.release(), NotOwnerError);
    EXPECT_EQ(hash_of(*raw, "flight").count(a), 0u);  // 12A given back all the same
    EXPECT_THROW(ab.release(), NotOwnerError);
}

TEST_F(Group, EveryWaiterAReleaseFreedIsWokenAtOnce) {
    Client client(config());
    MultiValueLock all(client, "flight", {"12A", "12B", "12C"}), a_only(client, "flight", {"12A"}),
        c_only(client, "flight", {"12C"});
    const std::string holder = client.new_owner(), left = client.new_owner(), right = client.new_owner();
    ASSERT_TRUE(all.async_lock(holder).get());
    auto first = a_only.async_try_lock(left, 60s);
    auto second = c_only.async_try_lock(right, 60s);
    // Both asleep on the channel: the lease is 30 s, so only the message wakes them in time.
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{flight}") == 1; }));
    EXPECT_EQ(first.wait_for(200ms), std::future_status::timeout);
    all.async_release(holder).get();
    ASSERT_EQ(first.wait_for(10s), std::future_status::ready);
    ASSERT_EQ(second.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(first.get());
    EXPECT_TRUE(second.get());
    a_only.async_release(left).get();
    c_only.async_release(right).get();
}

TEST_F(Group, TheWatchdogRenewsTheWholeSetAndTellsItsLoss) {
    Config config_ = config();
    config_.lock_watchdog_timeout = std::chrono::milliseconds(1500);
    Client client(config_);
    MultiValueLock ab(client, "flight", {"12A", "12B"});
    ab.lock();
    std::stop_token lost = ab.lease_lost_token();
    ASSERT_TRUE(lost.stop_possible());
    const auto expire = b + ":" + client.current_owner() + ":expire_time";
    const long long first = std::stoll(hash_of(*raw, "flight").at(expire));
    // Renewed every half second: the expire time moves on, the hash lives past its first lease.
    ASSERT_TRUE(eventually([&] { return std::stoll(hash_of(*raw, "flight").at(expire)) > first + 400; }));
    std::this_thread::sleep_for(2s);  // past the first lease: held only if renewed
    EXPECT_TRUE(ab.is_held_by_current_thread());
    EXPECT_FALSE(lost.stop_requested());
    raw->command({"HDEL", "flight", b});  // one value gone: the set is lost
    EXPECT_TRUE(eventually([&] { return lost.stop_requested(); }));
    EXPECT_THROW(ab.release(), NotOwnerError);
}

TEST_F(Group, AnExplicitLeaseEndsTheHoldAndAnEndedHoldIsTakenOverCleanly) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"});
    const std::string first = client.new_owner(), second = client.new_owner();
    ASSERT_TRUE(ab.async_try_lock(first, 0ms, 300ms).get());
    EXPECT_LE(raw->integer({"PTTL", "flight"}), 300);
    // Past its lease the set is free, whatever the hash still says.
    ASSERT_TRUE(ab.async_try_lock(second, 5s).get());
    const auto fields = hash_of(*raw, "flight");
    EXPECT_EQ(fields.size(), 6u);  // the ended hold's fields went
    EXPECT_EQ(fields.count(a + ":" + first + ":lock_count"), 0u);
    EXPECT_THROW(ab.async_release(first).get(), NotOwnerError);
    ab.async_release(second).get();
}

TEST_F(Group, StopForceUnlockAndAsio) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"});
    const std::string first = client.new_owner(), second = client.new_owner();
    ASSERT_TRUE(ab.async_lock(first).get());
    std::stop_source stop;
    auto waiting = ab.async_lock(second, std::nullopt, stop.get_token());
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{flight}") == 1; }));
    stop.request_stop();
    expect_stopped_untaken({&waiting});
    auto taken = async_try_lock(ab, second, Lock::Duration(60000), asio::use_future);
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{flight}") == 1; }));
    EXPECT_TRUE(ab.force_unlock());
    ASSERT_EQ(taken.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(taken.get());
    EXPECT_TRUE(ab.is_held_by(second));
    EXPECT_THROW(ab.async_release(first).get(), NotOwnerError);
    async_release(ab, second, asio::use_future).get();
    EXPECT_FALSE(ab.force_unlock());
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(Group, StandardLockableWithAGuard) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"});
    {
        std::unique_lock guard(ab, std::defer_lock);
        ASSERT_TRUE(guard.try_lock_for(1s));
        EXPECT_TRUE(ab.is_held_by_current_thread());
    }
    EXPECT_FALSE(ab.is_locked());
}

TEST_F(Group, BadArgumentsAndAKeyOfAnotherType) {
    Client client(config());
    expect_invalid_argument([&] { MultiValueLock(client, "", {"x"}); }, "group must not be empty");
    expect_invalid_argument([&] { MultiValueLock(client, "flight", {}); }, "at least one value");
    raw->command({"SET", "flight", "not a hash"});
    MultiValueLock ab(client, "flight", {"12A"});
    EXPECT_THROW(ab.try_lock(), WrongTypeError);
    EXPECT_EQ(raw->string({"GET", "flight"}), "not a hash");
}

// A user who may take the set but not set its expiry is refused before
// anything is written: no value is left held without a lease.
TEST_F(Group, AnAclRefusalWritesNothing) {
    raw->command({"ACL", "SETUSER", "narrow", "on", "nopass", "~*", "&*", "+@all", "-pexpire"});
    Client client(as_user(config(), "narrow"));
    MultiValueLock ab(client, "flight", {"12A", "12B"});
    try {
        ab.try_lock();
        ADD_FAILURE() << "taken without the right to set its expiry";
    } catch (const ServerError& e) {
        EXPECT_EQ(e.code(), errc::no_permission);
        EXPECT_NE(std::string(e.what()).find("PEXPIRE"), std::string::npos) << e.what();
    }
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// A set whose release was refused keeps its values to its lease, unrenewed.
// A later set of the same owner sharing a value re-enters that value's hold,
// as a Lock re-enters a hold whose release was refused; the Lock's release
// then gives the re-entered hold back whole (release_verdict: give back the
// rest no caller knows of). So does the set's release: the shared value goes
// with it, instead of staying held (and extended by every later set that
// shares it) by an owner that believes it holds nothing. Found by
// `holdfast-check --primitive group --nemesis narrow-acl` (a lost release).
TEST_F(Group, AValueOfARefusedReleaseReEnteredByAnotherSetGoesWithThatSetsRelease) {
    using namespace std::chrono_literals;
    raw->command({"ACL", "SETUSER", "narrow", "on", "nopass", "~*", "&*", "+@all"});
    Client client(as_user(config(), "narrow"));
    // The Lock's behaviour, the one expected.
    Lock lock(client, "seat");
    ASSERT_TRUE(lock.try_lock_for(0s, 30s));
    raw->command({"ACL", "SETUSER", "narrow", "-del"});  // what the release of a last hold runs
    EXPECT_THROW(lock.release(), ServerError);
    raw->command({"ACL", "SETUSER", "narrow", "+del"});
    ASSERT_TRUE(lock.try_lock_for(0s, 30s));
    lock.release();
    EXPECT_FALSE(lock.is_locked());
    // The group's.
    MultiValueLock ac(client, "flight", {"12A", "12C"}), ab(client, "flight", {"12A", "12B"});
    ASSERT_TRUE(ac.try_lock_for(0s, 30s));
    raw->command({"ACL", "SETUSER", "narrow", "-hdel"});
    EXPECT_THROW(ac.release(), ServerError);
    raw->command({"ACL", "SETUSER", "narrow", "+hdel"});
    ASSERT_TRUE(ab.try_lock_for(0s, 30s));
    ab.release();
    EXPECT_EQ(hash_of(*raw, "flight").count(a), 0u) << "12A still held after the release of {12A, 12B}";
    EXPECT_EQ(hash_of(*raw, "flight").count(c), 1u);  // 12C: the refused hold's, to its lease
}

// An owner's sets that share a value: the release of one keeps the value for
// the others, counted as they hold it, and the last release frees it. With a
// set inside another ({12A} in {12A, 12B}), the smaller set's release leaves
// the value's count where no caller of the set believes in it: it must not
// be given back as a hold nobody knows of.
TEST_F(Group, AValueSharedWithTheOwnersOtherSetsStaysHeldForThem) {
    Client client(config());
    MultiValueLock ab(client, "flight", {"12A", "12B"}), bc(client, "flight", {"12B", "12C"}),
        a_only(client, "flight", {"12A"});
    const std::string me = client.current_owner();
    ab.lock();
    ab.lock();
    bc.lock();
    a_only.lock();
    const auto count_of = [&](const std::string& field) {
        const auto fields = hash_of(*raw, "flight");
        const auto it = fields.find(field + ":" + me + ":lock_count");
        return it == fields.end() ? std::string("none") : it->second;
    };
    EXPECT_EQ(count_of(a), "3");
    EXPECT_EQ(count_of(b), "3");
    a_only.release();  // 12A kept for {12A, 12B}, held twice
    EXPECT_EQ(count_of(a), "2");
    EXPECT_EQ(ab.hold_count(), 2);
    ab.release();  // the reentrant set keeps one hold
    EXPECT_EQ(ab.hold_count(), 1);
    EXPECT_EQ(count_of(b), "2");
    ab.release();  // 12A freed; 12B kept for {12B, 12C}
    EXPECT_EQ(hash_of(*raw, "flight").count(a), 0u);
    EXPECT_EQ(count_of(b), "1");
    EXPECT_TRUE(bc.is_held_by_current_thread());
    bc.release();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
