// Bad-input catalog, ACL: a user whose rights leave out the channels holdfast
// publishes on. Every release-side script checks by publishing first, so a
// refused PUBLISH fails the call with an error naming the right to grant and
// leaves the lock, semaphore or latch exactly as it was (not freed behind the
// caller's back with its waiters left asleep).
#include <fstream>
#include <sstream>

#include "catalog/catalog.hpp"

namespace holdfast::testing {
namespace {

class NoChannels : public Catalog {
protected:
    void SetUp() override {
        Catalog::SetUp();
        // Every command and key, no channel: any PUBLISH is refused.
        raw->command({"ACL", "SETUSER", "limited", "on", ">pw", "~*", "+@all", "resetchannels"});
    }

    Config limited() const {
        Config c = config();
        c.username = "limited";
        c.password = "pw";
        return c;
    }

    /// What every refusal must say: the call, the name, the server, the missing right.
    std::vector<std::string> expected(const std::string& quoted_name) const {
        return {quoted_name, server_name(), "ACL", "&redisson_*", "ACL SETUSER limited"};
    }

    void expect_lock_held(const std::string& name, const std::string& field) const {
        EXPECT_EQ(raw->string({"HGET", name, field}), "1") << "the refused unlock changed the lock";
        EXPECT_GT(raw->integer({"PTTL", name}), 0);
    }
};

TEST_F(NoChannels, ALockUnlockIsRefusedAndTheLockKept) {
    Client client(limited());
    Lock lock(client, "job");
    lock.lock();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.unlock(); }), expected("'job'")));
    expect_lock_held("job", client.current_owner());
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.force_unlock(); }), expected("'job'")));
    expect_lock_held("job", client.current_owner());
}

TEST_F(NoChannels, AFencedLockUnlockIsRefusedAndTheLockKept) {
    Client client(limited());
    FencedLock lock(client, "job");
    lock.lock_and_get_token();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.unlock(); }), expected("'job'")));
    expect_lock_held("job", client.current_owner());
}

TEST_F(NoChannels, ReadAndWriteUnlocksAreRefusedAndTheLocksKept) {
    Client client(limited());
    ReadWriteLock shared(client, "doc");
    shared.read_lock().lock();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { shared.read_lock().unlock(); }), expected("'doc'")));
    expect_lock_held("doc", client.current_owner());
    EXPECT_EQ(raw->integer({"EXISTS", "{doc}:" + client.current_owner() + ":rwlock_timeout:1"}), 1);

    ReadWriteLock exclusive(client, "page");
    exclusive.write_lock().lock();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { exclusive.write_lock().unlock(); }), expected("'page'")));
    expect_lock_held("page", client.current_owner() + ":write");
    EXPECT_EQ(raw->string({"HGET", "page", "mode"}), "write");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { exclusive.write_lock().force_unlock(); }), expected("'page'")));
    expect_lock_held("page", client.current_owner() + ":write");
}

TEST_F(NoChannels, ASemaphoreReleaseIsRefusedAndThePermitStaysTaken) {
    raw->command({"SET", "slots", "1"});
    Client client(limited());
    Semaphore slots(client, "slots");
    slots.acquire();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.release(); }), expected("'slots'")));
    EXPECT_EQ(raw->string({"GET", "slots"}), "0");
}

TEST_F(NoChannels, AnExpirableSemaphoreReleaseIsRefusedAndThePermitStaysHeld) {
    raw->command({"SET", "pool", "1"});
    Client client(limited());
    PermitExpirableSemaphore pool(client, "pool");
    const std::string id = pool.acquire();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { pool.release(id); }), expected("'pool'")));
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 1);
}

TEST_F(NoChannels, ALatchCountDownIsRefusedAndTheCountKept) {
    raw->command({"SET", "gate", "1"});
    Client client(limited());
    CountDownLatch gate(client, "gate");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { gate.count_down(); }), expected("'gate'")));
    EXPECT_EQ(raw->string({"GET", "gate"}), "1");
}

// The setters publish too: refused, they set nothing.
TEST_F(NoChannels, SettingACountIsRefusedAndNothingSet) {
    Client client(limited());
    Semaphore slots(client, "slots");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.try_set_permits(3); }), expected("'slots'")));
    CountDownLatch gate(client, "gate");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { gate.try_set_count(3); }), expected("'gate'")));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// A user without EVALSHA is told which command to grant.
TEST_F(NoChannels, AMissingCommandIsNamed) {
    raw->command({"ACL", "SETUSER", "limited", "allchannels", "-evalsha"});
    Client client(limited());
    Lock lock(client, "job");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.lock(); }),
                         {"'job'", server_name(), "evalsha", "ACL SETUSER limited +evalsha"}));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

/// The ready-to-paste ACL SETUSER line of docs/errors.md, split into words.
std::vector<std::string> documented_acl_line() {
    std::ifstream doc(std::string(HOLDFAST_LUA_DIR) + "/../docs/errors.md");
    std::string line;
    while (std::getline(doc, line))
        if (line.rfind("    ACL SETUSER app ", 0) == 0) {
            std::istringstream words(line);
            std::vector<std::string> result;
            for (std::string word; words >> word;) result.push_back(word == ">PASSWORD" ? ">pw" : word);
            return result;
        }
    return {};
}

// The rules docs/errors.md gives are enough for every primitive, waiting included.
TEST_F(NoChannels, TheDocumentedRulesAreEnough) {
    const auto rule = documented_acl_line();
    ASSERT_GT(rule.size(), 5u) << "no 'ACL SETUSER app' line in docs/errors.md";
    auto set = raw->command(std::vector<std::string>(rule.begin(), rule.end()));
    ASSERT_EQ(set->type, REDIS_REPLY_STATUS) << (set->str ? set->str : "");
    Config c = config();
    c.username = "app";
    c.password = "pw";
    Client client(c), other(c);

    Lock lock(client, "app:job"), lock_too(other, "app:job");
    FencedLock fenced(client, "app:fenced");
    FairLock fair(client, "app:fair"), fair_too(other, "app:fair");
    ReadWriteLock rw(client, "app:doc"), rw_too(other, "app:doc");
    SpinLock spin(client, "app:spin");
    SimpleLock simple(client, "app:simple");
    for (Lock* each : std::initializer_list<Lock*>{&lock, &fenced, &fair, &rw.read_lock(), &spin, &simple}) {
        each->lock();
        EXPECT_TRUE(each->is_locked()) << each->name();
    }
    // A waiter subscribes, and is woken by the unlock's message.
    auto waiter = lock_too.async_try_lock(other.new_owner(), 30s);
    auto fair_waiter = fair_too.async_try_lock(other.new_owner(), 30s);
    auto writer = rw_too.write_lock().async_try_lock(other.new_owner(), 30s);
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{app:job}") == 1; }));
    for (Lock* each : std::initializer_list<Lock*>{&lock, &fenced, &fair, &rw.read_lock(), &spin, &simple})
        each->unlock();
    EXPECT_TRUE(waiter.get());
    EXPECT_TRUE(fair_waiter.get());
    EXPECT_TRUE(writer.get());

    Semaphore slots(client, "app:slots");
    ASSERT_TRUE(slots.try_set_permits(1));
    slots.acquire();
    slots.release();
    PermitExpirableSemaphore pool(client, "app:pool");
    ASSERT_TRUE(pool.try_set_permits(1));
    pool.release(pool.acquire(10s));
    CountDownLatch gate(client, "app:gate");
    ASSERT_TRUE(gate.try_set_count(1));
    gate.count_down();
    EXPECT_TRUE(gate.await_for(0ms));
    EXPECT_EQ(raw->command({"ACL", "LOG"})->elements, 0u) << "the server refused something";
}

}  // namespace
}  // namespace holdfast::testing
