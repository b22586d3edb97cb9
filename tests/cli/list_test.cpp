// holdfast list and status --json: what a database holds, for people and for
// programs. The JSON is parsed back, so every field name and type is checked.
#include <nlohmann/json.hpp>

#include <set>

#include "cli/cli_process.hpp"
#include "inspect/layouts.hpp"
#include "redis_cluster.hpp"

namespace holdfast::testing {
namespace {

using nlohmann::json;
using CliList = CliTest;

json parsed(const std::string& out) {
    try {
        return json::parse(out);
    } catch (const json::exception& e) {
        ADD_FAILURE() << "not JSON (" << e.what() << "): " << out;
        return {};
    }
}

TEST_F(CliList, StatusJsonOfAHeldLock) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    lock.lock();
    const auto result = holdfast({"status", "--json", "job"});
    ASSERT_EQ(result.status, 0) << result.err;
    const json state = parsed(result.out);
    EXPECT_EQ(state["name"], "job");
    EXPECT_EQ(state["kind"], "lock");
    EXPECT_EQ(state["type"], "hash");
    ASSERT_TRUE(state["ttl_ms"].is_number_integer());
    EXPECT_GT(state["ttl_ms"].get<std::int64_t>(), 0);
    EXPECT_LE(state["ttl_ms"].get<std::int64_t>(), 30000);
    ASSERT_EQ(state["holders"].size(), 1u);
    EXPECT_EQ(state["holders"][0]["owner"], client.current_owner());
    EXPECT_EQ(state["holders"][0]["hold_count"], 2);
    EXPECT_EQ(state["holders"][0]["writer"], false);
    EXPECT_TRUE(state["holders"][0]["live_read_holds"].is_null());
    EXPECT_TRUE(state["mode"].is_null());
    EXPECT_EQ(state["queue"], json::array());
    EXPECT_TRUE(state["fencing_token"].is_null());
    EXPECT_TRUE(state["count"].is_null());
    EXPECT_TRUE(state["token"].is_null());
    lock.unlock();
    lock.unlock();

    const json free = parsed(holdfast({"status", "--json", "job"}).out);
    EXPECT_EQ(free["kind"], "free");
    EXPECT_EQ(free["type"], "none");
    EXPECT_TRUE(free["ttl_ms"].is_null());
    EXPECT_EQ(free["holders"], json::array());
}

TEST_F(CliList, StatusJsonOfAFairQueueAndATokenAndACounter) {
    QueuedFairLock fair(config(), *raw, "job");
    ASSERT_TRUE(fair.ready());
    const std::int64_t deadline = 4102444800000;  // 2100-01-01
    fair.append("java:1", deadline);
    json state = parsed(holdfast({"status", "--json", "job"}).out);
    ASSERT_EQ(state["queue"].size(), 2u);
    EXPECT_EQ(state["queue"][0]["owner"], fair.waiter());
    EXPECT_EQ(state["queue"][1]["owner"], "java:1");
    EXPECT_EQ(state["queue"][1]["deadline_ms"], deadline);

    raw->command({"SET", "redisson_lock_token:{ledger}", "41"});
    state = parsed(holdfast({"status", "--json", "ledger"}).out);
    EXPECT_EQ(state["kind"], "free");
    EXPECT_EQ(state["fencing_token"], 41);

    raw->command({"SET", "pool", "3"});
    state = parsed(holdfast({"status", "--json", "pool"}).out);
    EXPECT_EQ(state["kind"], "counter");
    EXPECT_EQ(state["count"], 3);
}

// Names are bytes; the JSON must still parse, whatever they are.
TEST_F(CliList, StatusJsonOfBytesThatAreNotUtf8StillParses) {
    const std::string name = "bad\xff\xfename\x01";
    raw->command({"HSET", name, "owner\xc3:1", "1"});
    const auto result = holdfast({"status", "--json", name});
    ASSERT_EQ(result.status, 0) << result.err;
    const json state = parsed(result.out);
    EXPECT_EQ(state["kind"], "lock");
    EXPECT_NE(state["name"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

TEST_F(CliList, StatusJsonOfAKeyOfAnotherTypeExits1) {
    raw->command({"RPUSH", "notes", "a"});
    const auto result = holdfast({"status", "--json", "notes"});
    EXPECT_EQ(result.status, 1);
    const json state = parsed(result.out);
    EXPECT_EQ(state["kind"], "not_a_primitive");
    EXPECT_EQ(state["type"], "list");
    EXPECT_TRUE(state["description"].is_string());
}

// Every kind is found by its layout, side keys fold into their names, and
// keys that are no primitive (or free) are left out.
TEST_F(CliList, FindsEachKindByItsLayout) {
    Client client(config());
    Lock lock(client, "a-lock");
    lock.lock();
    QueuedFairLock fair(config(), *raw, "b-fair");
    ASSERT_TRUE(fair.ready());
    ReadWriteLock rw(client, "c-doc");
    rw.read_lock().lock();
    Semaphore pool(client, "d-pool");
    ASSERT_TRUE(pool.try_set_permits(4));
    PermitExpirableSemaphore expirable(client, "e-permits");
    ASSERT_TRUE(expirable.try_set_permits(2));
    ASSERT_TRUE(expirable.try_acquire().has_value());
    raw->command({"RPUSH", "notes", "x"});
    raw->command({"HSET", "cfg", "color", "blue"});
    raw->command({"SET", "redisson_lock_token:{ledger}", "7"});  // a free fenced lock: not listed

    const auto table = holdfast({"list"});
    ASSERT_EQ(table.status, 0) << table.err;
    EXPECT_NE(table.out.find("NAME"), std::string::npos) << table.out;
    for (const char* name : {"a-lock", "b-fair", "c-doc", "d-pool", "e-permits"})
        EXPECT_NE(table.out.find(name), std::string::npos) << name << '\n' << table.out;
    for (const char* name : {"notes", "cfg", "ledger", "redisson_lock"})
        EXPECT_EQ(table.out.find(name), std::string::npos) << name << '\n' << table.out;

    const json all = parsed(holdfast({"list", "--json"}).out);
    ASSERT_EQ(all.size(), 5u) << all.dump();
    const std::vector<std::pair<std::string, std::string>> expected{{"a-lock", "lock"},
                                                                    {"b-fair", "lock"},
                                                                    {"c-doc", "read_write_lock"},
                                                                    {"d-pool", "counter"},
                                                                    {"e-permits", "permit_expirable_semaphore"}};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(all[i]["name"], expected[i].first);
        EXPECT_EQ(all[i]["kind"], expected[i].second);
    }
    EXPECT_EQ(all[1]["queue"].size(), 1u);
    EXPECT_EQ(all[4]["permits"].size(), 1u);

    const json some = parsed(holdfast({"list", "--json", "[ab]-*"}).out);
    ASSERT_EQ(some.size(), 2u) << some.dump();
    EXPECT_EQ(some[1]["name"], "b-fair");
    lock.unlock();
    rw.read_lock().unlock();
}

// SCAN pages through a database larger than one page; every lock is found once.
TEST_F(CliList, PagesThroughManyKeys) {
    for (int i = 0; i < 2500; ++i) raw->command({"HSET", "lock:" + std::to_string(i), "owner:1", "1"});
    for (int i = 0; i < 500; ++i) raw->command({"SET", "data:" + std::to_string(i), "text"});
    const auto result = holdfast({"list", "--json", "lock:*"});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(parsed(result.out).size(), 2500u);
}

// Each master of a cluster holds its own keys: list scans every one.
TEST_F(CliList, ScansEveryMasterOfACluster) {
    support::RedisCluster cluster(3);
    Config config = Config::from_uri(cluster.url());
    Client client(config);
    std::vector<std::unique_ptr<Lock>> locks;
    std::set<std::size_t> masters;
    for (int i = 0; masters.size() < 3 && i < 100; ++i) {
        const std::string name = "job-" + std::to_string(i);
        if (!masters.insert(cluster.owner_of(cluster.slot_of(name))).second) continue;
        locks.push_back(std::make_unique<Lock>(client, name));
        locks.back()->lock();
    }
    ASSERT_EQ(masters.size(), 3u);
    const auto result = Cli({"--url", cluster.url(), "list", "--json", "job-*"}, dir, {}).wait();
    ASSERT_EQ(result.status, 0) << result.err;
    const json all = parsed(result.out);
    ASSERT_EQ(all.size(), 3u) << all.dump();
    for (const auto& state : all) EXPECT_EQ(state["kind"], "lock");
    for (auto& lock : locks) lock->unlock();
}

TEST_F(CliList, SaysSoWhenNothingMatches) {
    const auto result = holdfast({"list", "nothing*"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "no locks, semaphores or latches match nothing*\n");
}

}  // namespace
}  // namespace holdfast::testing
