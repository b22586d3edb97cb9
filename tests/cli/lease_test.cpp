// holdfast run stops its command before anyone else can take the lock (when
// the holder is cut off from Redis, when an explicit lease is about to end),
// and gives up its place in a fair queue when a signal ends its wait.
#include "cli/cli_process.hpp"
#include "tcp_proxy.hpp"

namespace holdfast::testing {
namespace {

using CliLease = CliTest;

// Arguments of `holdfast ... -- sh -c ...` whose command, sent SIGTERM,
// writes the lock's PTTL on the server at that moment to `ttl` and exits 0.
std::vector<std::string> recording_ttl(std::vector<std::string> holdfast_args, const std::string& redis_cli,
                                       const std::string& ttl, const std::string& started) {
    holdfast_args.insert(holdfast_args.end(),
                         {"--", "sh", "-c",
                          "trap '" + redis_cli + " > " + ttl + "; exit 0' TERM; touch " + started +
                              "; sleep 30 & wait"});
    return holdfast_args;
}

// The reproduction: holdfast reaches Redis through a proxy that is
// then frozen, while a second holdfast reaches it directly.
TEST_F(CliLease, PartitionedHolderStopsItsCommandBeforeTheServerLeaseEnds) {
    support::TcpProxy proxy(server->port());
    Cli cut_off(recording_ttl({"--url", "redis://127.0.0.1:" + std::to_string(proxy.port()), "--watchdog-timeout",
                               "1500ms", "run", "job"},
                              redis_cli("PTTL job"), path("ttl"), path("started")),
                dir, {});
    ASSERT_TRUE(eventually([&] { return fs::exists(path("started")); })) << cut_off.err();
    proxy.freeze();

    const auto second = holdfast({"run", "job", "--", "touch", path("second")});
    EXPECT_EQ(second.status, 0) << second.err;
    ASSERT_TRUE(eventually([&] { return !read_file(path("ttl")).empty(); }))
        << "the cut-off command was never told; stderr: " << cut_off.err();
    EXPECT_GT(std::stoll(read_file(path("ttl"))), 0) << "SIGTERM came only after the server's lease had run out";
    proxy.heal();
    const auto first = cut_off.wait();
    EXPECT_EQ(first.status, 0) << first.err;
    EXPECT_NE(first.err.find("lost the lock 'job'"), std::string::npos) << first.err;
}

// An explicit lease is not renewed: the command is stopped just before it
// ends, while the server still holds the lock for it.
TEST_F(CliLease, ExplicitLeaseStopsTheCommandBeforeItEnds) {
    auto cli = start(recording_ttl({"run", "--lease", "1s", "job"}, redis_cli("PTTL job"), path("ttl"),
                                   path("started")));
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_GT(std::stoll(read_file(path("ttl"))), 0) << "SIGTERM came only after the lease had run out";
    EXPECT_NE(result.err.find("the 1s lease on 'job' is running out; sending SIGTERM to the command"),
              std::string::npos)
        << result.err;
}

// A fair waiter ended by a signal leaves the queue at once, as a --wait
// timeout does: the waiter behind it is first when the lock is released.
TEST_F(CliLease, SignalledFairWaiterLeavesTheQueue) {
    Client client(config());
    FairLock lock(client, "job");
    lock.lock();
    auto cli = start({"run", "--fair", "job", "--", "touch", path("marker")});
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{job}"}) == 1; })) << cli->err();
    ::kill(cli->pid(), SIGTERM);
    const auto result = cli->wait();
    EXPECT_EQ(result.status, 128 + SIGTERM);
    EXPECT_FALSE(fs::exists(path("marker")));
    EXPECT_EQ(raw->integer({"LLEN", "redisson_lock_queue:{job}"}), 0);
    EXPECT_EQ(raw->integer({"ZCARD", "redisson_lock_timeout:{job}"}), 0);
    lock.unlock();
}

}  // namespace
}  // namespace holdfast::testing
