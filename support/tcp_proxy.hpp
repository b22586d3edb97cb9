// A TCP proxy on loopback whose traffic can be frozen: a one-sided network
// partition for tests (the proxied client is cut off, everyone else still
// reaches the server).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace holdfast::support {

/// Listens on a free 127.0.0.1 port and forwards every connection to
/// 127.0.0.1:`target`, byte for byte, on one thread of its own.
///
/// freeze(): nothing is forwarded in either direction and new connections
/// are not accepted, but every socket stays open, as when a network drops
/// packets: the client sees no error, only silence. thaw() resumes.
///
/// Thread safety: freeze(), thaw() and port() from any thread.
class TcpProxy {
public:
    explicit TcpProxy(std::uint16_t target);
    ~TcpProxy();
    TcpProxy(const TcpProxy&) = delete;
    TcpProxy& operator=(const TcpProxy&) = delete;

    std::uint16_t port() const { return port_; }
    void freeze();
    void thaw();

private:
    struct Link {
        int client = -1, server = -1;
    };
    void run();
    void accept_one();
    /// Moves what is readable on `from` to `to`; false when either side closed.
    static bool forward(int from, int to);

    const std::uint16_t target_;
    std::uint16_t port_ = 0;
    int listener_ = -1;
    int wake_[2] = {-1, -1};  // a pipe: tells the thread to stop
    std::atomic<bool> frozen_{false};
    std::atomic<bool> stopping_{false};
    std::vector<Link> links_;  // proxy thread only
    std::thread thread_;
};

}  // namespace holdfast::support
