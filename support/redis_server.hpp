// Throwaway redis-server processes for tests, the demo and the benchmark:
// a free loopback port, a temp dir, stopped on destruction. Never port 6379.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace holdfast::support {

/// A TLS port beside the plain one (which stays, for the test's own plain
/// inspection connection): the server's certificate and key, the CA it checks
/// client certificates with, and whether it demands one (tls-auth-clients).
struct TlsServer {
    std::string cert_file, key_file, ca_file;
    bool auth_clients = false;
};

class RedisServer {
public:
    /// Starts `redis-server` with `extra` appended to its command line
    /// (e.g. {"--requirepass", "secret"}). Throws std::runtime_error naming
    /// the log file if it does not answer PING within 10 s.
    /// `max_port`: the highest port to pick (a cluster node's bus port is port + 10000).
    explicit RedisServer(std::vector<std::string> extra = {}, std::uint16_t max_port = 65535);
    /// Also listens for TLS on tls_port(); `config_file_text` as below.
    RedisServer(const TlsServer& tls, std::vector<std::string> extra = {}, std::string config_file_text = {});
    /// With `config_file_text` written to dir()/redis.conf and given first (a
    /// sentinel: its `sentinel monitor` lines and --sentinel).
    RedisServer(std::vector<std::string> extra, std::string config_file_text);
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    std::uint16_t port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    std::uint16_t tls_port() const { return tls_port_; }
    std::string tls_url() const { return "rediss://127.0.0.1:" + std::to_string(tls_port_); }
    const std::string& dir() const { return dir_; }
    pid_t pid() const { return pid_; }

    /// SIGKILL and reap: the server vanishes mid-conversation.
    void kill();
    /// Starts it again on the same port and dir (after kill()).
    void restart();
    void pause();   // SIGSTOP
    void resume();  // SIGCONT
    /// Running and not paused: a paused server accepts connections (the kernel
    /// does) but answers nothing, so a caller would wait out its timeout.
    bool answers() const { return pid_ > 0 && !paused_; }

private:
    void start(const std::string& config_file_text);
    void spawn();

    std::vector<std::string> extra_;
    std::uint16_t max_port_ = 65535;
    std::vector<std::string> tls_args_;  // without --tls-port, which start() picks
    std::string config_file_;  // path, or empty
    std::string dir_;
    std::uint16_t port_ = 0;
    std::uint16_t tls_port_ = 0;
    pid_t pid_ = -1;
    bool paused_ = false;
};

/// A port on 127.0.0.1 kept bound, never listening, for the object's life: a
/// connection to it is refused, and no server started meanwhile (by this
/// process or a test beside it) can take it, as it could a free_port().
class ClosedPort {
public:
    ClosedPort();
    ~ClosedPort();
    ClosedPort(const ClosedPort&) = delete;
    ClosedPort& operator=(const ClosedPort&) = delete;
    std::uint16_t port() const { return port_; }

private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

/// A free TCP port on 127.0.0.1 (bound then released; the caller binds it next),
/// at most `max_port`; with `also_free_at`, port + also_free_at is free too
/// (a cluster node's bus port).
std::uint16_t free_port(std::uint16_t max_port = 65535, std::uint16_t also_free_at = 0);

}  // namespace holdfast::support
