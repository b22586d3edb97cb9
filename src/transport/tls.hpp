// TLS for a Connection (rediss://): the OpenSSL context built from TlsConfig,
// each connection's stream, and failures explained in words that say what to do.
#pragma once

#include <asio.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/ssl.hpp>

#include <memory>
#include <string>

#include "holdfast/config.hpp"

namespace holdfast::detail {

/// Over the connection's own socket, so the plain path keeps using it directly.
using TlsStream = asio::ssl::stream<asio::generic::stream_protocol::socket&>;

/// Trusted CAs (TlsConfig's, else the system's), the client certificate, peer
/// verification unless verify = false. Throws TlsError naming a file it cannot
/// read or use.
std::shared_ptr<asio::ssl::context> make_tls_context(const Config& config);

/// A fresh stream for one connection over `socket` to `host`: sends SNI
/// (unless the name is an IP address) and checks the certificate carries the
/// name (TlsConfig::server_name, else `host`: behind a sentinel, the master's
/// or the sentinel's host, not Config::host).
std::shared_ptr<TlsStream> make_tls_stream(asio::generic::stream_protocol::socket& socket,
                                           asio::ssl::context& context, const Config& config,
                                           const std::string& host);

/// An error of OpenSSL's (a refused certificate, an alert, not TLS at all),
/// which reconnecting cannot fix; not a plain socket error.
bool is_tls_error(const asio::error_code& ec);

/// Why the TLS handshake or a TLS read failed and what to do about it.
std::string describe_tls_failure(const asio::error_code& ec, TlsStream& stream, const Config& config,
                                 const std::string& host);

}  // namespace holdfast::detail
