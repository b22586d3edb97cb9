#include "redis_server.hpp"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

namespace holdfast::support {

namespace {

bool bindable(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool free = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) ::close(fd);
    return free;
}

}  // namespace

std::uint16_t free_port(std::uint16_t max_port, std::uint16_t also_free_at) {
    // Below the kernel's ephemeral range when bounded: port 0 picks from that range.
    static std::minstd_rand random{std::random_device{}()};
    for (int attempt = 0; max_port < 65535 && attempt < 100; ++attempt) {
        const auto port = static_cast<std::uint16_t>(std::uniform_int_distribution<int>(20000, max_port)(random));
        if (port == 6379 || !bindable(port)) continue;
        const int other = port + also_free_at;
        if (also_free_at == 0 || (other <= 65535 && bindable(static_cast<std::uint16_t>(other)))) return port;
    }
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        if (fd >= 0) ::close(fd);
        throw std::runtime_error("free_port: cannot bind a loopback socket");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

ClosedPort::ClosedPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        if (fd_ >= 0) ::close(fd_);
        throw std::runtime_error("ClosedPort: cannot bind a loopback socket");
    }
    port_ = ntohs(addr.sin_port);
}

ClosedPort::~ClosedPort() { ::close(fd_); }

RedisServer::RedisServer(std::vector<std::string> extra, std::uint16_t max_port)
    : extra_(std::move(extra)), max_port_(max_port) {
    start({});
}

RedisServer::RedisServer(const TlsServer& tls, std::vector<std::string> extra, std::string config_file_text)
    : extra_(std::move(extra)),
      tls_args_{"--tls-cert-file", tls.cert_file, "--tls-key-file", tls.key_file,
                "--tls-ca-cert-file", tls.ca_file, "--tls-auth-clients", tls.auth_clients ? "yes" : "no"} {
    start(config_file_text);
}

RedisServer::RedisServer(std::vector<std::string> extra, std::string config_file_text) : extra_(std::move(extra)) {
    start(config_file_text);
}

void RedisServer::start(const std::string& config_file_text) {
    char pattern[] = "/tmp/holdfast-redis-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("RedisServer: mkdtemp failed");
    dir_ = pattern;
    if (!config_file_text.empty()) {
        config_file_ = dir_ + "/redis.conf";
        std::ofstream(config_file_) << config_file_text;
    }
    for (int attempt = 0;; ++attempt) {
        // Bounded: a cluster node, whose bus port (port + 10000) must be free too.
        port_ = free_port(max_port_, max_port_ < 65535 ? 10000 : 0);
        if (!tls_args_.empty()) tls_port_ = free_port(max_port_);
        if (port_ == 6379 || tls_port_ == 6379 || port_ == tls_port_) continue;
        try {
            spawn();
            return;
        } catch (const std::exception&) {
            if (attempt == 2) throw;  // the port may have been taken between probe and bind
        }
    }
}

RedisServer::~RedisServer() {
    if (pid_ > 0) {
        ::kill(pid_, SIGCONT);
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

void RedisServer::spawn() {
    std::vector<std::string> args{"redis-server"};
    if (!config_file_.empty()) args.push_back(config_file_);  // must come first
    args.insert(args.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1",
                                  "--dir", dir_, "--save", "", "--appendonly", "no", "--logfile",
                                  dir_ + "/redis.log", "--daemonize", "no", "--protected-mode", "no"});
    if (tls_port_ != 0) {
        args.insert(args.end(), {"--tls-port", std::to_string(tls_port_)});
        args.insert(args.end(), tls_args_.begin(), tls_args_.end());
    }
    args.insert(args.end(), extra_.begin(), extra_.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("RedisServer: fork failed");
    if (pid_ == 0) {
        ::setpgid(0, 0);  // keep terminal signals (Ctrl-C) for the parent to handle
        // Die with the test or demo that started us, even if it is SIGKILLed
        // (a ctest timeout) and never runs its destructor.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) std::_Exit(127);
        ::execvp("redis-server", argv.data());
        std::_Exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            throw std::runtime_error("redis-server exited at start; see " + dir_ + "/redis.log");
        }
        timeval tv{0, 200000};
        if (redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv)) {
            bool up = false;
            if (!c->err) {
                auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
                up = r != nullptr;  // PONG, or NOAUTH when a password is required
                if (r) freeReplyObject(r);
            }
            redisFree(c);
            if (up) return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill();
    throw std::runtime_error("redis-server on port " + std::to_string(port_) + " did not answer within 10 s; see " +
                             dir_ + "/redis.log");
}

void RedisServer::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    paused_ = false;
}

void RedisServer::restart() {
    kill();
    spawn();
}

void RedisServer::pause() {
    ::kill(pid_, SIGSTOP);
    paused_ = true;
}

void RedisServer::resume() {
    ::kill(pid_, SIGCONT);
    paused_ = false;
}

}  // namespace holdfast::support
