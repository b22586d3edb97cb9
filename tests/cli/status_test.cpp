// holdfast status: each primitive's layout, written by the real primitive where
// holdfast has it, else with the raw commands Redisson (or redsync) sends.
#include <regex>

#include "cli/cli_process.hpp"
#include "inspect/layouts.hpp"

namespace holdfast::testing {
namespace {

using CliStatus = CliTest;

std::int64_t epoch_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The output with every duration (850ms, 29.873s) as D: the rest is exact.
std::string timeless(const std::string& out) {
    static const std::regex duration(R"(\b[0-9]+(\.[0-9]+)?m?s\b)");
    return std::regex_replace(out, duration, "D");
}

TEST_F(CliStatus, ReportsAFreeLock) {
    const auto result = holdfast({"status", "job"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "job: free\n" + server_line());
}

TEST_F(CliStatus, ReportsHolderHoldCountAndTtl) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    lock.lock();
    const auto result = holdfast({"status", "job"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "job: locked\n"
                                    "  ttl: D\n"
                                    "  holder: " + client.current_owner() + " (hold count 2)\n" +
                                        timeless(server_line()));
    lock.unlock();
    lock.unlock();
}

TEST_F(CliStatus, AKeyOfAnotherTypeExits1) {
    raw->command({"RPUSH", "job", "x"});
    const auto result = holdfast({"status", "job"});
    EXPECT_EQ(result.status, 1);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "holdfast: cannot show 'job' on " + config().server_name() +
                              ": the key holds a list, not a lock or any other holdfast/Redisson primitive; pick "
                              "another name or delete the key\n");
}

TEST_F(CliStatus, AHashThatIsNotALockExits1) {
    raw->command({"HSET", "job", "color", "blue"});
    const auto result = holdfast({"status", "job"});
    EXPECT_EQ(result.status, 1);
    EXPECT_NE(result.err.find("the key holds a hash with field 'color' = 'blue' (not a hold count), not a lock"),
              std::string::npos)
        << result.err;
}

TEST_F(CliStatus, ShowsAFairLocksQueueWithEachWaitersDeadline) {
    QueuedFairLock fair(config(), *raw, "job");
    ASSERT_TRUE(fair.ready());
    // Behind it a Redisson waiter (five-minute budget) and a dead one whose deadline has passed.
    fair.append("java:1", epoch_ms() + 300000);
    fair.append("dead:1", epoch_ms() - 2000);

    const auto result = holdfast({"status", "job"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "job: locked\n"
                                    "  ttl: D\n"
                                    "  holder: " + fair.holder() + " (hold count 1)\n"
                                    "  fair-lock queue: 3 waiting\n"
                                    "    1. " + fair.waiter() + " (deadline in D)\n"
                                    "    2. java:1 (deadline in D)\n"
                                    "    3. dead:1 (deadline passed D ago; dropped when it reaches the head)\n" +
                                        timeless(server_line()));
}

TEST_F(CliStatus, ShowsTheLastFencingTokenHeldOrFree) {
    Client client(config());
    FencedLock lock(client, "ledger");
    const std::string token = std::to_string(lock.lock_and_get_token());
    auto result = holdfast({"status", "ledger"});
    EXPECT_EQ(timeless(result.out), "ledger: locked\n"
                                    "  ttl: D\n"
                                    "  holder: " + client.current_owner() + " (hold count 1)\n"
                                    "  fencing token: " + token + " (the last handed out)\n" +
                                        timeless(server_line()));
    lock.unlock();
    result = holdfast({"status", "ledger"});
    EXPECT_EQ(result.out, "ledger: free\n  fencing token: " + token + " (the last handed out)\n" + server_line());
}

TEST_F(CliStatus, ShowsAReadLocksReadersAndExpiredReadLeases) {
    Client client(config());
    ReadWriteLock rw(client, "doc");
    const std::string other = hold_reads(client, rw);
    raw->command({"DEL", "{doc}:" + client.current_owner() + ":rwlock_timeout:1"});
    const auto result = holdfast({"status", "doc"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "doc: locked for reading (read-write lock)\n"
                                    "  ttl: D\n"
                                    "  reader: " + client.current_owner() + " (hold count 2, 1 lease expired)\n"
                                    "  reader: " + other + " (hold count 1)\n" + timeless(server_line()));
}

TEST_F(CliStatus, ShowsAWriteLocksWriterAndItsDowngradedReads) {
    Client client(config());
    ReadWriteLock rw(client, "doc");
    rw.write_lock().lock();
    rw.read_lock().lock();
    const auto result = holdfast({"status", "doc"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "doc: locked for writing (read-write lock)\n"
                                    "  ttl: D\n"
                                    "  writer: " + client.current_owner() + " (hold count 1)\n"
                                    "  reader: " + client.current_owner() + " (hold count 1)\n" +
                                        timeless(server_line()));
    rw.read_lock().unlock();
    rw.write_lock().unlock();
}

TEST_F(CliStatus, ShowsACounterAsBothSemaphoreAndLatch) {
    raw->command({"SET", "gate", "1", "NX"});  // RSemaphore.trySetPermits(1), RCountDownLatch.trySetCount(1)
    const auto result = holdfast({"status", "gate"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "gate: semaphore or count-down latch (Redisson stores both as one integer)\n"
                          "  ttl: none (the key never expires)\n"
                          "  semaphore: 1 permit available\n"
                          "  count-down latch: count 1\n" + server_line());
}

TEST_F(CliStatus, ShowsAnExpirableSemaphoresPermitsWithExpiries) {
    raw->command({"SET", "pool", "2"});
    raw->command({"ZADD", "{pool}:timeout", "922337203685477", std::string(16, '\x01'),
                  std::to_string(epoch_ms() + 60000), std::string(16, '\xfe'), std::to_string(epoch_ms() - 500),
                  std::string(16, '\0')});
    const auto result = holdfast({"status", "pool"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "pool: permit-expirable semaphore\n"
                                    "  ttl: none (the key never expires)\n"
                                    "  permits available: 2\n"
                                    "  permits taken: 3\n"
                                    "    00000000000000000000000000000000 (expired D ago; returned at the next "
                                    "acquire)\n"
                                    "    fefefefefefefefefefefefefefefefe (expires in D)\n"
                                    "    01010101010101010101010101010101 (never expires)\n" +
                                        timeless(server_line()));
}

TEST_F(CliStatus, ShowsASimpleLocksTokenAndTtl) {
    // As go-redsync writes it: 16 random bytes in base64, SET NX PX.
    raw->command({"SET", "job", "q2rBnx4H0dTLXX0g6JmPyA==", "NX", "PX", "8000"});
    auto result = holdfast({"status", "job"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "job: locked (simple lock: SET NX PX)\n"
                                    "  ttl: D\n"
                                    "  token: q2rBnx4H0dTLXX0g6JmPyA==\n" + timeless(server_line()));
    // Holdfast's own SimpleLock: its token is the owner id.
    Client client(config());
    SimpleLock lock(client, "mine");
    lock.lock();
    result = holdfast({"status", "mine"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(timeless(result.out), "mine: locked (simple lock: SET NX PX)\n"
                                    "  ttl: D\n"
                                    "  token: " + client.current_owner() + "\n" + timeless(server_line()));
    lock.unlock();
    // Raw bytes print escaped.
    raw->command({"SET", "raw", std::string("a\x01\\b", 4), "PX", "8000"});
    result = holdfast({"status", "raw"});
    EXPECT_NE(result.out.find("  token: a\\x01\\\\b\n"), std::string::npos) << result.out;
}

// The bytes of `text` a terminal would act on: C0 controls but the newline, DEL, C1 controls.
std::string controls_in(const std::string& text) {
    std::string found;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool c1 = c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0;
        if ((c < 0x20 && c != '\n') || c == 0x7f || c1) found += std::to_string(c) + ' ';
    }
    return found;
}

// Names and owners are whatever bytes someone wrote: escaped and cut, as the
// library's errors show them, so none of them garbles the terminal or floods it.
TEST_F(CliStatus, EscapesAndCutsNamesAndOwners) {
    const std::string esc = "evil\x1b]0;title\x07\x1b[2J\xc2\x9b" "31m";  // U+009B: CSI
    const std::string huge(5000, 'n');
    for (const std::string& name : {esc, huge, esc + huge}) {
        const std::string owner = esc + huge + ":1";
        raw->command({"HSET", name, owner, "1"});
        raw->command({"PEXPIRE", name, "30000"});
        const auto status = holdfast({"status", name});
        EXPECT_EQ(status.status, 0) << status.err;
        EXPECT_EQ(controls_in(status.out + status.err), "") << status.out;
        EXPECT_LT(status.out.size(), 1000u) << status.out;
        EXPECT_NE(status.out.find("  holder: evil\\x1b]0;title\\x07\\x1b[2J\\xc2\\x9b31m"), std::string::npos)
            << status.out;
        EXPECT_NE(status.out.find("... (" + std::to_string(owner.size()) + " bytes)"), std::string::npos)
            << status.out;

        const auto unlock = holdfast({"unlock", "--force", name});
        EXPECT_EQ(unlock.status, 0) << unlock.err;
        EXPECT_EQ(controls_in(unlock.out + unlock.err), "") << unlock.out;
        EXPECT_LT(unlock.out.size(), 1000u) << unlock.out;
        EXPECT_NE(unlock.out.find("force-unlocked"), std::string::npos) << unlock.out;
        EXPECT_EQ(raw->integer({"EXISTS", name}), 0);

        const auto refused = holdfast({"unlock", name});
        EXPECT_EQ(refused.status, 2);
        EXPECT_EQ(controls_in(refused.err), "") << refused.err;
        EXPECT_LT(refused.err.size(), 1000u) << refused.err;
    }
}

// A count beyond INT64 (written by hand: holdfast refuses to write one) is no
// semaphore Redis can count with; status says so instead of calling it a lock.
TEST_F(CliStatus, ACountBeyondInt64IsReportedAsSuch) {
    raw->command({"SET", "pool", "99999999999999999999", "PX", "60000"});
    const auto result = holdfast({"status", "pool"});
    EXPECT_EQ(result.status, 1);
    EXPECT_NE(result.err.find("beyond"), std::string::npos) << result.err;
    EXPECT_EQ(holdfast({"unlock", "--force", "pool"}).status, 1);
    EXPECT_EQ(raw->string({"GET", "pool"}), "99999999999999999999");
}

}  // namespace
}  // namespace holdfast::testing
