// Exceptions thrown by holdfast, one type per kind of failure, and the codes
// they carry (docs/errors.md, "Kinds and codes").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "holdfast/export.hpp"

namespace holdfast {

/// What failed, as a value to branch on: every holdfast::Error's code() is one
/// of these, in error_category(). Where a std::errc means the same, the code
/// compares equal to it (errc::reply_timeout == std::errc::timed_out).
enum class errc {
    // ConnectionError: retrying may help.
    not_connected = 1,  ///< no connection within Config::timeout; the command was not sent
    connection_lost,    ///< the connection dropped with the command in flight: it may or may not have run
    reply_timeout,      ///< ReplyTimeoutError: no reply within Config::timeout; it may or may not have run
    // Retrying cannot help: each its own kind.
    client_closed,   ///< ClosedError: the Client is shutting down (or was shut down)
    auth_refused,    ///< AuthError: credentials or database refused
    tls_failed,      ///< TlsError: a certificate or key refused or unreadable
    protocol_error,  ///< ProtocolError: the peer does not speak RESP
    // ServerError: the server answered with an error reply. ServerError::reply_code() has its first word.
    server_error,    ///< a reply code with no value of its own below (ERR, BUSYKEY, ...)
    wrong_type,      ///< WRONGTYPE, or a key holding something else than the primitive (WrongTypeError)
    out_of_memory,   ///< OOM: maxmemory reached under noeviction
    no_permission,   ///< NOPERM: the user's ACL refuses a command, key or channel
    cross_slot,      ///< CROSSSLOT: a script's keys in several cluster slots
    try_again,       ///< TRYAGAIN: a cluster slot being migrated
    read_only,       ///< READONLY: a replica answered a write
    cluster_down,    ///< CLUSTERDOWN: the cluster cannot serve the slot
    busy,            ///< BUSY: the server is running a script too long
    loading,         ///< LOADING: the server is loading its data set
    master_down,     ///< MASTERDOWN: a replica lost its master
    count_overflow,  ///< OVERFLOW: a semaphore's count would leave the 64-bit range (holdfast's script)
    // Lock outcomes.
    not_owner,             ///< NotOwnerError: released by an owner that does not hold it
    lease_lost,            ///< LeaseLostError: the hold's lease lapsed locally before the release
    deadlock,              ///< DeadlockError: the wait would wait for itself
    replicas_unconfirmed,  ///< ReplicaSyncError: no replica acknowledged the write in time
};

}  // namespace holdfast

template <>
struct std::is_error_code_enum<holdfast::errc> : std::true_type {};

namespace holdfast {

/// holdfast's error category ("holdfast"): message() describes each errc.
HOLDFAST_EXPORT const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc code) noexcept { return {static_cast<int>(code), error_category()}; }

/// The errc of an error reply's code ("NOPERM" -> no_permission); server_error for one without a value.
HOLDFAST_EXPORT errc errc_of_reply(std::string_view reply_code) noexcept;

/// Base of every holdfast error. what() names what failed and what to do;
/// code() says it as a value.
class HOLDFAST_EXPORT Error : public std::runtime_error {
public:
    Error(const std::string& what, std::error_code code) : std::runtime_error(what), code_(code) {}
    const std::error_code& code() const noexcept { return code_; }

private:
    std::error_code code_;
};

/// No connection, or none that carried the command back: the server could not
/// be reached within Config::timeout (not_connected: the command was not
/// sent), or the connection dropped with the command in flight
/// (connection_lost: it may or may not have run). Names host:port. Retrying
/// may help; every other kind is one retrying cannot fix.
class HOLDFAST_EXPORT ConnectionError : public Error {
public:
    explicit ConnectionError(const std::string& what, errc code = errc::connection_lost) : Error(what, code) {}
};

/// A command got no reply within Config::timeout (the server stalled, paused
/// or overloaded). The connection was dropped and is being remade; the command
/// may or may not have run. code(): reply_timeout (std::errc::timed_out).
class HOLDFAST_EXPORT ReplyTimeoutError : public ConnectionError {
public:
    explicit ReplyTimeoutError(const std::string& what) : ConnectionError(what, errc::reply_timeout) {}
};

/// The Client is shutting down, or was shut down: what it was doing or
/// waiting for was abandoned (a command already sent may or may not have run).
class HOLDFAST_EXPORT ClosedError : public Error {
public:
    explicit ClosedError(const std::string& what) : Error(what, errc::client_closed) {}
};

/// The server refused AUTH or SELECT: the credentials or database are wrong.
class HOLDFAST_EXPORT AuthError : public Error {
public:
    explicit AuthError(const std::string& what) : Error(what, errc::auth_refused) {}
};

/// TLS failed: the server's certificate is not trusted or does not carry the
/// expected name, or the client certificate or key cannot be read. Retrying
/// cannot help; the message says which server and why.
class HOLDFAST_EXPORT TlsError : public Error {
public:
    explicit TlsError(const std::string& what) : Error(what, errc::tls_failed) {}
};

/// The peer does not speak RESP (not a Redis server, or a TLS port reached
/// without TLS), or sent a reply nothing asked for. Retrying cannot help:
/// check the address and the scheme (redis:// or rediss://).
class HOLDFAST_EXPORT ProtocolError : public Error {
public:
    explicit ProtocolError(const std::string& what) : Error(what, errc::protocol_error) {}
};

/// The server answered a command with an error reply (-ERR, -OOM, ...).
/// reply_code() is the reply's first word ("OOM", "NOPERM", "CROSSSLOT"; empty
/// if it had none) and code() its errc (errc_of_reply()).
class HOLDFAST_EXPORT ServerError : public Error {
public:
    explicit ServerError(const std::string& what, std::string reply_code = {})
        : Error(what, errc_of_reply(reply_code)), reply_code_(std::move(reply_code)) {}
    const std::string& reply_code() const noexcept { return reply_code_; }

private:
    std::string reply_code_;
};

/// A key under the primitive's name holds another type (a string, a list, ...),
/// or a value that is not the primitive's (a hash field that is no hold count).
/// reply_code() "WRONGTYPE", code() wrong_type.
class HOLDFAST_EXPORT WrongTypeError : public ServerError {
public:
    explicit WrongTypeError(const std::string& what) : ServerError(what, "WRONGTYPE") {}
};

/// unlock() by an owner that does not hold the lock (Redisson's
/// IllegalMonitorStateException). Names the lock and the owner id. code():
/// not_owner (std::errc::operation_not_permitted, as std::unique_lock says).
class HOLDFAST_EXPORT NotOwnerError : public Error {
public:
    explicit NotOwnerError(const std::string& what) : Error(what, errc::not_owner) {}

protected:
    NotOwnerError(const std::string& what, errc code) : Error(what, code) {}
};

/// unlock() of a hold whose lease lapsed locally: no renewal was confirmed for
/// a whole lease (less a safety margin), so the holder was told through
/// lease_lost_token(), and another owner may have held the lock since. The
/// unlock itself was still carried out on the server. code(): lease_lost.
class HOLDFAST_EXPORT LeaseLostError : public NotOwnerError {
public:
    explicit LeaseLostError(const std::string& what) : NotOwnerError(what, errc::lease_lost) {}
};

/// A wait that would wait for itself: a non-reentrant lock (the simple lock,
/// RedLock) taken again by its holder, or a read lock's holder asking for the
/// write lock. std::unique_lock reports this as resource_deadlock_would_occur:
/// code() (errc::deadlock) compares equal to it.
class HOLDFAST_EXPORT DeadlockError : public Error {
public:
    explicit DeadlockError(const std::string& what) : Error(what, errc::deadlock) {}
};

/// Config::replica_sync is `required` and no replica acknowledged a write
/// within Config::replica_sync_timeout: an acquire was given back (a failover
/// could lose the hold), or a release may come back with a failover. Names the
/// lock, the master and how many replicas it has. The server answered: a lock
/// outcome, not a server error.
class HOLDFAST_EXPORT ReplicaSyncError : public Error {
public:
    explicit ReplicaSyncError(const std::string& what) : Error(what, errc::replicas_unconfirmed) {}
};

}  // namespace holdfast
