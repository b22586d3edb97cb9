// TLS for a Connection (rediss://): the OpenSSL context built from TlsConfig,
// each connection's stream, and failures explained in words that say what to do.
#pragma once

#include <asio.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/ssl.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "holdfast/config.hpp"

namespace holdfast::detail {

/// Trusted CAs (TlsConfig's, else the system's), the client certificate, peer
/// verification unless verify = false. Throws TlsError naming a file it cannot
/// read or use.
std::shared_ptr<asio::ssl::context> make_tls_context(const Config& config);

/// One connection's TLS on memory buffers: the Connection moves the
/// ciphertext between them and its socket itself. So the thread that submits a
/// command can encrypt and send it with the plain path's non-blocking send(),
/// instead of handing every write to the loop thread (an SSL object is never
/// used by two threads at once: each call holds the session's mutex).
///
/// Sends SNI (unless the name is an IP address) and checks the certificate
/// carries the name (TlsConfig::server_name, else the host connected to). Errors are
/// OpenSSL's, as asio reports them (asio::error::get_ssl_category()), or
/// asio::error::eof for the server's close_notify.
class TlsSession {
public:
    /// To `host` (behind a sentinel, the master's or the sentinel's host, not
    /// Config::host): the name checked unless TlsConfig::server_name is set.
    TlsSession(asio::ssl::context& context, const Config& config, const std::string& host);
    ~TlsSession();
    TlsSession(const TlsSession&) = delete;
    TlsSession& operator=(const TlsSession&) = delete;

    /// Advances the client handshake with the ciphertext `in` from the server
    /// (empty to begin); appends what must be sent to `out`. True once done.
    bool handshake(std::string_view in, std::string& out, asio::error_code& ec);
    /// Decrypts ciphertext from the server, appending the plaintext to `plain`.
    void decrypt(std::string_view in, std::string& plain, asio::error_code& ec);
    /// Encrypts `plain` (may be empty), appending to `out` every byte due to
    /// the server, in order (a decrypt may have left some: a key update).
    void encrypt(std::string_view plain, std::string& out, asio::error_code& ec);
    /// Bytes due to the server that no encrypt() has taken yet (rare: a key
    /// update). Lock-free: the connection asks under its own mutex.
    bool has_output() const { return has_output_.load(std::memory_order_acquire); }

    SSL* native_handle() { return ssl_; }

private:
    void take_output(std::string& out);

    std::mutex mutex_;
    std::atomic<bool> has_output_{false};
    SSL* ssl_;
    BIO* from_server_;  // owned by ssl_
    BIO* to_server_;    // owned by ssl_
};

/// A TLS stream over `socket` to `host`, for a one-shot exchange (the
/// sentinels' queries): SNI and the name check as TlsSession makes them.
using TlsStream = asio::ssl::stream<asio::generic::stream_protocol::socket&>;
std::shared_ptr<TlsStream> make_tls_stream(asio::generic::stream_protocol::socket& socket,
                                           asio::ssl::context& context, const Config& config,
                                           const std::string& host);

/// An error of OpenSSL's (a refused certificate, an alert, not TLS at all),
/// which reconnecting cannot fix; not a plain socket error.
bool is_tls_error(const asio::error_code& ec);

/// Why the TLS handshake or a TLS read failed and what to do about it.
/// `ssl`: the connection's (TlsSession or TlsStream native_handle()).
std::string describe_tls_failure(const asio::error_code& ec, SSL* ssl, const Config& config,
                                 const std::string& host);

}  // namespace holdfast::detail
