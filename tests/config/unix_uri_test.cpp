// A unix:// URI carries a password (and a user), as redis:// does: against a
// server that listens on a Unix socket and requires one.
#include <unistd.h>

#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

class UnixUriPassword : public RedisTest {
protected:
    std::vector<std::string> server_args() override {
        socket = "/tmp/holdfast-uri-" + std::to_string(::getpid()) + ".sock";
        return {"--unixsocket", socket, "--unixsocketperm", "700", "--requirepass", "s3 cret@"};
    }
    void SetUp() override {
        RedisTest::SetUp();
        raw->command({"AUTH", "s3 cret@"});
    }
    void TearDown() override { ::unlink(socket.c_str()); }

    // Takes and releases a lock through `uri`; the server saw it.
    void locks_through(const std::string& uri) {
        Client client(uri);
        Lock lock(client, "local");
        lock.lock();
        EXPECT_EQ(raw->string({"HGET", "local", client.current_owner()}), "1") << uri;
        lock.unlock();
    }

    std::string socket;
};

TEST_F(UnixUriPassword, TakesThePasswordBeforeThePath) { locks_through("unix://:s3%20cret%40@" + socket); }

TEST_F(UnixUriPassword, TakesAUserAndPassword) { locks_through("unix://default:s3%20cret%40@" + socket); }

TEST_F(UnixUriPassword, TakesThePasswordAsAParameter) {
    locks_through("unix://" + socket + "?password=s3%20cret%40");
    locks_through("unix://" + socket + "?db=0&username=default&password=s3%20cret%40");
}

TEST_F(UnixUriPassword, AWrongOrMissingPasswordIsAnAuthError) {
    EXPECT_THROW(Client("unix://:wrong@" + socket), AuthError);
    EXPECT_THROW(Client("unix://" + socket), AuthError);
}

}  // namespace
}  // namespace holdfast::testing
