// Passwords off the command line: the URL from HOLDFAST_URL or --url-file
// (a password in --url shows in ps for the whole run), and the sentinels' own
// password in the URL.
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

class CliSecrets : public CliTest {
protected:
    std::vector<std::string> server_args() override { return {"--requirepass", "s3cret"}; }
    void SetUp() override {
        CliTest::SetUp();
        raw->command({"AUTH", "s3cret"});
    }
    std::string url_with_password() const { return "redis://:s3cret@127.0.0.1:" + std::to_string(server->port()); }
    Finished holdfast_with(std::vector<std::string> args, std::vector<std::string> env) {
        return Cli(args, dir, env).wait();
    }
};

TEST_F(CliSecrets, HoldfastUrlKeepsThePasswordOffTheCommandLine) {
    Cli cli({"run", "job", "--", "sh", "-c", "touch " + path("started") + "; sleep 30"}, dir,
            {"HOLDFAST_URL=" + url_with_password()});
    ASSERT_TRUE(eventually([&] { return fs::exists(path("started")); }, 20s)) << cli.err();
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 1);
    const std::string command_line = read_file("/proc/" + std::to_string(cli.pid()) + "/cmdline");
    EXPECT_NE(command_line.find("run"), std::string::npos);
    EXPECT_EQ(command_line.find("s3cret"), std::string::npos) << "ps shows the password";
    ::kill(cli.pid(), SIGTERM);
    EXPECT_EQ(cli.wait().status, 128 + SIGTERM);
    EXPECT_EQ(raw->integer({"EXISTS", "job"}), 0);
}

TEST_F(CliSecrets, UrlFileIsReadFromItsFirstLine) {
    std::ofstream(path("url")) << url_with_password() << "\r\nthe second line is not read\n";
    const auto result = holdfast_with({"--url-file", path("url"), "status", "job"}, {});
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.out, "job: free\n" + server_line());

    std::ofstream(path("empty")) << "\n";
    const auto empty = holdfast_with({"--url-file", path("empty"), "status", "job"}, {});
    EXPECT_EQ(empty.status, 2);
    EXPECT_NE(empty.err.find("has no URL on its first line"), std::string::npos) << empty.err;
    EXPECT_EQ(holdfast_with({"--url-file", path("missing"), "status", "job"}, {}).status, 2);
    EXPECT_EQ(holdfast_with({"--url-file", path("url"), "--url", url_with_password(), "status", "job"}, {}).status, 2);
}

// A --url-file with a password that every user can read is used, with a
// warning naming the file and the fix (ssh refuses such a key file); one only
// its owner reads, or one without a password, says nothing.
TEST_F(CliSecrets, AUrlFileOthersCanReadIsWarnedOf) {
    std::ofstream(path("url")) << url_with_password() << '\n';
    fs::permissions(path("url"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                     fs::perms::others_read);
    const auto open = holdfast_with({"--url-file", path("url"), "status", "job"}, {});
    EXPECT_EQ(open.status, 0) << open.err;
    EXPECT_EQ(open.out, "job: free\n" + server_line());
    for (const std::string& part : {"--url-file '" + path("url") + "' holds a password", std::string("(mode 0644)"),
                                    "chmod 600 '" + path("url") + "'"})
        EXPECT_NE(open.err.find(part), std::string::npos) << part << " missing in: " << open.err;
    EXPECT_EQ(open.err.find("s3cret"), std::string::npos) << "the warning shows the password: " << open.err;

    fs::permissions(path("url"), fs::perms::owner_read | fs::perms::owner_write);
    const auto closed = holdfast_with({"--url-file", path("url"), "status", "job"}, {});
    EXPECT_EQ(closed.status, 0) << closed.err;
    EXPECT_EQ(closed.err, "");

    std::ofstream(path("public")) << "redis://127.0.0.1:" << server->port() << '\n';
    fs::permissions(path("public"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
    raw->command({"CONFIG", "SET", "requirepass", ""});
    const auto no_password = holdfast_with({"--url-file", path("public"), "status", "job"}, {});
    EXPECT_EQ(no_password.status, 0) << no_password.err;
    EXPECT_EQ(no_password.err, "");
}

// A password in --url is visible in ps for the whole run: used, with a
// warning that points to HOLDFAST_URL and --url-file (as redis-cli warns of
// -a); given in HOLDFAST_URL, nothing is said.
TEST_F(CliSecrets, APasswordInUrlIsWarnedOf) {
    const auto given = holdfast_with({"--url", url_with_password(), "status", "job"}, {});
    EXPECT_EQ(given.status, 0) << given.err;
    EXPECT_EQ(given.out, "job: free\n" + server_line());
    for (const std::string part : {"password in --url shows in ps", "HOLDFAST_URL", "--url-file"})
        EXPECT_NE(given.err.find(part), std::string::npos) << part << " missing in: " << given.err;
    EXPECT_EQ(given.err.find("s3cret"), std::string::npos) << "the warning shows the password: " << given.err;

    const auto from_environment = holdfast_with({"status", "job"}, {"HOLDFAST_URL=" + url_with_password()});
    EXPECT_EQ(from_environment.status, 0) << from_environment.err;
    EXPECT_EQ(from_environment.err, "");
}

// --url, then --url-file, then HOLDFAST_URL, then REDIS_URL: the first given wins.
TEST_F(CliSecrets, TheFirstUrlGivenWins) {
    const support::ClosedPort closed;
    const std::string nowhere = "redis://127.0.0.1:" + std::to_string(closed.port());
    const std::string wrong = "redis://:wrong@127.0.0.1:" + std::to_string(server->port());
    EXPECT_EQ(holdfast_with({"status", "job"}, {"HOLDFAST_URL=" + url_with_password(), "REDIS_URL=" + nowhere}).status, 0);
    EXPECT_EQ(holdfast_with({"status", "job"}, {"REDIS_URL=" + url_with_password()}).status, 0);
    EXPECT_EQ(holdfast_with({"--url", url_with_password(), "status", "job"}, {"HOLDFAST_URL=" + nowhere}).status, 0);
    std::ofstream(path("url")) << url_with_password() << '\n';
    EXPECT_EQ(holdfast_with({"--url-file", path("url"), "status", "job"}, {"HOLDFAST_URL=" + nowhere}).status, 0);
    const auto refused = holdfast_with({"status", "job"}, {"HOLDFAST_URL=" + wrong});
    EXPECT_EQ(refused.status, 69);
    EXPECT_EQ(refused.err.find("wrong"), std::string::npos) << "the error shows the password: " << refused.err;
}

// A sentinel with requirepass: its password goes in the URL's query, the
// master's before the '@'.
TEST(CliSentinelSecrets, TheSentinelsPasswordIsInTheUrl) {
    support::RedisServer master(std::vector<std::string>{"--requirepass", "masterpw"});
    const std::string conf = "sentinel monitor guarded 127.0.0.1 " + std::to_string(master.port()) +
                             " 1\nsentinel auth-pass guarded masterpw\n";
    support::RedisServer sentinel({"--sentinel", "--requirepass", "sentpw"}, conf);
    const fs::path dir = make_test_dir();
    const std::string sentinels = "127.0.0.1:" + std::to_string(sentinel.port());

    const auto held = Cli({"run", "job", "--", "redis-cli", "-p", std::to_string(master.port()), "-a", "masterpw",
                           "--no-auth-warning", "EXISTS", "job"},
                          dir, {"HOLDFAST_URL=redis-sentinel://:masterpw@" + sentinels + "?sentinel_password=sentpw#guarded"})
                          .wait();
    EXPECT_EQ(held.status, 0) << held.err;
    EXPECT_EQ(held.out, "1\n");

    const auto refused =
        Cli({"status", "job"}, dir, {"HOLDFAST_URL=redis-sentinel://:masterpw@" + sentinels + "#guarded"}).wait();
    EXPECT_EQ(refused.status, 69);
    EXPECT_NE(refused.err.find("AUTH"), std::string::npos) << refused.err;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace holdfast::testing
