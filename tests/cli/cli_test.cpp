// The holdfast command line tool, run as a process against a throwaway server.
#include <future>

#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using CliRun = CliTest;
using CliUnlock = CliTest;
using CliUsage = CliTest;

TEST_F(CliRun, ExitsWithTheCommandsStatus) {
    EXPECT_EQ(holdfast({"run", "job", "--", "sh", "-c", "exit 3"}).status, 3);
    EXPECT_EQ(holdfast({"run", "job", "--", "true"}).status, 0);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, ReportsACommandKilledBySignalAsAShellDoes) {
    EXPECT_EQ(holdfast({"run", "job", "--", "sh", "-c", "kill -KILL $$"}).status, 128 + SIGKILL);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, HoldsTheLockWhileTheCommandRunsAndReleasesItAfter) {
    const std::string script =
        redis_cli("HGETALL job") + " > " + path("held") + " && " + redis_cli("PTTL job") + " > " + path("ttl");
    const auto result = holdfast({"--watchdog-timeout", "60s", "run", "job", "--", "sh", "-c", script});
    ASSERT_EQ(result.status, 0) << result.err;

    std::istringstream held(read_file(path("held")));
    std::string owner, count;
    held >> owner >> count;
    EXPECT_NE(owner.find(':'), std::string::npos) << "owner id <uuid>:<n>, got " << owner;
    EXPECT_EQ(count, "1");
    const long long ttl = std::stoll(read_file(path("ttl")));
    EXPECT_GT(ttl, 0);
    EXPECT_LE(ttl, 60000);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, FencedPassesTheTokenToTheCommand) {
    // Ahead of the server's clock, so tokens go on by exactly one (src/fenced_lock/acquire.lua).
    raw->command({"SET", "redisson_lock_token:{job}", "8000000000000041"});
    const auto result = holdfast({"run", "--fenced", "job", "--", "sh", "-c", "echo $HOLDFAST_TOKEN > " + path("token")});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("token")), "8000000000000042\n");
    const auto again = holdfast({"run", "--fenced", "--wait", "5s", "job", "--", "sh", "-c",
                                 "echo $HOLDFAST_TOKEN > " + path("token")});
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(read_file(path("token")), "8000000000000043\n");
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, FairAndSpinTakeTheirKindOfLock) {
    // A fair waiter queues where RFairLock's do; a spin waiter never subscribes.
    auto holder = start({"run", "job", "--", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"EXISTS", "job"}) == 1; }));
    auto fair = start({"run", "--fair", "job", "--", "true"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{job}"}) == 1; }));
    auto spin = start({"run", "--spin", "--wait", "200ms", "job", "--", "true"});
    EXPECT_EQ(spin->wait().status, 75);
    EXPECT_EQ(raw->command({"PUBSUB", "CHANNELS", "redisson_lock__channel:*"})->elements, 1u);  // the fair waiter's
    ::kill(holder->pid(), SIGTERM);
    EXPECT_EQ(holder->wait().status, 128 + SIGTERM);
    const auto fair_result = fair->wait();
    EXPECT_EQ(fair_result.status, 0) << fair_result.err;
    EXPECT_EQ(raw->integer({"EXISTS", "redisson_lock_queue:{job}"}), 0);
}

TEST_F(CliRun, SharedHoldersRunTogetherAndExclusiveWaits) {
    // Two readers inside at once: each waits until the other has arrived.
    const std::string both = "touch " + path("$0") + " && until [ -e " + path("$1") + " ]; do sleep 0.05; done";
    auto first = start({"run", "--shared", "doc", "--", "sh", "-c", both, "a", "b"});
    auto second = start({"run", "-s", "doc", "--", "sh", "-c", both, "b", "a"});
    ASSERT_EQ(first->wait().status, 0);
    ASSERT_EQ(second->wait().status, 0);
    auto reader = start({"run", "--shared", "doc", "--", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return raw->string({"HGET", "doc", "mode"}) == "read"; }));
    EXPECT_EQ(holdfast({"run", "--exclusive", "--wait", "200ms", "doc", "--", "true"}).status, 75);
    ::kill(reader->pid(), SIGTERM);
    reader->wait();
    const auto writer = holdfast({"run", "-x", "--wait", "5s", "doc", "--", "sh", "-c",
                                  redis_cli("HGET doc mode") + " > " + path("mode")});
    EXPECT_EQ(writer.status, 0) << writer.err;
    EXPECT_EQ(read_file(path("mode")), "write\n");
    EXPECT_EQ(raw->integer({"EXISTS", "doc"}), 0);
}

TEST_F(CliRun, SemaphoreLetsNCommandsInAndGivesThePermitsBack) {
    // Two of two permits taken by commands that wait for each other: both inside at once.
    const std::string both = "touch " + path("$0") + " && until [ -e " + path("$1") + " ]; do sleep 0.05; done";
    auto first = start({"run", "--semaphore", "2", "pool", "--", "sh", "-c", both, "a", "b"});
    auto second = start({"run", "--semaphore", "2", "pool", "--", "sh", "-c", both, "b", "a"});
    ASSERT_EQ(first->wait().status, 0);
    ASSERT_EQ(second->wait().status, 0);
    EXPECT_EQ(raw->string({"GET", "pool"}), "2");
    // All taken: a third waits, then runs when one comes back.
    raw->command({"SET", "pool", "0"});
    EXPECT_EQ(holdfast({"run", "--semaphore", "2", "--wait", "200ms", "pool", "--", "true"}).status, 75);
    auto third = start({"run", "--semaphore", "2", "pool", "--", "true"});
    ASSERT_TRUE(eventually([&] { return raw->command({"PUBSUB", "NUMSUB", "redisson_sc:{pool}"})->element[1]->integer == 1; }));
    raw->command({"INCRBY", "pool", "1"});
    raw->command({"PUBLISH", "redisson_sc:{pool}", "1"});
    const auto result = third->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
}

TEST_F(CliRun, LeaseOptionSetsAnUnrenewedLease) {
    const std::string script = redis_cli("PTTL job") + " > " + path("ttl");
    const auto result = holdfast({"--watchdog-timeout", "60s", "run", "--lease", "5s", "job", "--", "sh", "-c", script});
    ASSERT_EQ(result.status, 0) << result.err;
    const long long ttl = std::stoll(read_file(path("ttl")));
    EXPECT_GT(ttl, 0);
    EXPECT_LE(ttl, 5000);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, WaitRunsOutWith75WithoutRunningTheCommand) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    const auto result = holdfast({"run", "--wait", "300ms", "job", "--", "touch", path("marker")});
    EXPECT_EQ(result.status, 75);
    EXPECT_NE(result.err.find("timed out after 300ms waiting for the lock 'job'"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(path("marker")));
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
}

TEST_F(CliRun, WaitsForTheHolderThenRuns) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    auto cli = start({"run", "job", "--", "touch", path("marker")});
    ASSERT_TRUE(eventually([&] { return waiters("job") == 1; })) << cli->err();
    EXPECT_FALSE(fs::exists(path("marker")));
    lock.unlock();
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(fs::exists(path("marker")));
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, InterruptedWhileWaitingExits130WithoutRunningTheCommand) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    auto cli = start({"run", "job", "--", "touch", path("marker")});
    ASSERT_TRUE(eventually([&] { return waiters("job") == 1; })) << cli->err();
    ::kill(cli->pid(), SIGINT);
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGINT);
    EXPECT_NE(result.err.find("SIGINT while waiting for the lock 'job'"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(path("marker")));
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
}

TEST_F(CliRun, LostLeaseSendsSigtermToTheCommand) {
    // Renewed every 500 ms: the watchdog notices the deleted key within about that.
    auto cli = start({"--watchdog-timeout", "1500ms", "run", "job", "--", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"EXISTS", "job"}) == 1; })) << cli->err();
    raw->integer({"DEL", "job"});
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM);
    EXPECT_LT(result.elapsed, 20s);
    EXPECT_NE(result.err.find("holdfast: lost the lock 'job' ("), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("; sending SIGTERM to the command"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("was no longer held"), std::string::npos) << result.err;
}

TEST_F(CliRun, ForwardsSigtermToTheCommandAndReleases) {
    auto cli = start({"run", "job", "--", "sh", "-c", "touch " + path("started") + "; exec sleep 30"});
    ASSERT_TRUE(eventually([&] { return fs::exists(path("started")); })) << cli->err();
    ::kill(cli->pid(), SIGTERM);
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM);
    EXPECT_LT(result.elapsed, 20s);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, ACommandThatCannotRunExitsAsAShellDoes) {
    auto missing = holdfast({"run", "job", "--", path("no-such-command")});
    EXPECT_EQ(missing.status, 127);
    EXPECT_NE(missing.err.find("command not found"), std::string::npos) << missing.err;

    std::ofstream(path("not-executable")) << "#!/bin/sh\n";
    auto denied = holdfast({"run", "job", "--", path("not-executable")});
    EXPECT_EQ(denied.status, 126);
    EXPECT_NE(denied.err.find("Permission denied"), std::string::npos) << denied.err;
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliRun, TheCommandDoesNotInheritTheRedisConnections) {
    const auto result = holdfast({"run", "job", "--", "sh", "-c", "ls -l /proc/$$/fd > " + path("fds")});
    ASSERT_EQ(result.status, 0) << result.err;
    const std::string fds = read_file(path("fds"));
    EXPECT_EQ(fds.find("socket:"), std::string::npos) << fds;
}

// -v: the client's events on stderr, one line each, as docs/operations.md shows them.
TEST_F(CliRun, VerboseLogsTheClientsEvents) {
    auto cli = start({"-v", "--watchdog-timeout", "1500ms", "run", "job", "--", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"EXISTS", "job"}) == 1; })) << cli->err();
    raw->command({"CLIENT", "KILL", "SKIPME", "yes"});
    ASSERT_TRUE(eventually([&] { return cli->err().find("connection_restored") != std::string::npos; }))
        << cli->err();
    raw->integer({"DEL", "job"});  // the next renewal finds it gone
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM);
    const std::string address = "127.0.0.1:" + std::to_string(server->port());
    EXPECT_NE(result.err.find("Z warning holdfast: connection_lost: on " + address + ": "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("holdfast: connection_restored: on " + address), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("Z error holdfast: lease_lost: lock 'job' owner '"), std::string::npos) << result.err;
}

// run's warnings show the name as the library's errors do: escaped, and cut.
TEST_F(CliRun, WarningsEscapeAndCutTheName) {
    const std::string name = "evil\x1b[2J\x07" + std::string(5000, 'n');
    auto cli = start({"--watchdog-timeout", "1500ms", "run", name, "--", "sleep", "30"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"EXISTS", name}) == 1; })) << cli->err();
    raw->integer({"DEL", name});  // lost: one warning then, one at the release
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM);
    const std::string shown = "'evil\\x1b[2J\\x07" + std::string(128 - 9, 'n') + "'... (5009 bytes)";
    EXPECT_NE(result.err.find("lost the lock " + shown + " ("), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("the lock " + shown + " was no longer held"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find_first_of("\x1b\x07"), std::string::npos) << result.err;
    EXPECT_LT(result.err.size(), 1000u) << result.err;
}

TEST_F(CliUnlock, ForceFreesALockHeldByAnotherClient) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    const auto result = holdfast({"unlock", "--force", "job"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.out.find("job: force-unlocked"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("was held by: " + client.current_owner() + " (hold count 1)"), std::string::npos)
        << result.out;
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);

    const auto again = holdfast({"unlock", "--force", "job"});
    EXPECT_EQ(again.status, 0);
    EXPECT_EQ(again.out, "job: was not locked; nothing deleted\n");
}

TEST_F(CliUnlock, WithoutForceRefusesAndKeepsTheLock) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    const auto result = holdfast({"unlock", "job"});
    EXPECT_EQ(result.status, 2);
    EXPECT_NE(result.err.find("refusing to unlock 'job'"), std::string::npos) << result.err;
    EXPECT_TRUE(lock.is_held_by_current_thread());
    lock.unlock();
}

TEST_F(CliUnlock, ForceLeavesAKeyOfAnotherTypeAlone) {
    raw->command({"SET", "job", "x"});  // a string without an expiry: data, not a simple lock
    EXPECT_EQ(holdfast({"unlock", "--force", "job"}).status, 1);
    EXPECT_EQ(raw->string({"GET", "job"}), "x");
    raw->command({"SET", "permits", "3"});
    const auto semaphore = holdfast({"unlock", "--force", "permits"});
    EXPECT_EQ(semaphore.status, 1);
    EXPECT_NE(semaphore.err.find("a semaphore (or a count-down latch) that keeps no record"), std::string::npos)
        << semaphore.err;
    EXPECT_EQ(raw->string({"GET", "permits"}), "3");
}

// Each lock is broken its own way: the read-write lock's and the simple lock's
// keys are deleted too, and the waiters of each are woken.
TEST_F(CliUnlock, ForceFreesEveryKindOfLock) {
    Client client(config());
    ReadWriteLock rw(client, "report");
    rw.write_lock().lock();
    const auto written = holdfast({"unlock", "--force", "report"});
    EXPECT_EQ(written.status, 0) << written.err;
    EXPECT_NE(written.out.find("was held by: " + client.current_owner() + " (writer, hold count 1)"),
              std::string::npos)
        << written.out;
    EXPECT_EQ(raw->integer({"EXISTS", "report"}), 0);

    SimpleLock simple(client, "door");
    simple.lock();
    const auto simple_out = holdfast({"unlock", "--force", "door"});
    EXPECT_EQ(simple_out.status, 0) << simple_out.err;
    EXPECT_NE(simple_out.out.find("was held by token: " + client.current_owner()), std::string::npos)
        << simple_out.out;
    EXPECT_EQ(raw->integer({"EXISTS", "door"}), 0);

    Client other(config());
    FairLock fair(client, "queue"), waiting(other, "queue");
    fair.lock();
    auto waiter = std::async(std::launch::async, [&] {
        const bool got = waiting.try_lock_for(std::chrono::seconds(20));
        if (got) waiting.unlock();
        return got;
    });
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{queue}"}) == 1; }));
    EXPECT_EQ(holdfast({"unlock", "--force", "queue"}).status, 0);
    ASSERT_EQ(waiter.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_TRUE(waiter.get());
}

TEST_F(CliUsage, TakesTheServerFromRedisUrl) {
    auto cli = std::make_unique<Cli>(std::vector<std::string>{"status", "job"}, dir,
                                     std::vector<std::string>{"REDIS_URL=" + server->url()});
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "job: free\n" + server_line());
}

TEST_F(CliUsage, AnUnreachableServerExits69) {
    const support::ClosedPort closed;
    const auto result = std::make_unique<Cli>(
        std::vector<std::string>{"--url", "redis://127.0.0.1:" + std::to_string(closed.port()), "status", "job"},
        dir, std::vector<std::string>{})->wait();
    EXPECT_EQ(result.status, 69);
    EXPECT_NE(result.err.find("127.0.0.1"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace holdfast::testing
