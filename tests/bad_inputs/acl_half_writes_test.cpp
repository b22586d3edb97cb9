// Bad-input catalog, ACL: a user whose ACL refuses a command a script runs
// after its first write (issue 35, item 2), or a holder allowed everything
// whose rights are narrowed while its client still trusts it (item 3). Redis
// keeps the writes a script made before a refused call, so every script
// checks those commands before it changes anything
// (src/primitive/checked_calls.lua.part): the refusal names the command and
// leaves every key as it was, and nothing is published.
// tests/primitive/checked_calls_test.cpp holds the rule for every script;
// these are the cases seen through the public API and the command line.
#include "bad_inputs/bad_inputs.hpp"
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

class HalfWrites : public BadInputs {
protected:
    /// User 'narrow': everything, then `rules` ("-pexpire").
    void narrow(const std::vector<std::string>& rules) const {
        std::vector<std::string> setuser{"ACL", "SETUSER", "narrow", "on", ">pw", "~*", "&*", "+@all"};
        setuser.insert(setuser.end(), rules.begin(), rules.end());
        raw->command(setuser);
    }

    Config narrow_user() const {
        Config c = config();
        c.username = "narrow";
        c.password = "pw";
        return c;
    }

    /// The refusal names the command, the key, the server and the line that grants them.
    ::testing::AssertionResult names(const std::string& error, const std::string& command,
                                     const std::string& key) const {
        std::string lower = command;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return mentions(error, {command + " on key '" + key + "'", server_name(),
                                "ACL SETUSER narrow +" + lower + " ~" + key});
    }
};

// Without PEXPIRE, a lock taken would be a hash without expiry, held for
// ever by an owner told its acquire failed.
TEST_F(HalfWrites, AnAcquireWithoutPexpireLeavesNoLock) {
    narrow({"-pexpire"});
    Client client(narrow_user());
    Lock lock(client, "job");
    EXPECT_TRUE(names(error_of<ServerError>([&] { lock.lock(); }, errc::no_permission), "PEXPIRE", "job"));
    FairLock fair(client, "fair");
    EXPECT_TRUE(names(error_of<ServerError>([&] { fair.lock(); }, errc::no_permission), "PEXPIRE", "fair"));
    ReadWriteLock doc(client, "doc");
    EXPECT_TRUE(
        names(error_of<ServerError>([&] { doc.read_lock().lock(); }, errc::no_permission), "PEXPIRE", "doc"));
    EXPECT_TRUE(
        names(error_of<ServerError>([&] { doc.write_lock().lock(); }, errc::no_permission), "PEXPIRE", "doc"));
    expect_nothing_left(client);
}

// A reentrant hold given back without PEXPIRE (its TTL raised to the
// lease): refused whole, the hold count as it was.
TEST_F(HalfWrites, APartialReleaseWithoutPexpireKeepsBothHolds) {
    narrow({});
    Client client(narrow_user());
    Lock lock(client, "job");
    lock.lock();
    lock.lock();
    raw->command({"PEXPIRE", "job", "1000"});  // below the lease: the release would raise it
    narrow({"-pexpire"});
    EXPECT_TRUE(names(error_of<ServerError>([&] { lock.release(); }, errc::no_permission), "PEXPIRE", "job"));
    EXPECT_EQ(raw->string({"HGET", "job", client.current_owner()}), "2");
}

// `holdfast run --semaphore` without ZADD: each failed run took a permit
// from the count and listed none, so after two the pool was empty for good.
TEST_F(HalfWrites, ASemaphoreRunWithoutZaddTakesNoPermit) {
    narrow({"-zadd"});
    const fs::path dir = fs::temp_directory_path() / ("holdfast-half-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string url = "redis://narrow:pw@127.0.0.1:" + std::to_string(server->port());
    for (int run = 0; run < 2; ++run) {
        const auto done = Cli({"--url", url, "run", "--semaphore", "2", "pool", "--", "true"}, dir, {}).wait();
        EXPECT_NE(done.status, 0) << done.err;
        EXPECT_TRUE(mentions(done.err, {"ZADD", "{pool}:timeout"})) << done.err;
    }
    EXPECT_EQ(raw->string({"GET", "pool"}), "2") << "a refused run took a permit";
    EXPECT_EQ(raw->integer({"EXISTS", "{pool}:timeout"}), 0);
    fs::remove_all(dir);
}

// PermitExpirableSemaphore::release(id) without INCRBY removed the id, then
// failed saying nothing changed: the permit was lost.
TEST_F(HalfWrites, AnExpirableReleaseWithoutIncrbyKeepsThePermitHeld) {
    narrow({"-incrby"});
    raw->command({"SET", "pool", "1"});
    Client client(narrow_user());
    PermitExpirableSemaphore pool(client, "pool");
    const std::string id = pool.acquire();
    EXPECT_TRUE(names(error_of<ServerError>([&] { pool.release(id); }, errc::no_permission), "INCRBY", "pool"));
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 1) << "the refused release dropped the permit";
}

// A holder allowed everything runs the trusted release, without the checks
// of its rights. Narrowed by DEL before its client asks again, the release
// once published the unlock, then failed at its DEL naming no command. It
// is refused before its publish, and sent again checked, which names DEL.
TEST_F(HalfWrites, ATrustedReleaseWithoutDelPublishesNothing) {
    narrow({});
    Client client(narrow_user());
    Lock lock(client, "job");
    ASSERT_TRUE(eventually([&] {
        lock.lock();
        lock.unlock();
        return trusted_acquire_loaded();
    }));
    lock.lock();
    raw->command({"SCRIPT", "FLUSH"});  // so the trusted release is cached only if this one runs it
    support::SyncRedis listener(server->port());
    listener.command({"SUBSCRIBE", "redisson_lock__channel:{job}"});
    narrow({"-del"});
    EXPECT_TRUE(names(error_of<ServerError>([&] { lock.release(); }, errc::no_permission), "DEL", "job"));
    EXPECT_EQ(raw->command({"SCRIPT", "EXISTS", scripts::lock_release.trusted->sha1})->element[0]->integer, 1)
        << "the release did not run trusted first (the client asked again meanwhile)";
    EXPECT_EQ(raw->string({"HGET", "job", client.current_owner()}), "1");
    EXPECT_GT(raw->integer({"PTTL", "job"}), 0);
    // Anything published reaches the listener before the reply to its PING.
    const support::ReplyPtr next = listener.command({"PING"});
    ASSERT_EQ(next->type, REDIS_REPLY_ARRAY);
    EXPECT_EQ(std::string(next->element[0]->str), "pong") << "the refused release published the unlock";
}

}  // namespace
}  // namespace holdfast::testing
