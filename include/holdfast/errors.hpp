// Exceptions thrown by holdfast, one type per kind of failure.
#pragma once

#include <stdexcept>
#include <string>
#include <system_error>

#include "holdfast/export.hpp"

namespace holdfast {

/// Base of every holdfast error. what() names what failed and what to do.
class HOLDFAST_EXPORT Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The server could not be reached, the connection dropped with the command in
/// flight, or no connection came back within Config::timeout. Names host:port.
class HOLDFAST_EXPORT ConnectionError : public Error {
public:
    using Error::Error;
};

/// The server refused AUTH or SELECT: the credentials or database are wrong.
class HOLDFAST_EXPORT AuthError : public ConnectionError {
public:
    using ConnectionError::ConnectionError;
};

/// TLS failed: the server's certificate is not trusted or does not carry the
/// expected name, or the client certificate or key cannot be read. Retrying
/// cannot help; the message says which server and why.
class HOLDFAST_EXPORT TlsError : public ConnectionError {
public:
    using ConnectionError::ConnectionError;
};

/// A command got no reply within Config::timeout (the server stalled, paused
/// or overloaded). The connection was dropped and is being remade; the command
/// may or may not have run.
class HOLDFAST_EXPORT ReplyTimeoutError : public ConnectionError {
public:
    using ConnectionError::ConnectionError;
};

/// The peer does not speak RESP (not a Redis server, or a TLS port reached
/// without TLS), or sent a reply nothing asked for. Retrying cannot help:
/// check the address and the scheme (redis:// or rediss://).
class HOLDFAST_EXPORT ProtocolError : public ConnectionError {
public:
    using ConnectionError::ConnectionError;
};

/// The server answered a command with an error reply (-ERR, -OOM, ...).
class HOLDFAST_EXPORT ServerError : public Error {
public:
    using Error::Error;
};

/// Config::replica_sync is `required` and no replica acknowledged an acquire
/// within Config::replica_sync_timeout: a failover could lose the hold, so it
/// was given back. Names the lock, the master and how many replicas it has.
class HOLDFAST_EXPORT ReplicaSyncError : public ServerError {
public:
    using ServerError::ServerError;
};

/// A key under the lock's name holds another type (a string, a list, ...).
class HOLDFAST_EXPORT WrongTypeError : public ServerError {
public:
    using ServerError::ServerError;
};

/// unlock() by an owner that does not hold the lock (Redisson's
/// IllegalMonitorStateException). Names the lock and the owner id.
class HOLDFAST_EXPORT NotOwnerError : public Error {
public:
    using Error::Error;
};

/// unlock() of a hold whose lease lapsed locally: no renewal was confirmed for
/// a whole lease (less a safety margin), so the holder was told through
/// lease_lost_token(), and another owner may have held the lock since. The
/// unlock itself was still carried out on the server.
class HOLDFAST_EXPORT LeaseLostError : public NotOwnerError {
public:
    using NotOwnerError::NotOwnerError;
};

/// A wait that would wait for itself: a non-reentrant lock (the simple lock,
/// RedLock) taken again by its holder, or a read lock's holder asking for the
/// write lock. std::unique_lock reports this as resource_deadlock_would_occur:
/// code() says the same.
class HOLDFAST_EXPORT DeadlockError : public Error {
public:
    using Error::Error;
    std::error_code code() const noexcept { return std::make_error_code(std::errc::resource_deadlock_would_occur); }
};

}  // namespace holdfast
