// The bad-input catalog's shared parts: a check that nothing was left behind,
// a matcher for error messages, and a TCP peer that is not a healthy Redis.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/client_core.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {

/// The bad inputs' fixture: a redis-server of its own, and the checks every case ends with.
class BadInputs : public RedisTest {
protected:
    /// "127.0.0.1:<port>": how errors must name this test's server.
    std::string server_name() const { return "127.0.0.1:" + std::to_string(server->port()); }

    /// Nothing left behind by `client`: no renewal, no local listener, no
    /// subscription on the server, and `keys` keys in the database (checked
    /// with DBSIZE on the raw connection). The listener and subscription
    /// checks wait: a channel's queue stays a second or two after its last
    /// waiter (primitive/wait_queues.hpp), and its UNSUBSCRIBE is not awaited.
    void expect_nothing_left(const Client& client, long long keys = 0) const {
        EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u) << "a renewal was left behind";
        EXPECT_TRUE(eventually([&] { return detail::core_of(client).transport.subscriber().channel_count() == 0; }))
            << "a local listener was left behind";
        EXPECT_TRUE(eventually([&] { return raw->command({"PUBSUB", "CHANNELS"})->elements == 0; }))
            << "a subscription was left on the server";
        EXPECT_EQ(raw->integer({"DBSIZE"}), keys) << "keys were left behind";
    }

    /// `name` works as a lock between two clients: stored under `name`,
    /// refused to the other client, whose waiter listens on `channel` and is
    /// woken by the unlock. Nothing is left behind afterwards.
    void expect_shared(const std::string& name, const std::string& channel) {
        Client a(config()), b(config());
        Lock held(a, name), wanted(b, name);
        held.lock();
        EXPECT_EQ(raw->string({"HGET", name, a.current_owner()}), "1");
        const std::string waiter_owner = b.new_owner();
        auto waiter = wanted.async_try_lock(waiter_owner, 30s);
        ASSERT_TRUE(eventually([&] { return subscribers(channel) == 1; })) << "no waiter on the layout's channel";
        held.unlock();
        ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "the unlock did not wake the waiter";
        EXPECT_TRUE(waiter.get());
        EXPECT_EQ(raw->string({"HGET", name, waiter_owner}), "1");
        wanted.async_release(waiter_owner).get();
        expect_nothing_left(a);
        expect_nothing_left(b);
    }
};

// A server full for good: maxmemory set below what the data already uses
// (filling up to the limit instead leaves it at the edge, where the next
// write may pass). Take what the case needs first, then fill().
class FullServer : public BadInputs {
protected:
    std::vector<std::string> server_args() override { return {"--maxmemory-policy", "noeviction"}; }
    /// Writes 2 MiB, then lowers maxmemory to 1 MiB; returns the keys written.
    long long fill() {
        constexpr long long keys = 32;
        for (long long i = 0; i < keys; ++i)
            raw->command({"SET", "filler:" + std::to_string(i), std::string(64 * 1024, 'x')});
        raw->command({"CONFIG", "SET", "maxmemory", "1mb"});
        auto refused = raw->command({"SET", "probe", "x"});
        EXPECT_EQ(refused->type, REDIS_REPLY_ERROR) << "the server is not full";
        return keys;
    }
};

/// Runs `call`, which must throw E (with code() `code`, when given); returns
/// the message (or "" after a test failure).
template <class E, class F>
std::string error_of(F&& call, std::optional<errc> code = std::nullopt) {
    try {
        call();
    } catch (const E& e) {
        if constexpr (std::is_base_of_v<Error, E>) {
            if (code) {
                EXPECT_EQ(e.code(), *code) << e.what();
            }
        }
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "threw the wrong type: " << e.what();
        return "";
    }
    ADD_FAILURE() << "did not throw";
    return "";
}

/// The message of the exception `future` ends with, which must be an E, within `within`.
template <class E, class T>
std::string error_of(std::future<T>& future, std::chrono::milliseconds within = 20s,
                     std::optional<errc> code = std::nullopt) {
    if (future.wait_for(within) != std::future_status::ready) {
        ADD_FAILURE() << "hangs: no result within " << within.count() << " ms";
        return "";
    }
    return error_of<E>([&] { future.get(); }, code);
}

/// `text` mentions every one of `parts`.
inline ::testing::AssertionResult mentions(const std::string& text, const std::vector<std::string>& parts) {
    for (const auto& part : parts)
        if (text.find(part) == std::string::npos)
            return ::testing::AssertionFailure() << "'" << text.substr(0, 600) << (text.size() > 600 ? "..." : "")
                                                 << "' does not mention '" << part.substr(0, 100) << "'";
    return ::testing::AssertionSuccess();
}

/// A loopback TCP peer on a free port that is not a healthy Redis. Each
/// request is handed to `answer`: a parsed RESP command (Mode::resp) or the
/// bytes of one read (Mode::raw). The answer says what to send back and
/// whether to close then. Runs a thread of its own; stopped, with every
/// connection closed, on destruction.
class FakeServer {
public:
    enum class Mode { resp, raw };
    struct Answer {
        std::string send;
        bool close = false;
    };
    using Handler = std::function<Answer(const std::vector<std::string>& request)>;

    FakeServer(Mode mode, Handler answer) : mode_(mode), answer_(std::move(answer)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listener_, 16) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
            ::pipe2(wake_, O_CLOEXEC) != 0)
            throw std::runtime_error("FakeServer: cannot listen on loopback");
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }

    ~FakeServer() {
        (void)!::write(wake_[1], "x", 1);
        thread_.join();
        ::close(listener_);
        ::close(wake_[0]);
        ::close(wake_[1]);
    }
    FakeServer(const FakeServer&) = delete;
    FakeServer& operator=(const FakeServer&) = delete;

    std::uint16_t port() const { return port_; }
    std::string name() const { return "127.0.0.1:" + std::to_string(port_); }
    /// Connections accepted so far.
    int accepted() const { return accepted_.load(); }

    /// A web server: answers any bytes with an HTTP 400 and closes.
    static FakeServer http() {
        return FakeServer(Mode::raw, [](const std::vector<std::string>&) {
            return Answer{"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", true};
        });
    }

private:
    struct Peer {
        int fd;
        std::unique_ptr<redisReader, void (*)(redisReader*)> reader{redisReaderCreate(), redisReaderFree};
    };

    void serve() {
        std::vector<Peer> peers;
        for (;;) {
            std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}};
            for (auto& p : peers) fds.push_back({p.fd, POLLIN, 0});
            if (::poll(fds.data(), fds.size(), -1) < 0) continue;
            if (fds[0].revents) break;
            if (fds[1].revents & POLLIN) {
                const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
                if (fd >= 0) {
                    peers.push_back(Peer{fd});
                    ++accepted_;
                }
            }
            for (std::size_t i = 2; i < fds.size(); ++i)
                if (fds[i].revents && !serve(peers[i - 2])) peers[i - 2].fd = -1;
            std::erase_if(peers, [](const Peer& p) { return p.fd < 0; });
        }
        for (auto& p : peers) ::close(p.fd);
    }

    // One read from `peer` and the answers to it; false when it is closed.
    bool serve(Peer& peer) {
        char buffer[64 * 1024];
        const ssize_t n = ::read(peer.fd, buffer, sizeof buffer);
        if (n <= 0) return ::close(peer.fd), false;
        std::vector<std::vector<std::string>> requests;
        if (mode_ == Mode::raw) {
            requests.push_back({std::string(buffer, static_cast<std::size_t>(n))});
        } else {
            redisReaderFeed(peer.reader.get(), buffer, static_cast<std::size_t>(n));
            void* reply = nullptr;
            while (redisReaderGetReply(peer.reader.get(), &reply) == REDIS_OK && reply) {
                auto* r = static_cast<redisReply*>(reply);
                std::vector<std::string> command;
                for (std::size_t j = 0; r->type == REDIS_REPLY_ARRAY && j < r->elements; ++j)
                    command.emplace_back(r->element[j]->str, r->element[j]->len);
                freeReplyObject(r);
                requests.push_back(std::move(command));
            }
        }
        for (const auto& request : requests) {
            const Answer answer = answer_(request);
            if (!answer.send.empty()) (void)!::send(peer.fd, answer.send.data(), answer.send.size(), MSG_NOSIGNAL);
            if (answer.close) return ::close(peer.fd), false;
        }
        return true;
    }

    const Mode mode_;
    Handler answer_;
    int listener_ = -1;
    int wake_[2] = {-1, -1};
    std::uint16_t port_ = 0;
    std::atomic<int> accepted_{0};
    std::thread thread_;
};

}  // namespace holdfast::testing
