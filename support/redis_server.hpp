// Throwaway redis-server processes for tests, the demo and the benchmark:
// a free loopback port, a temp dir, stopped on destruction. Never port 6379.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace holdfast::support {

class RedisServer {
public:
    /// Starts `redis-server` with `extra` appended to its command line
    /// (e.g. {"--requirepass", "secret"}). Throws std::runtime_error naming
    /// the log file if it does not answer PING within 10 s.
    explicit RedisServer(std::vector<std::string> extra = {});
    /// As above, with `config_file_text` written to dir()/redis.conf and
    /// given first (a sentinel: its `sentinel monitor` lines and --sentinel).
    RedisServer(std::vector<std::string> extra, std::string config_file_text);
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    std::uint16_t port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    const std::string& dir() const { return dir_; }
    pid_t pid() const { return pid_; }

    /// SIGKILL and reap: the server vanishes mid-conversation.
    void kill();
    /// Starts it again on the same port and dir (after kill()).
    void restart();
    void pause();   // SIGSTOP
    void resume();  // SIGCONT

private:
    void spawn();

    std::vector<std::string> extra_;
    std::string config_file_;  // path, or empty
    std::string dir_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

/// A free TCP port on 127.0.0.1 (bound then released; the caller binds it next).
std::uint16_t free_port();

}  // namespace holdfast::support
