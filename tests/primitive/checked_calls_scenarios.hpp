// For tests/primitive/checked_calls_test.cpp: for each embedded script (by
// its name without `_trusted`), a few scenarios reaching its write paths:
// the keys set up first, then KEYS and ARGV as the library passes them (see
// each script's header). A new script needs an entry here.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace holdfast::testing {

struct Scenario {
    std::string name;                            // the path it reaches
    std::vector<std::vector<std::string>> setup;  // run first, as the default user
    std::vector<std::string> keys, args;
    bool timed = false;       // its reply holds clock readings or waits: compared within a second
    bool per_key = false;     // a batch of renewals: each key's outcome its own
    bool reads_only = false;  // reaches no write (kept for a path that only reads)
};

inline std::map<std::string, std::vector<Scenario>> scenarios() {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    using std::chrono::system_clock;
    const long long now_ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    const std::string now = std::to_string(now_ms);
    const auto at = [&](long long offset) { return std::to_string(now_ms + offset); };
    using Setup = std::vector<std::vector<std::string>>;

    // The reentrant lock 'job' (lock/acquire.lua, release.lua, handoff.lua.part).
    const std::string w = "holdfast_lock_waiters:{job}", p = "holdfast_lock_handoff:{job}", ch = "ch:{job}";
    const Setup held{{"HSET", "job", "o1", "1"}, {"PEXPIRE", "job", "30000"}};
    const Setup held_twice{{"HSET", "job", "o1", "2"}, {"PEXPIRE", "job", "1000"}};
    const Setup held_by_other{{"HSET", "job", "o2", "1"}, {"PEXPIRE", "job", "30000"}};
    const auto acquire = [&](std::string waiter, std::string publish = "publish") {
        return std::vector<std::string>{"30000", "o1", ch, publish, waiter, w, p, "0"};
    };
    const std::vector<std::string> release{"0", "30000", "o1", "publish", ch, "3000", w, p, "0"};
    Setup held_with_waiter = held;
    held_with_waiter.push_back({"ZADD", w, "1", "5"});

    // The fair lock 'fair': hash, queue, deadlines, liveness; 'd' a dead waiter, 'o2' a live one.
    const std::vector<std::string> fair{"fair", "redisson_lock_queue:{fair}", "redisson_lock_timeout:{fair}",
                                        "holdfast_fair_alive:{fair}"};
    const auto queued = [&](const std::string& who, long long deadline) {
        return Setup{{"RPUSH", fair[1], who}, {"ZADD", fair[2], at(deadline), who}, {"HSET", fair[3], who, at(10000)}};
    };
    const auto plus = [](Setup a, const Setup& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const Setup fair_held{{"HSET", "fair", "o1", "1"}, {"PEXPIRE", "fair", "30000"}};
    const Setup fair_held_by_other{{"HSET", "fair", "o2", "1"}, {"PEXPIRE", "fair", "30000"}};
    const auto fair_acquire = [&](std::string mode) {
        return std::vector<std::string>{"30000", "o1", "5000", now, mode, "publish", "10000", "ch:{fair}"};
    };
    const std::vector<std::string> fair_release{"0", "30000", "o1", now, "publish", "ch:{fair}"};

    // The read-write lock 'doc' and its read holds.
    const std::string hold1 = "{doc}:o1:rwlock_timeout:1", hold2 = "{doc}:o1:rwlock_timeout:2";
    const Setup read_held{{"HSET", "doc", "mode", "read", "o1", "1"}, {"PEXPIRE", "doc", "30000"},
                          {"SET", hold1, "1", "PX", "30000"}};
    const Setup read_held_twice{{"HSET", "doc", "mode", "read", "o1", "2"}, {"PEXPIRE", "doc", "30000"},
                                {"SET", hold1, "1", "PX", "30000"}, {"SET", hold2, "1", "PX", "30000"}};
    const Setup other_reader{{"HSET", "doc", "o2", "1"}, {"SET", "{doc}:o2:rwlock_timeout:1", "1", "PX", "60000"}};
    const Setup write_held{{"HSET", "doc", "mode", "write", "o1:write", "1"}, {"PEXPIRE", "doc", "30000"}};
    const Setup downgraded{{"HSET", "doc", "mode", "write", "o1:write", "1", "o1", "1"}, {"PEXPIRE", "doc", "30000"},
                           {"SET", hold1, "1", "PX", "30000"}};

    // The multi-value lock's group 'grp' (multi_value_lock/*.lua): values fa and fb, held as `<fa><fb>:o1`.
    const std::string fa(22, 'A'), fb(22, 'B'), set = fa + fb + ":o1";
    const auto group_held = [&](const std::string& who, const std::string& count, long long ends, long long ttl) {
        Setup setup;
        for (const std::string& f : {fa, fb})
            setup.push_back({"HSET", "grp", f, who, f + ":" + who + ":expire_time", at(ends), f + ":" + who + ":lock_count",
                             count});
        setup.push_back({"PEXPIRE", "grp", std::to_string(ttl)});
        return setup;
    };
    const std::vector<std::string> group_take{"30000", set, "publish", "ch:{grp}"};
    // Kept after the release: holds of the set, then of fa and of fb.
    const auto group_release = [&](const std::string& own, const std::string& of_fa, const std::string& of_fb) {
        return std::vector<std::string>{"1", "30000", set, "publish", "ch:{grp}", own, of_fa, of_fb};
    };

    // The permit-expirable semaphore 'pool' and its held ids.
    const std::vector<std::string> pool{"pool", "{pool}:timeout"};
    const std::string never = "99999999999999";
    const auto take_permit = [&] { return std::vector<std::string>{now, "publish", "ch:{pool}", never, at(30000), "id-new"}; };

    return {
        {"lock_acquire",
         {{"free", {}, {"job"}, acquire("")},
          {"re-entered", held, {"job"}, acquire("")},
          {"held by another: a listed waiter", held_by_other, {"job"}, acquire("7"), true},
          {"free, promised to this waiter", {{"SET", p, "5", "PX", "5000"}, {"ZADD", w, "1", "5"}}, {"job"}, acquire("5")},
          {"spin lock, free", {}, {"job"}, acquire("", "")}}},
        {"lock_release",
         {{"last hold", held, {"job"}, release},
          {"one of two holds", held_twice, {"job"}, release},
          {"last hold, a waiter named", held_with_waiter, {"job"}, release},
          {"spin lock, last hold", held, {"job"}, {"0", "30000", "o1", "", "", "", "", "", "0"}}}},
        {"lock_force_unlock", {{"held", held, {"job"}, {"0", "publish", ch}}}},
        {"lock_leave",
         {{"promised to the leaver, another listed",
           {{"SET", p, "5", "PX", "5000"}, {"ZADD", w, "1", "5", "2", "6"}}, {"job"},
           {"5", "publish", ch, "3000", w, p, "0"}}}},
        {"lock_renew",
         {{"two held",
           {{"HSET", "a", "o1", "1"}, {"PEXPIRE", "a", "1000"}, {"HSET", "b", "o1", "1"}, {"PEXPIRE", "b", "1000"}},
           {"a", "b"}, {"30000", "o1", "o1"}, false, true}}},
        {"fair_lock_acquire",
         {{"free, no queue", {}, fair, fair_acquire("wait")},
          {"free, this owner first, another behind", plus(queued("o1", 5000), queued("o2", 10000)), fair,
           fair_acquire("wait")},
          {"free, a dead head, this owner next", plus(queued("d", -1), queued("o1", 5000)), fair, fair_acquire("wait")},
          {"re-entered, a dead head", plus(fair_held, queued("d", -1)), fair, fair_acquire("wait")},
          {"held: joins the queue", fair_held_by_other, fair, fair_acquire("wait"), true},
          {"held: already queued", plus(fair_held_by_other, queued("o1", 20000)), fair, fair_acquire("wait"), true},
          {"free, a dead head, another live next", plus(queued("d", -1), queued("o2", 10000)), fair,
           fair_acquire("wait"), true},
          {"tried, a dead head, another live next", plus(queued("d", -1), queued("o2", 10000)), fair,
           fair_acquire("try")}}},
        {"fair_lock_release",
         {{"last hold, a waiter", plus(fair_held, queued("o2", 10000)), fair, fair_release},
          {"one of two holds, a dead head",
           plus({{"HSET", "fair", "o1", "2"}, {"PEXPIRE", "fair", "1000"}}, queued("d", -1)), fair, fair_release},
          {"last hold, a dead head and a waiter", plus(plus(fair_held, queued("d", -1)), queued("o2", 10000)), fair,
           fair_release},
          {"held by another, a dead head", plus(fair_held_by_other, queued("d", -1)), fair, fair_release},
          {"lease ran out, a waiter", queued("o2", 10000), fair, fair_release}}},
        {"fair_lock_force_unlock",
         {{"held, a dead head and a waiter", plus(plus(fair_held, queued("d", -1)), queued("o2", 10000)), fair,
           {"0", "publish", now, "ch:{fair}"}}}},
        {"fair_lock_give_up",
         {{"first of two, the lock free", plus(queued("o1", 5000), queued("o2", 10000)), fair,
           {"o1", "5000", "publish", "ch:{fair}"}},
          {"not queued, still recorded", {{"ZADD", fair[2], at(5000), "o1"}, {"HSET", fair[3], "o1", at(10000)}},
           fair, {"o1", "5000", "publish", "ch:{fair}"}}}},
        {"rwlock_read_acquire",
         {{"free", {}, {"doc"}, {"30000", "o1", "o1:write", "ch:{doc}", "publish"}},
          {"re-entered", read_held, {"doc"}, {"30000", "o1", "o1:write", "ch:{doc}", "publish"}},
          {"write-held by this owner", write_held, {"doc"}, {"60000", "o1", "o1:write", "ch:{doc}", "publish"}}}},
        {"rwlock_read_release",
         {{"last reader", read_held, {"doc"}, {"0", "o1", "publish", "ch:{doc}"}},
          {"another reader stays", plus(read_held, other_reader), {"doc"}, {"0", "o1", "publish", "ch:{doc}"}},
          {"one of two holds", read_held_twice, {"doc"}, {"0", "o1", "publish", "ch:{doc}"}},
          {"a downgraded writer", downgraded, {"doc"}, {"0", "o1", "publish", "ch:{doc}"}}}},
        {"rwlock_read_renew",
         {{"two held", plus(read_held, {{"HSET", "page", "mode", "read", "o1", "1"}, {"PEXPIRE", "page", "1000"},
                                        {"SET", "{page}:o1:rwlock_timeout:1", "1", "PX", "1000"}}),
           {"doc", "page"}, {"60000", "o1", "o1"}, false, true}}},
        {"rwlock_write_acquire",
         {{"free", {}, {"doc"}, {"30000", "o1:write", "o1", "ch:{doc}", "publish"}},
          {"re-entered", write_held, {"doc"}, {"30000", "o1:write", "o1", "ch:{doc}", "publish"}}}},
        {"rwlock_write_release",
         {{"last hold", write_held, {"doc"}, {"1", "30000", "o1:write", "publish", "ch:{doc}"}},
          {"one of two holds", {{"HSET", "doc", "mode", "write", "o1:write", "2"}, {"PEXPIRE", "doc", "1000"}},
           {"doc"}, {"1", "30000", "o1:write", "publish", "ch:{doc}"}},
          {"a downgraded writer", downgraded, {"doc"}, {"1", "30000", "o1:write", "publish", "ch:{doc}"}}}},
        {"rwlock_force_unlock",
         {{"two readers", plus(read_held_twice, other_reader), {"doc"}, {"read", "0", "publish", "ch:{doc}"}}}},
        {"semaphore_acquire", {{"a permit free", {{"SET", "slots", "2"}}, {"slots"}, {"1", "publish", "ch:{slots}"}}}},
        {"semaphore_drain_permits", {{"three free", {{"SET", "slots", "3"}}, {"slots"}, {}}}},
        {"semaphore_release",
         {{"none free", {{"SET", "slots", "0"}}, {"slots"}, {"1", "publish", "ch:{slots}"}},
          {"if it exists: it does", {{"SET", "slots", "0"}}, {"slots"}, {"2", "publish", "ch:{slots}", "existing"}},
          {"if it exists: it does not", {}, {"slots"}, {"2", "publish", "ch:{slots}", "existing"}, false, false,
           true}}},
        {"semaphore_try_set_permits",
         {{"no count", {}, {"slots"}, {"3", "publish", "ch:{slots}", "0"}},
          {"no count, a ttl", {}, {"slots"}, {"3", "publish", "ch:{slots}", "60000"}}}},
        {"semaphore_expirable_acquire",
         {{"a permit free", {{"SET", "pool", "2", "PX", "60000"}}, pool, take_permit()},
          {"an ended lease reclaimed, then taken", {{"SET", "pool", "0"}, {"ZADD", pool[1], at(-1), "id-old"}}, pool,
           take_permit()},
          {"an ended lease reclaimed, none taken",
           {{"SET", "pool", "-1"}, {"ZADD", pool[1], at(-1), "id-old", at(20000), "id-other"}}, pool, take_permit(),
           true},
          {"counted, an ended lease reclaimed", {{"SET", "pool", "0"}, {"ZADD", pool[1], at(-1), "id-old"}}, pool,
           {now, "publish", "ch:{pool}", never}},
          {"two taken at once, an ended lease reclaimed",
           {{"SET", "pool", "1", "PX", "60000"}, {"ZADD", pool[1], at(-1), "id-old"}}, pool,
           {now, "publish", "ch:{pool}", never, at(30000), "id-a", "id-b"}}}},
        {"semaphore_expirable_release",
         {{"held", {{"SET", "pool", "0"}, {"ZADD", pool[1], at(20000), "id-1"}}, pool,
           {now, "publish", "ch:{pool}", "id-1"}},
          {"two held, one past its lease", {{"SET", "pool", "0"}, {"ZADD", pool[1], at(20000), "id-1", at(-1), "id-2"}},
           pool, {now, "publish", "ch:{pool}", "id-1", "id-2"}}}},
        {"semaphore_expirable_set_permits",
         {{"no count, one taken", {{"ZADD", pool[1], at(20000), "id-1"}}, pool, {"3", "publish", "ch:{pool}"}},
          {"more than taken", {{"SET", "pool", "1"}, {"ZADD", pool[1], at(20000), "id-1"}}, pool,
           {"5", "publish", "ch:{pool}"}},
          {"fewer than taken", {{"SET", "pool", "1"}, {"ZADD", pool[1], at(20000), "id-1", at(30000), "id-2"}}, pool,
           {"1", "publish", "ch:{pool}"}}}},
        {"semaphore_expirable_update_lease",
         {{"held", {{"SET", "pool", "0"}, {"ZADD", pool[1], at(20000), "id-1"}}, pool, {now, at(40000), "id-1"}}}},
        {"latch_count_down",
         {{"to zero", {{"SET", "gate", "1"}}, {"gate"}, {"0", "publish", "ch:{gate}"}},
          {"to one", {{"SET", "gate", "2"}}, {"gate"}, {"0", "publish", "ch:{gate}"}}}},
        {"latch_try_set_count", {{"no count", {}, {"gate"}, {"1", "3", "publish", "ch:{gate}"}}}},
        {"simple_lock_acquire", {{"free", {}, {"simple"}, {"30000", "tok"}}}},
        {"simple_lock_release", {{"held", {{"SET", "simple", "tok"}}, {"simple"}, {"tok"}}}},
        {"simple_lock_force_unlock", {{"held", {{"SET", "simple", "tok"}}, {"simple"}, {}}}},
        {"simple_lock_renew",
         {{"two held", {{"SET", "s1", "tok", "PX", "1000"}, {"SET", "s2", "tok", "PX", "1000"}}, {"s1", "s2"},
           {"30000", "tok", "tok"}, false, true}}},
        {"non_reentrant_lock_acquire",
         {{"free", {}, {"job"}, acquire("")},
          {"held by another: a listed waiter", held_by_other, {"job"}, acquire("7"), true},
          {"free, promised to this waiter", {{"SET", p, "5", "PX", "5000"}, {"ZADD", w, "1", "5"}}, {"job"}, acquire("5")}}},
        {"non_reentrant_lock_fair_acquire",
         {{"free, no queue", {}, fair, fair_acquire("wait")},
          {"free, a dead head, this owner next", plus(queued("d", -1), queued("o1", 5000)), fair, fair_acquire("wait")},
          {"held: joins the queue", fair_held_by_other, fair, fair_acquire("wait"), true}}},
        {"multi_value_lock_acquire",
         {{"free", {}, {"grp"}, group_take},
          {"re-entered, the hash's TTL raised", group_held("o1", "1", 20000, 1000), {"grp"}, group_take},
          {"a hold that ended taken over", group_held("o2", "1", -1000, 30000), {"grp"}, group_take},
          {"held by another", group_held("o2", "1", 20000, 30000), {"grp"}, group_take, true, false, true}}},
        {"multi_value_lock_release",
         {{"last hold", group_held("o1", "1", 20000, 30000), {"grp"}, group_release("0", "0", "0")},
          {"one of two holds, its leases raised", group_held("o1", "2", 20000, 1000), {"grp"},
           group_release("1", "1", "1")},
          {"a value kept for another set, one nobody believes in freed", group_held("o1", "2", 20000, 1000), {"grp"},
           group_release("0", "1", "0")},
          {"a value lost, the other given back",
           {{"HSET", "grp", fa, "o1", fa + ":o1:expire_time", at(20000), fa + ":o1:lock_count", "1"},
            {"PEXPIRE", "grp", "30000"}},
           {"grp"}, group_release("0", "0", "0")}}},
        {"multi_value_lock_renew",
         {{"two groups held",
           plus(group_held("o1", "1", 20000, 1000),
                {{"HSET", "grp2", fa, "o1", fa + ":o1:expire_time", at(20000), fa + ":o1:lock_count", "1", fb, "o1",
                  fb + ":o1:expire_time", at(20000), fb + ":o1:lock_count", "1"},
                 {"PEXPIRE", "grp2", "1000"}}),
           {"grp", "grp2"}, {"30000", set, set}, false, true}}},
        {"multi_value_lock_force_unlock",
         {{"held", group_held("o2", "1", 20000, 30000), {"grp"}, {"1", "publish", "ch:{grp}", fa + fb + ":"}}}},
        {"multi_value_lock_query",
         {{"held", group_held("o1", "2", 20000, 30000), {"grp"}, {set}, false, false, true}}},
        {"fenced_lock_acquire",
         {{"free", {}, {"fenced", "redisson_lock_token:{fenced}"}, {"30000", "o1", "ch:{fenced}", "publish"}, true},
          {"re-entered, the counter ahead of the clock",
           {{"HSET", "fenced", "o1", "1"}, {"SET", "redisson_lock_token:{fenced}", "5000000000000000"}},
           {"fenced", "redisson_lock_token:{fenced}"}, {"30000", "o1", "ch:{fenced}", "publish"}, true}}},
    };
}

}  // namespace holdfast::testing
