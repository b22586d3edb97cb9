// The holdfast tool over TLS: --tls-ca makes the test CA trusted; without it
// the certificate is refused with a message that says so.
#include "cli/cli_process.hpp"
#include "test_certs.hpp"

namespace holdfast::testing {
namespace {

class CliTls : public ::testing::Test {
protected:
    void TearDown() override { fs::remove_all(dir); }

    Finished holdfast(std::vector<std::string> args) { return Cli(args, dir, {}).wait(); }

    support::TestCerts certs;
    support::RedisServer server{support::TlsServer{certs.server_cert, certs.server_key, certs.ca}};
    support::SyncRedis raw{server.port()};
    fs::path dir = make_test_dir();
};

TEST_F(CliTls, RunsWithTheCaGiven) {
    const auto result = holdfast({"--url", server.tls_url(), "--tls-ca", certs.ca, "run", "job", "--", "sh", "-c",
                                  "redis-cli -p " + std::to_string(server.port()) + " EXISTS job > " +
                                      (dir / "held").string()});
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(read_file(dir / "held"), "1\n");
    EXPECT_EQ(raw.integer({"EXISTS", "job"}), 0);
}

TEST_F(CliTls, RefusesAnUntrustedCertificateSayingSo) {
    const auto result = holdfast({"--url", server.tls_url(), "run", "job", "--", "true"});
    EXPECT_NE(result.status, 0);
    EXPECT_NE(result.err.find("certificate verify failed"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("--tls-ca"), std::string::npos) << result.err;
    EXPECT_LT(result.elapsed, std::chrono::seconds(10));
}

}  // namespace
}  // namespace holdfast::testing
