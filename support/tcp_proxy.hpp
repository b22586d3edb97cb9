// A TCP forwarding proxy on loopback that can be frozen: a one-sided network
// partition for tests and for holdfast-check's partition-holder nemesis
// (the proxied client is cut off, both directions, sockets kept open, while
// everyone else still reaches the server).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace holdfast::support {

class TcpProxy {
public:
    /// Listens on a free 127.0.0.1 port and forwards every connection to
    /// 127.0.0.1:`upstream`, on a thread of its own.
    explicit TcpProxy(std::uint16_t upstream);
    /// Closes every connection it forwards.
    ~TcpProxy();
    TcpProxy(const TcpProxy&) = delete;
    TcpProxy& operator=(const TcpProxy&) = delete;

    std::uint16_t port() const { return port_; }
    /// Stops forwarding and accepting: bytes wait in the kernel's buffers,
    /// new connections in the listen backlog. Returns once the proxy's
    /// thread has stopped moving bytes.
    void freeze();
    /// Forwards again, buffered bytes and queued connections included.
    void heal();

private:
    struct Pair {
        int client;
        int server;
    };
    void loop();
    void set_state(int state);
    void accept_one();
    bool forward(int from, int to);  // false: either side closed

    std::uint16_t upstream_;
    std::uint16_t port_ = 0;
    int listener_ = -1;
    int wake_[2] = {-1, -1};             // a pipe: the loop's poll wakes on state changes
    std::atomic<int> wanted_{0};         // 0 forwarding, 1 frozen, 2 stopping
    std::atomic<int> applied_{0};        // the state the loop acts on
    std::vector<Pair> pairs_;            // owned by the loop thread
    std::thread thread_;
};

}  // namespace holdfast::support
