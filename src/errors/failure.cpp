#include "errors/failure.hpp"

namespace holdfast::detail {

namespace {

// A server code's reply word, for a Failure made from the code alone.
std::string reply_word(errc code) {
    switch (code) {
        case errc::wrong_type: return "WRONGTYPE";
        case errc::out_of_memory: return "OOM";
        case errc::no_permission: return "NOPERM";
        case errc::cross_slot: return "CROSSSLOT";
        case errc::try_again: return "TRYAGAIN";
        case errc::read_only: return "READONLY";
        case errc::cluster_down: return "CLUSTERDOWN";
        case errc::busy: return "BUSY";
        case errc::loading: return "LOADING";
        case errc::master_down: return "MASTERDOWN";
        case errc::count_overflow: return "OVERFLOW";
        default: return {};
    }
}

errc value_of(const std::error_code& code) {
    return code.category() == error_category() ? static_cast<errc>(code.value()) : errc::server_error;
}

}  // namespace

Failure::Failure(errc code, std::string message)
    : code_(code), said_(std::make_shared<const Said>(Said{std::move(message), reply_word(code)})) {}

Failure Failure::server(std::string reply_code, std::string message) {
    Failure failure;
    failure.code_ = errc_of_reply(reply_code);
    failure.said_ = std::make_shared<const Said>(Said{std::move(message), std::move(reply_code)});
    return failure;
}

const std::string& Failure::message() const noexcept {
    static const std::string none;
    return said_ ? said_->message : none;
}

const std::string& Failure::reply_code() const noexcept {
    static const std::string none;
    return said_ ? said_->reply_code : none;
}

Failure Failure::saying(std::string message) const {
    Failure same = *this;
    same.said_ = std::make_shared<const Said>(Said{std::move(message), reply_code()});
    return same;
}

// The one place a code decides the kind of exception.
std::exception_ptr Failure::exception() const {
    if (!code_) return nullptr;
    const std::string& message = this->message();
    switch (value_of(code_)) {
        case errc::not_connected: return std::make_exception_ptr(ConnectionError(message, errc::not_connected));
        case errc::connection_lost: return std::make_exception_ptr(ConnectionError(message, errc::connection_lost));
        case errc::reply_timeout: return std::make_exception_ptr(ReplyTimeoutError(message));
        case errc::client_closed: return std::make_exception_ptr(ClosedError(message));
        case errc::auth_refused: return std::make_exception_ptr(AuthError(message));
        case errc::tls_failed: return std::make_exception_ptr(TlsError(message));
        case errc::protocol_error: return std::make_exception_ptr(ProtocolError(message));
        case errc::wrong_type: return std::make_exception_ptr(WrongTypeError(message));
        case errc::not_owner: return std::make_exception_ptr(NotOwnerError(message));
        case errc::lease_lost: return std::make_exception_ptr(LeaseLostError(message));
        case errc::deadlock: return std::make_exception_ptr(DeadlockError(message));
        case errc::replicas_unconfirmed: return std::make_exception_ptr(ReplicaSyncError(message));
        default: return std::make_exception_ptr(ServerError(message, reply_code()));
    }
}

void Failure::raise() const { std::rethrow_exception(exception()); }

bool is_connection(const std::error_code& code) noexcept {
    return code == errc::not_connected || code == errc::connection_lost || code == errc::reply_timeout;
}

bool is_unanswered(const std::error_code& code) noexcept {
    return is_connection(code) || code == errc::client_closed || code == errc::auth_refused ||
           code == errc::tls_failed || code == errc::protocol_error;
}

bool is_not_owner(const std::error_code& code) noexcept {
    return code == errc::not_owner || code == errc::lease_lost;
}

bool is_server(const std::error_code& code) noexcept {
    return code && !is_unanswered(code) && !is_not_owner(code) && code != errc::deadlock &&
           code != errc::replicas_unconfirmed;
}

Failure client_closed(std::string_view detail) {
    // The category's words for it: one spelling.
    return {errc::client_closed, "holdfast: " + make_error_code(errc::client_closed).message() + std::string(detail)};
}

}  // namespace holdfast::detail
