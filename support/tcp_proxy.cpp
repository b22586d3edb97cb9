#include "tcp_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

namespace holdfast::support {
namespace {

constexpr int forwarding = 0, frozen = 1, stopping = 2;

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    return addr;
}

[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

TcpProxy::TcpProxy(std::uint16_t upstream) : upstream_(upstream) {
    // Port 0: the kernel picks a free port and we keep it bound, so no other
    // process can take it between the pick and the bind (support::free_port's gap).
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = loopback(0);
    socklen_t len = sizeof addr;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 64) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        if (listener_ >= 0) ::close(listener_);
        fail("proxy: cannot listen on a loopback port");
    }
    port_ = ntohs(addr.sin_port);
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
        ::close(listener_);
        fail("proxy: pipe");
    }
    thread_ = std::thread([this] { loop(); });
}

TcpProxy::~TcpProxy() {
    set_state(stopping);
    thread_.join();
    for (const Pair& p : pairs_) ::close(p.client), ::close(p.server);
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
}

void TcpProxy::freeze() { set_state(frozen); }
void TcpProxy::heal() { set_state(forwarding); }

void TcpProxy::set_state(int state) {
    wanted_.store(state);
    const char byte = 0;
    (void)!::write(wake_[1], &byte, 1);
    // The loop acts on the new state by its next poll; wait for it, so the
    // nemesis logs the fault's start after forwarding stopped, not before.
    while (applied_.load() != state && state != stopping)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
}

void TcpProxy::loop() {
    std::vector<pollfd> fds;
    for (;;) {
        const int state = wanted_.load();
        applied_.store(state);
        if (state == stopping) return;
        fds.assign(1, pollfd{wake_[0], POLLIN, 0});
        if (state == forwarding) {
            fds.push_back({listener_, POLLIN, 0});
            for (const Pair& p : pairs_) {
                fds.push_back({p.client, POLLIN, 0});
                fds.push_back({p.server, POLLIN, 0});
            }
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            fail("proxy: poll");
        }
        if (fds[0].revents) {  // a state change: drain, then look at the state again before moving bytes
            char drain[64];
            while (::read(wake_[0], drain, sizeof drain) > 0) {
            }
            continue;
        }
        if (state != forwarding) continue;
        // The pairs polled are pairs_[0, polled), at fds[2 + 2i] and fds[3 + 2i];
        // a pair accepted now is kept as is, a closed one dropped.
        const std::size_t polled = pairs_.size();
        if (fds[1].revents) accept_one();
        std::vector<Pair> alive;
        for (std::size_t i = 0; i < pairs_.size(); ++i) {
            const Pair p = pairs_[i];
            bool open = true;
            if (i < polled && fds[2 + 2 * i].revents) open = forward(p.client, p.server);
            if (open && i < polled && fds[3 + 2 * i].revents) open = forward(p.server, p.client);
            if (open) alive.push_back(p);
            else ::close(p.client), ::close(p.server);
        }
        pairs_ = std::move(alive);
    }
}

void TcpProxy::accept_one() {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in addr = loopback(upstream_);
    // A lock server that is down (a restart nemesis) refuses: so does the proxy, by closing.
    if (server < 0 || ::connect(server, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (server >= 0) ::close(server);
        ::close(client);
        return;
    }
    const int one = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pairs_.push_back({client, server});
}

// One read, written whole to the other side. Blocking writes are fine here:
// both ends read all the time, and loopback buffers hold far more than a
// lock client's commands.
bool TcpProxy::forward(int from, int to) {
    char buffer[65536];
    const ssize_t n = ::read(from, buffer, sizeof buffer);
    if (n <= 0) return n < 0 && (errno == EINTR || errno == EAGAIN);
    for (ssize_t sent = 0; sent < n;) {
        const ssize_t w = ::send(to, buffer + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return false;
        sent += w;
    }
    return true;
}

}  // namespace holdfast::support
