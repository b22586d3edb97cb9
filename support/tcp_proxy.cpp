#include "tcp_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

namespace holdfast::support {
namespace {

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("TcpProxy: " + what + " failed: " + std::to_string(errno));
}

}  // namespace

TcpProxy::TcpProxy(std::uint16_t target) : target_(target) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0) fail("socket");
    sockaddr_in address = loopback(0);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fail("bind");
    if (::listen(listener_, 64) != 0) fail("listen");
    socklen_t size = sizeof address;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) fail("pipe");
    thread_ = std::thread([this] { run(); });
}

TcpProxy::~TcpProxy() {
    stopping_ = true;
    (void)!::write(wake_[1], "x", 1);
    thread_.join();
    for (const Link& link : links_) {
        ::close(link.client);
        ::close(link.server);
    }
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
}

void TcpProxy::freeze() {
    frozen_ = true;
    (void)!::write(wake_[1], "f", 1);
}

void TcpProxy::thaw() {
    frozen_ = false;
    (void)!::write(wake_[1], "t", 1);
}

void TcpProxy::accept_one() {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(target_);
    if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        ::close(client);
        if (server >= 0) ::close(server);
        return;
    }
    const int on = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    links_.push_back({client, server});
}

bool TcpProxy::forward(int from, int to) {
    char buffer[16384];
    const ssize_t n = ::read(from, buffer, sizeof buffer);
    if (n <= 0) return false;
    for (ssize_t done = 0; done < n;) {
        const ssize_t w = ::write(to, buffer + done, static_cast<std::size_t>(n - done));
        if (w <= 0) return false;
        done += w;
    }
    return true;
}

void TcpProxy::run() {
    while (!stopping_) {
        // While frozen only the wake-up pipe is watched: bytes wait in the
        // kernel's buffers and connections in the listen queue.
        std::vector<pollfd> fds{{wake_[0], POLLIN, 0}};
        if (!frozen_) {
            fds.push_back({listener_, POLLIN, 0});
            for (const Link& link : links_) {
                fds.push_back({link.client, POLLIN, 0});
                fds.push_back({link.server, POLLIN, 0});
            }
        }
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
        if (fds[0].revents) {
            char drained[64];
            (void)!::read(wake_[0], drained, sizeof drained);
            continue;
        }
        if (fds.size() == 1) continue;
        std::vector<Link> open;
        for (std::size_t i = 0; i < links_.size(); ++i) {
            const Link link = links_[i];
            const short from_client = fds[2 + 2 * i].revents, from_server = fds[3 + 2 * i].revents;
            const bool ok = (!from_client || forward(link.client, link.server)) &&
                            (!from_server || forward(link.server, link.client));
            if (ok) {
                open.push_back(link);
            } else {
                ::close(link.client);
                ::close(link.server);
            }
        }
        links_ = std::move(open);
        if (fds[1].revents) accept_one();
    }
}

}  // namespace holdfast::support
