#include "transport/tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "holdfast/errors.hpp"

namespace holdfast::detail {
namespace {

const std::string& verified_name(const Config& config, const std::string& host) {
    return config.tls.server_name.empty() ? host : config.tls.server_name;
}

bool is_ip_literal(const std::string& name) {
    asio::error_code ec;
    asio::ip::make_address(name, ec);
    return !ec;
}

// Loads one configured file, or throws TlsError naming it, the reason and the setting.
template <class Load>
void load_file(const std::string& file, const std::string& what, const std::string& setting, Load load) {
    if (::access(file.c_str(), R_OK) != 0)
        throw TlsError("holdfast: cannot read the TLS " + what + " '" + file + "' (" + std::strerror(errno) +
                       "); check " + setting);
    asio::error_code ec;
    load(ec);
    if (ec)
        throw TlsError("holdfast: cannot use the TLS " + what + " '" + file + "' (" + ec.message() +
                       "); check " + setting + " (a PEM file)");
}

}  // namespace

std::shared_ptr<asio::ssl::context> make_tls_context(const Config& config) {
    const TlsConfig& tls = config.tls;
    auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
    if (tls.ca_file.empty() && tls.ca_directory.empty()) {
        asio::error_code ignored;  // no system store: every certificate is then untrusted, which says so
        context->set_default_verify_paths(ignored);
    }
    if (!tls.ca_file.empty())
        load_file(tls.ca_file, "CA file", "TlsConfig::ca_file (--tls-ca)",
                  [&](asio::error_code& ec) { context->load_verify_file(tls.ca_file, ec); });
    if (!tls.ca_directory.empty())
        load_file(tls.ca_directory, "CA directory", "TlsConfig::ca_directory",
                  [&](asio::error_code& ec) { context->add_verify_path(tls.ca_directory, ec); });
    if (tls.cert_file.empty() != tls.key_file.empty())
        throw TlsError("holdfast: a TLS client certificate needs its key: give TlsConfig::cert_file and key_file "
                       "(--tls-cert, --tls-key) together");
    if (!tls.cert_file.empty()) {
        load_file(tls.cert_file, "client certificate", "TlsConfig::cert_file (--tls-cert)",
                  [&](asio::error_code& ec) { context->use_certificate_chain_file(tls.cert_file, ec); });
        load_file(tls.key_file, "client key", "TlsConfig::key_file (--tls-key)", [&](asio::error_code& ec) {
            context->use_private_key_file(tls.key_file, asio::ssl::context::pem, ec);
        });
        if (SSL_CTX_check_private_key(context->native_handle()) != 1)
            throw TlsError("holdfast: the TLS client key '" + tls.key_file + "' does not belong to the certificate '" +
                           tls.cert_file + "'; check TlsConfig::key_file (--tls-key)");
    }
    context->set_verify_mode(tls.verify ? asio::ssl::verify_peer : asio::ssl::verify_none);
    return context;
}

namespace {

// SNI (unless the name is an IP address), and the check
// asio::ssl::host_name_verification makes (X509_check_host / _ip), done by
// OpenSSL itself so that a mismatch reports its own reason ("hostname
// mismatch") rather than an unspecified verify failure.
void name_peer(SSL* ssl, const Config& config, const std::string& host) {
    const std::string& name = verified_name(config, host);
    const bool ip = is_ip_literal(name);
    if (!ip) SSL_set_tlsext_host_name(ssl, name.c_str());
    if (config.tls.verify) {
        if (ip) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
        else SSL_set1_host(ssl, name.c_str());
    }
}

}  // namespace

std::shared_ptr<TlsStream> make_tls_stream(asio::generic::stream_protocol::socket& socket,
                                           asio::ssl::context& context, const Config& config,
                                           const std::string& host) {
    auto stream = std::make_shared<TlsStream>(socket, context);
    name_peer(stream->native_handle(), config, host);
    return stream;
}

namespace {

// What an SSL call's failure means, as asio would report it.
asio::error_code failure_of(SSL* ssl, int result) {
    switch (SSL_get_error(ssl, result)) {
        case SSL_ERROR_ZERO_RETURN: return asio::error::eof;  // close_notify
        case SSL_ERROR_SSL: {
            const auto code = ::ERR_get_error();
            ::ERR_clear_error();
            return {static_cast<int>(code), asio::error::get_ssl_category()};
        }
        default: return asio::ssl::error::unspecified_system_error;
    }
}

bool wants_more(SSL* ssl, int result) {
    const int error = SSL_get_error(ssl, result);
    return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;
}

}  // namespace

TlsSession::TlsSession(asio::ssl::context& context, const Config& config, const std::string& host)
    : ssl_(::SSL_new(context.native_handle())), from_server_(::BIO_new(::BIO_s_mem())), to_server_(::BIO_new(::BIO_s_mem())) {
    if (!ssl_ || !from_server_ || !to_server_) {
        if (ssl_) ::SSL_free(ssl_);
        if (from_server_) ::BIO_free(from_server_);
        if (to_server_) ::BIO_free(to_server_);
        throw TlsError("holdfast: cannot create a TLS session (out of memory?)");
    }
    BIO_set_mem_eof_return(from_server_, -1);  // empty: "want more", not end of stream
    ::SSL_set_bio(ssl_, from_server_, to_server_);
    ::SSL_set_connect_state(ssl_);
    name_peer(ssl_, config, host);
}

TlsSession::~TlsSession() { ::SSL_free(ssl_); }

void TlsSession::take_output(std::string& out) {
    char chunk[16 * 1024];
    for (int n; (n = ::BIO_read(to_server_, chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<std::size_t>(n));
    has_output_.store(false, std::memory_order_release);
}

bool TlsSession::handshake(std::string_view in, std::string& out, asio::error_code& ec) {
    std::lock_guard lock(mutex_);
    ::ERR_clear_error();
    if (!in.empty()) ::BIO_write(from_server_, in.data(), static_cast<int>(in.size()));
    const int result = ::SSL_do_handshake(ssl_);
    take_output(out);  // an alert too, when it failed
    if (result == 1) return true;
    if (!wants_more(ssl_, result)) ec = failure_of(ssl_, result);
    return false;
}

void TlsSession::decrypt(std::string_view in, std::string& plain, asio::error_code& ec) {
    std::lock_guard lock(mutex_);
    ::ERR_clear_error();
    ::BIO_write(from_server_, in.data(), static_cast<int>(in.size()));
    char chunk[16 * 1024];
    for (;;) {
        const int n = ::SSL_read(ssl_, chunk, sizeof chunk);
        if (n > 0) {
            plain.append(chunk, static_cast<std::size_t>(n));
            continue;
        }
        if (!wants_more(ssl_, n)) ec = failure_of(ssl_, n);
        if (BIO_ctrl_pending(to_server_) > 0) has_output_.store(true, std::memory_order_release);
        return;
    }
}

void TlsSession::encrypt(std::string_view plain, std::string& out, asio::error_code& ec) {
    std::lock_guard lock(mutex_);
    ::ERR_clear_error();
    // A memory buffer never fills, so SSL_write takes all of it or fails.
    if (!plain.empty()) {
        const int n = ::SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
        if (n <= 0) ec = failure_of(ssl_, n);
    }
    take_output(out);
}

namespace {

// An ASN1 time as OpenSSL prints it: "Jan  2 00:00:00 2020 GMT".
std::string time_text(const ASN1_TIME* time) {
    BIO* out = ::BIO_new(::BIO_s_mem());
    if (!out) return "?";
    ::ASN1_TIME_print(out, time);
    char* data = nullptr;
    const long n = BIO_get_mem_data(out, &data);
    std::string text(data, n > 0 ? static_cast<std::size_t>(n) : 0);
    ::BIO_free(out);
    return text;
}

// The server's own certificate, as it sent it. A failed verification leaves
// the session without a peer certificate, but with the chain (the leaf first).
const X509* server_certificate(SSL* ssl) {
    STACK_OF(X509)* chain = ::SSL_get_peer_cert_chain(ssl);
    return chain && sk_X509_num(chain) > 0 ? sk_X509_value(chain, 0) : nullptr;
}

// The server's own certificate, or one of the CAs above it, whose dates failed.
std::string which_certificate(SSL* ssl, bool expired) {
    const X509* leaf = server_certificate(ssl);
    if (!leaf) return "the server's certificate";
    const int cmp = ::X509_cmp_current_time(expired ? X509_get0_notAfter(leaf) : X509_get0_notBefore(leaf));
    const bool its_own = expired ? cmp < 0 : cmp > 0;
    return its_own ? "the server's certificate" : "a CA certificate that signed the server's";
}

// "; the server's certificate is valid from ... until ...".
std::string validity(SSL* ssl) {
    const X509* leaf = server_certificate(ssl);
    if (!leaf) return "";
    return "; the server's certificate is valid from " + time_text(X509_get0_notBefore(leaf)) + " until " +
           time_text(X509_get0_notAfter(leaf));
}

}  // namespace

bool is_tls_error(const asio::error_code& ec) {
    return ec.category() == asio::error::get_ssl_category() && ec != asio::ssl::error::stream_truncated;
}

std::string describe_tls_failure(const asio::error_code& ec, SSL* ssl, const Config& config,
                                 const std::string& host) {
    const auto reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (ec.category() == asio::error::get_ssl_category() && reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
        const long result = SSL_get_verify_result(ssl);
        const std::string why = std::string("certificate verify failed: ") + X509_verify_cert_error_string(result);
        if (result == X509_V_ERR_HOSTNAME_MISMATCH || result == X509_V_ERR_IP_ADDRESS_MISMATCH)
            return "TLS: the server's certificate does not name '" + verified_name(config, host) + "' (" + why +
                   "); connect by a name it carries, or set TlsConfig::server_name to one";
        // Trusted, but out of its dates: a CA file cannot help; a new certificate, or the right time, can.
        if (result == X509_V_ERR_CERT_HAS_EXPIRED)
            return "TLS: " + which_certificate(ssl, true) + " has expired (" + why + validity(ssl) +
                   "); renew it on the server (tls-cert-file), and if it should still be valid, check this "
                   "machine's clock";
        if (result == X509_V_ERR_CERT_NOT_YET_VALID)
            return "TLS: " + which_certificate(ssl, false) + " is not valid yet (" + why + validity(ssl) +
                   "); check this machine's clock, or the certificate's start date";
        return "TLS: the server's certificate is not trusted (" + why +
               "); give the CA that signed it with TlsConfig::ca_file (--tls-ca)";
    }
    if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED)
        return "TLS: the server requires a client certificate (" + ec.message() +
               "); give TlsConfig::cert_file and key_file (--tls-cert, --tls-key)";
    if (reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE || reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
        reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN)
        return "TLS: the server refused the client certificate (" + ec.message() +
               "); check TlsConfig::cert_file (--tls-cert) is signed by a CA the server trusts";
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG)
        return "TLS handshake failed (" + ec.message() +
               "): the server does not speak TLS on this port; use redis:// for a plain server";
    return "TLS failed (" + ec.message() + ")";
}

}  // namespace holdfast::detail
