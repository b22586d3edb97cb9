// The library's settings on the command line (--timeout, --tls-server-name),
// --json on unlock and on every error, and status with several names.
#include <nlohmann/json.hpp>

#include "cli/cli_process.hpp"
#include "tcp_proxy.hpp"
#include "test_certs.hpp"

namespace holdfast::testing {
namespace {

using CliFlags = CliTest;
using nlohmann::json;

TEST_F(CliFlags, TimeoutBoundsAServerThatDoesNotAnswer) {
    support::TcpProxy proxy(server->port());
    proxy.freeze();  // connections are accepted by the kernel, and never answered
    const std::string silent = "redis://127.0.0.1:" + std::to_string(proxy.port());
    const auto result = Cli({"--url", silent, "--timeout", "300ms", "status", "job"}, dir, {}).wait();
    EXPECT_EQ(result.status, 69) << result.err;
    EXPECT_NE(result.err.find("300 ms"), std::string::npos) << result.err;
    EXPECT_EQ(holdfast({"--timeout", "0", "status", "job"}).status, 2);
    proxy.heal();
}

TEST(CliTlsServerName, ChoosesTheNameTheCertificateMustCarry) {
    support::TestCerts certs;
    support::RedisServer server{support::TlsServer{certs.server_cert, certs.server_key, certs.ca}};
    const fs::path dir = make_test_dir();
    auto status_as = [&](const std::string& name) {
        return Cli({"--url", server.tls_url(), "--tls-ca", certs.ca, "--tls-server-name", name, "status", "job"}, dir, {})
            .wait();
    };
    const auto right = status_as("localhost");  // the certificate's name, though we connect to 127.0.0.1
    EXPECT_EQ(right.status, 0) << right.err;
    const auto wrong = status_as("redis.example");
    EXPECT_EQ(wrong.status, 69);
    EXPECT_NE(wrong.err.find("certificate verify failed"), std::string::npos) << wrong.err;
    EXPECT_EQ(Cli({"--url", server.url(), "--tls-server-name", "localhost", "status", "job"}, dir, {}).wait().status, 2);
    fs::remove_all(dir);
}

TEST_F(CliFlags, UnlockJsonSaysWhatItDid) {
    const auto held = hold("job");
    const auto result = holdfast({"unlock", "--force", "--json", "job"});
    ASSERT_EQ(result.status, 0) << result.err;
    const auto done = json::parse(result.out);
    EXPECT_EQ(done["name"], "job");
    EXPECT_EQ(done["unlocked"], true);
    EXPECT_EQ(done["was"]["kind"], "lock");
    EXPECT_EQ(done["was"]["holders"][0]["owner"], held->client.current_owner());
    EXPECT_EQ(done["permits_available"], nullptr);
    EXPECT_EQ(json::parse(holdfast({"unlock", "--force", "--json", "job"}).out)["unlocked"], false);

    raw->command({"SET", "pool", "0"});
    const auto repaired = json::parse(holdfast({"unlock", "--force", "--permits", "3", "--json", "pool"}).out);
    EXPECT_EQ(repaired["unlocked"], true);
    EXPECT_EQ(repaired["was"]["kind"], "counter");
    EXPECT_EQ(repaired["permits_available"], 3);
}

// Every error, whatever its exit code, is one JSON object on stdout.
TEST_F(CliFlags, JsonReportsEveryError) {
    auto error_of = [](const Finished& result, int code) {
        EXPECT_EQ(result.status, code) << result.err;
        const auto error = json::parse(result.out, nullptr, false);
        EXPECT_FALSE(error.is_discarded()) << "not JSON: " << result.out;
        if (error.is_discarded()) return std::string();
        EXPECT_EQ(error["error"]["exit_code"], code) << result.out;
        return error["error"]["message"].get<std::string>();
    };
    const support::ClosedPort closed;
    const std::string nowhere = "redis://127.0.0.1:" + std::to_string(closed.port());
    EXPECT_NE(error_of(Cli({"--url", nowhere, "status", "--json", "job"}, dir, {}).wait(), 69).find("127.0.0.1"),
              std::string::npos);
    EXPECT_NE(error_of(Cli({"--url", nowhere, "list", "--json"}, dir, {}).wait(), 69).find("127.0.0.1"),
              std::string::npos);
    EXPECT_NE(error_of(holdfast({"unlock", "--json", "job"}), 2).find("refusing to unlock 'job'"), std::string::npos);
    EXPECT_FALSE(error_of(holdfast({"status", "--json"}), 2).empty());
    raw->command({"RPUSH", "queue", "x"});
    EXPECT_NE(error_of(holdfast({"unlock", "--force", "--json", "queue"}), 1).find("not a lock"), std::string::npos);

    const auto held = hold("job");
    EXPECT_NE(error_of(holdfast({"run", "--json", "-n", "job"}), 75).find("timed out"), std::string::npos);
}

TEST_F(CliFlags, StatusTakesSeveralNames) {
    const auto held = hold("a");
    const auto result = holdfast({"status", "a", "b"});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(result.out.starts_with("a: locked\n")) << result.out;
    EXPECT_TRUE(result.out.ends_with("b: free\n" + server_line())) << result.out;

    raw->command({"RPUSH", "q", "x"});
    const auto lines = holdfast({"status", "--json", "a", "q", "b"});
    EXPECT_EQ(lines.status, 1) << "q is no primitive";
    std::istringstream in(lines.out);
    std::vector<std::string> kinds;
    for (std::string line; std::getline(in, line);) kinds.push_back(json::parse(line)["kind"]);
    EXPECT_EQ(kinds, (std::vector<std::string>{"lock", "not_a_primitive", "free"}));
    // Each names where it was read and what runs there, as the text's last line does.
    const json first = json::parse(lines.out.substr(0, lines.out.find('\n')));
    EXPECT_EQ(first["server"], "127.0.0.1:" + std::to_string(server->port()));
    EXPECT_EQ("  server: " + first["server"].get<std::string>() + " (" + first["server_version"].get<std::string>() +
                  ")\n",
              server_line());
    const auto text = holdfast({"status", "q", "b"});
    EXPECT_EQ(text.status, 1);
    EXPECT_EQ(text.out, "b: free\n" + server_line());
    EXPECT_NE(text.err.find("cannot show 'q'"), std::string::npos) << text.err;
}

// --fair-lock-wait-timeout: the queue's deadline arithmetic uses the CLI's
// budget (Redisson's fairLockWaitTimeout), which every client of a queue shares.
TEST_F(CliTest, TheFairLockWaitTimeoutIsTheQueuesBudget) {
    Client holder_client(config());
    FairLock held(holder_client, "line");
    held.lock(std::chrono::seconds(60));
    auto cli = start({"--fair-lock-wait-timeout", "20s", "run", "--fair", "--wait", "60s", "line", "--", "true"});
    ASSERT_TRUE(eventually([&] { return raw->integer({"LLEN", "redisson_lock_queue:{line}"}) == 1; }));
    const std::string waiter = raw->string({"LINDEX", "redisson_lock_queue:{line}", "0"});
    const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
    // Chained as RFairLock chains it: the holder's TTL (60 s) plus the waiter's budget.
    const long long deadline = std::stoll(raw->string({"ZSCORE", "redisson_lock_timeout:{line}", waiter}));
    EXPECT_GT(deadline, now_ms + 60000 + 20000 - 5000);
    EXPECT_LE(deadline, now_ms + 60000 + 20000 + 1000);
    held.unlock();
    EXPECT_EQ(cli->wait().status, 0);
}

}  // namespace
}  // namespace holdfast::testing
