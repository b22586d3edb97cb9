// holdfast run --semaphore takes a leased permit (Redisson's
// RPermitExpirableSemaphore layout), renewed while the command runs: a holder
// killed with -9 cannot keep it beyond one lease, and unlock --force knows how
// to take permits back.
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using CliSemaphore = CliTest;

const std::string timeouts = "{pool}:timeout";  // the permits taken, scored by the end of their lease

// The lease end (epoch ms) of the one permit taken, or -1.
long long lease_end(support::SyncRedis& raw) {
    auto reply = raw.command({"ZRANGE", timeouts, "0", "-1", "WITHSCORES"});
    if (reply->elements != 2) return -1;
    return std::stoll(reply->element[1]->str);
}

TEST_F(CliSemaphore, APermitOfAHolderKilledWithMinus9ComesBackWithinOneLease) {
    auto first = start({"--watchdog-timeout", "2s", "run", "--semaphore", "1", "pool", "--", "sleep", "100"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"ZCARD", timeouts}) == 1; })) << first->err();
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    ::kill(first->pid(), SIGKILL);
    EXPECT_EQ(first->wait().status, 128 + SIGKILL);

    // Waits: the permit is not given back, it comes back when its lease ends.
    const auto second = holdfast({"run", "--semaphore", "1", "pool", "--", "touch", path("second")});
    EXPECT_EQ(second.status, 0) << second.err;
    EXPECT_TRUE(fs::exists(path("second")));
    EXPECT_LT(second.elapsed, 2s + 8s) << "a lease is 2 s; the rest is slack for a loaded machine";
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    EXPECT_EQ(raw->integer({"EXISTS", timeouts}), 0);
}

TEST_F(CliSemaphore, ThePermitIsRenewedWhileTheCommandRuns) {
    auto holder = start({"--watchdog-timeout", "1s", "run", "--semaphore", "1", "pool", "--", "sh", "-c",
                         "until [ -e " + path("done") + " ]; do sleep 0.05; done"});
    ASSERT_TRUE(eventually([&] { return lease_end(*raw) > 0; })) << holder->err();
    const long long first_end = lease_end(*raw);
    // Renewed every third of a second: the lease end moves past where one lease would have ended.
    EXPECT_TRUE(eventually([&] { return lease_end(*raw) > first_end + 1000; }, 20s)) << holder->err();
    const auto other = holdfast({"run", "--semaphore", "1", "--wait", "0", "pool", "--", "true"});
    EXPECT_EQ(other.status, 75) << "the permit lapsed while its command ran: " << other.err;
    std::ofstream(path("done")).flush();
    const auto result = holder->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    EXPECT_EQ(raw->integer({"EXISTS", timeouts}), 0);
}

// --lease gives the permit a fixed lease, not renewed: the command is told
// before it ends, while the server still counts the permit as taken.
TEST_F(CliSemaphore, LeaseGivesAFixedLeaseAndStopsTheCommandBeforeItEnds) {
    // How many permits' leases have not ended by the server's clock, from a script file: the trap quotes.
    std::ofstream(path("taken.sh"))
        << "redis-cli -p " << server->port()
        << " EVAL \"local t = redis.call('time'); return redis.call('zcount', KEYS[1], t[1] * 1000 + "
           "math.floor(t[2] / 1000), '+inf')\" 1 '" << timeouts << "'\n";
    auto cli = start({"run", "--semaphore", "1", "--lease", "1s", "pool", "--", "sh", "-c",
                      "trap 'sh " + path("taken.sh") + " > " + path("taken") + "; exit 0' TERM; sleep 30 & wait"});
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(path("taken")), "1\n") << "SIGTERM came only after the permit's lease had ended";
    EXPECT_NE(result.err.find("the 1s lease on the permit of the semaphore 'pool' is running out; sending SIGTERM"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
}

TEST_F(CliSemaphore, ForceUnlockTakesThePermitsBackAndTheHolderStops) {
    auto holder = start({"--watchdog-timeout", "1500ms", "run", "--semaphore", "2", "pool", "--", "sleep", "100"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"ZCARD", timeouts}) == 1; })) << holder->err();
    const auto repaired = holdfast({"unlock", "--force", "pool"});
    EXPECT_EQ(repaired.status, 0) << repaired.err;
    EXPECT_NE(repaired.out.find("pool: repaired the semaphore\n  took back permit: "), std::string::npos)
        << repaired.out;
    EXPECT_NE(repaired.out.find("permits available: 2\n"), std::string::npos) << repaired.out;
    EXPECT_EQ(raw->string({"GET", "pool"}), "2");

    const auto result = holder->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM) << result.err;
    EXPECT_NE(result.err.find("lost the permit of the semaphore 'pool' ("), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("nothing to give back"), std::string::npos) << result.err;
    EXPECT_EQ(raw->string({"GET", "pool"}), "2") << "the permit went back twice";
}

// A plain counter keeps no record of its holders (holdfast 0.1, RSemaphore):
// only --permits N repairs it, by setting the free count.
TEST_F(CliSemaphore, ForceUnlockWithPermitsResetsACounter) {
    raw->command({"SET", "pool", "0"});  // two permits leaked by holders killed long ago
    const auto refused = holdfast({"unlock", "--force", "pool"});
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("holdfast unlock --force --permits N pool"), std::string::npos) << refused.err;
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");

    const auto reset = holdfast({"unlock", "--force", "--permits", "2", "pool"});
    EXPECT_EQ(reset.status, 0) << reset.err;
    EXPECT_NE(reset.out.find("free count set to 2 (was 0)"), std::string::npos) << reset.out;
    EXPECT_EQ(raw->string({"GET", "pool"}), "2");
    EXPECT_EQ(holdfast({"run", "--semaphore", "2", "--wait", "0", "pool", "--", "true"}).status, 0);

    raw->command({"HSET", "job", "owner", "1"});
    EXPECT_EQ(holdfast({"unlock", "--force", "--permits", "2", "job"}).status, 2);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 1);
}

// The count is the one a plain Semaphore (holdfast 0.1's run --semaphore,
// Redisson's RSemaphore) keeps under the same name: both kinds share it.
TEST_F(CliSemaphore, SharesTheCountWithAPlainSemaphore) {
    Client client(config());
    Semaphore plain(client, "pool");
    ASSERT_TRUE(plain.try_set_permits(1));
    plain.acquire();
    EXPECT_EQ(holdfast({"run", "--semaphore", "1", "--wait", "200ms", "pool", "--", "true"}).status, 75);
    auto waiting = start({"run", "--semaphore", "1", "pool", "--", "touch", path("ran")});
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_sc:{pool}") == 1; }));
    plain.release();  // wakes the holdfast waiting
    const auto result = waiting->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(fs::exists(path("ran")));
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
}

}  // namespace
}  // namespace holdfast::testing
