// holdfast's errors as values: the category and its codes, the kinds they
// belong to, the failure that carries them inside the library, the codes of
// error replies and the advice an ACL refusal gets. No server.
#include <gtest/gtest.h>

#include <type_traits>

#include "errors/acl_advice.hpp"
#include "errors/failure.hpp"
#include "holdfast/errors.hpp"
#include "primitive/reply_errors.hpp"
#include "primitive/script_call.hpp"
#include "transport/reply.hpp"

namespace holdfast {
namespace {

constexpr errc every_code[] = {
    errc::not_connected, errc::connection_lost, errc::reply_timeout,  errc::client_closed,
    errc::auth_refused,  errc::tls_failed,      errc::protocol_error, errc::server_error,
    errc::wrong_type,    errc::out_of_memory,   errc::no_permission,  errc::cross_slot,
    errc::try_again,     errc::read_only,       errc::cluster_down,   errc::busy,
    errc::loading,       errc::master_down,     errc::count_overflow, errc::not_owner,
    errc::lease_lost,    errc::deadlock,        errc::replicas_unconfirmed,
};

TEST(ErrorCategory, NamesItselfAndEveryCode) {
    EXPECT_STREQ(error_category().name(), "holdfast");
    for (const errc code : every_code) {
        const std::error_code ec = code;  // is_error_code_enum: converts by itself
        EXPECT_EQ(&ec.category(), &error_category());
        EXPECT_NE(ec.message(), "unknown holdfast error") << static_cast<int>(code);
        EXPECT_TRUE(ec) << "0 means no error";
    }
}

// A program that knows the standard's conditions branches on them.
TEST(ErrorCategory, CodesCompareEqualToTheStandardConditionsTheyMean) {
    EXPECT_EQ(make_error_code(errc::reply_timeout), std::errc::timed_out);
    EXPECT_EQ(make_error_code(errc::deadlock), std::errc::resource_deadlock_would_occur);  // as std::unique_lock says
    EXPECT_EQ(make_error_code(errc::no_permission), std::errc::permission_denied);
    EXPECT_EQ(make_error_code(errc::out_of_memory), std::errc::not_enough_memory);
    EXPECT_EQ(make_error_code(errc::not_connected), std::errc::not_connected);
    EXPECT_EQ(make_error_code(errc::connection_lost), std::errc::connection_reset);
    EXPECT_EQ(make_error_code(errc::client_closed), std::errc::operation_canceled);
    EXPECT_EQ(make_error_code(errc::protocol_error), std::errc::protocol_error);
    EXPECT_EQ(make_error_code(errc::try_again), std::errc::resource_unavailable_try_again);
    EXPECT_EQ(make_error_code(errc::busy), std::errc::device_or_resource_busy);
    EXPECT_EQ(make_error_code(errc::count_overflow), std::errc::value_too_large);
    EXPECT_EQ(make_error_code(errc::not_owner), std::errc::operation_not_permitted);
    EXPECT_EQ(make_error_code(errc::lease_lost), std::errc::operation_not_permitted);
}

TEST(ErrorCategory, CodesWithoutAStandardMeaningKeepTheirOwn) {
    for (const errc code : {errc::wrong_type, errc::cross_slot, errc::auth_refused, errc::replicas_unconfirmed}) {
        const std::error_condition condition = make_error_code(code).default_error_condition();
        EXPECT_EQ(&condition.category(), &error_category()) << static_cast<int>(code);
    }
    EXPECT_NE(make_error_code(errc::wrong_type), std::errc::invalid_argument);
    EXPECT_NE(make_error_code(errc::reply_timeout), std::errc::connection_reset);
}

TEST(ErrorCategory, ReplyCodesMapToTheirValues) {
    EXPECT_EQ(errc_of_reply("WRONGTYPE"), errc::wrong_type);
    EXPECT_EQ(errc_of_reply("OOM"), errc::out_of_memory);
    EXPECT_EQ(errc_of_reply("NOPERM"), errc::no_permission);
    EXPECT_EQ(errc_of_reply("CROSSSLOT"), errc::cross_slot);
    EXPECT_EQ(errc_of_reply("TRYAGAIN"), errc::try_again);
    EXPECT_EQ(errc_of_reply("READONLY"), errc::read_only);
    EXPECT_EQ(errc_of_reply("CLUSTERDOWN"), errc::cluster_down);
    EXPECT_EQ(errc_of_reply("BUSY"), errc::busy);
    EXPECT_EQ(errc_of_reply("LOADING"), errc::loading);
    EXPECT_EQ(errc_of_reply("MASTERDOWN"), errc::master_down);
    EXPECT_EQ(errc_of_reply("OVERFLOW"), errc::count_overflow);
}

TEST(ErrorCategory, OtherReplyCodesAreAPlainServerError) {
    for (const char* code : {"ERR", "", "BUSYKEY", "NOSCRIPT", "wrongtype", "WRONGTYPEX", "OOM "})
        EXPECT_EQ(errc_of_reply(code), errc::server_error) << code;
}

// Retrying cannot fix these: a catch (ConnectionError&) retry loop must not catch them.
TEST(ErrorKinds, PermanentFailuresAreNotConnectionErrors) {
    static_assert(!std::is_base_of_v<ConnectionError, AuthError>);
    static_assert(!std::is_base_of_v<ConnectionError, TlsError>);
    static_assert(!std::is_base_of_v<ConnectionError, ProtocolError>);
    static_assert(!std::is_base_of_v<ConnectionError, ClosedError>);
    static_assert(std::is_base_of_v<ConnectionError, ReplyTimeoutError>);
    const auto caught_as_connection = [](auto error) {
        try {
            throw error;
        } catch (const ConnectionError&) {
            return true;
        } catch (const Error&) {
            return false;
        }
    };
    EXPECT_FALSE(caught_as_connection(AuthError("a")));
    EXPECT_FALSE(caught_as_connection(TlsError("t")));
    EXPECT_FALSE(caught_as_connection(ProtocolError("p")));
    EXPECT_FALSE(caught_as_connection(ClosedError("c")));
    EXPECT_TRUE(caught_as_connection(ReplyTimeoutError("r")));
    EXPECT_TRUE(caught_as_connection(ConnectionError("x")));
}

// The server answered and replicas did not confirm: a lock outcome, not a server error.
TEST(ErrorKinds, ReplicaSyncErrorIsNoServerError) {
    static_assert(!std::is_base_of_v<ServerError, ReplicaSyncError>);
    static_assert(std::is_base_of_v<Error, ReplicaSyncError>);
    static_assert(std::is_base_of_v<ServerError, WrongTypeError>);
    static_assert(std::is_base_of_v<NotOwnerError, LeaseLostError>);
    EXPECT_EQ(ReplicaSyncError("r").code(), errc::replicas_unconfirmed);
}

TEST(ErrorKinds, EachKindCarriesItsCode) {
    EXPECT_EQ(ConnectionError("x").code(), errc::connection_lost);
    EXPECT_EQ(ConnectionError("x", errc::not_connected).code(), errc::not_connected);
    EXPECT_EQ(ReplyTimeoutError("x").code(), errc::reply_timeout);
    EXPECT_EQ(ClosedError("x").code(), errc::client_closed);
    EXPECT_EQ(AuthError("x").code(), errc::auth_refused);
    EXPECT_EQ(TlsError("x").code(), errc::tls_failed);
    EXPECT_EQ(ProtocolError("x").code(), errc::protocol_error);
    EXPECT_EQ(NotOwnerError("x").code(), errc::not_owner);
    EXPECT_EQ(LeaseLostError("x").code(), errc::lease_lost);
    EXPECT_EQ(DeadlockError("x").code(), errc::deadlock);
    EXPECT_EQ(DeadlockError("x").code(), std::errc::resource_deadlock_would_occur);
    EXPECT_STREQ(AuthError("refused").what(), "refused");
}

TEST(ErrorKinds, AServerErrorCarriesTheReplysCodeAsTextAndValue) {
    const ServerError oom("holdfast: ... OOM command not allowed", "OOM");
    EXPECT_EQ(oom.reply_code(), "OOM");
    EXPECT_EQ(oom.code(), errc::out_of_memory);
    const ServerError other("holdfast: ... BUSYKEY Target key name already exists", "BUSYKEY");
    EXPECT_EQ(other.reply_code(), "BUSYKEY");
    EXPECT_EQ(other.code(), errc::server_error);
    EXPECT_EQ(ServerError("no code").reply_code(), "");
    EXPECT_EQ(WrongTypeError("w").reply_code(), "WRONGTYPE");
    EXPECT_EQ(WrongTypeError("w").code(), errc::wrong_type);
}

}  // namespace

namespace detail {
namespace {

// What a Failure becomes at the public boundary: the exception of its code's kind.
template <class E>
E thrown(const Failure& failure) {
    try {
        failure.raise();
    } catch (const E& e) {
        return e;
    }
    throw std::logic_error("not raised as expected");
}

TEST(Failure, NoneIsEmptyAndBecomesNoException) {
    const Failure none, also = nullptr;
    EXPECT_FALSE(none);
    EXPECT_FALSE(also);
    EXPECT_FALSE(none.code());
    EXPECT_EQ(none.exception(), nullptr);
    const std::exception_ptr converted = none;
    EXPECT_EQ(converted, nullptr);
}

TEST(Failure, BecomesTheExceptionOfItsCodesKind) {
    EXPECT_EQ(thrown<ConnectionError>({errc::not_connected, "m"}).code(), errc::not_connected);
    EXPECT_EQ(thrown<ConnectionError>({errc::connection_lost, "m"}).code(), errc::connection_lost);
    EXPECT_EQ(thrown<ReplyTimeoutError>({errc::reply_timeout, "m"}).code(), errc::reply_timeout);
    EXPECT_EQ(thrown<ClosedError>({errc::client_closed, "m"}).code(), errc::client_closed);
    EXPECT_EQ(thrown<AuthError>({errc::auth_refused, "m"}).code(), errc::auth_refused);
    EXPECT_EQ(thrown<TlsError>({errc::tls_failed, "m"}).code(), errc::tls_failed);
    EXPECT_EQ(thrown<ProtocolError>({errc::protocol_error, "m"}).code(), errc::protocol_error);
    EXPECT_EQ(thrown<WrongTypeError>({errc::wrong_type, "m"}).code(), errc::wrong_type);
    EXPECT_EQ(thrown<NotOwnerError>({errc::not_owner, "m"}).code(), errc::not_owner);
    EXPECT_EQ(thrown<LeaseLostError>({errc::lease_lost, "m"}).code(), errc::lease_lost);
    EXPECT_EQ(thrown<DeadlockError>({errc::deadlock, "m"}).code(), errc::deadlock);
    EXPECT_EQ(thrown<ReplicaSyncError>({errc::replicas_unconfirmed, "m"}).code(), errc::replicas_unconfirmed);
    const ServerError oom = thrown<ServerError>({errc::out_of_memory, "m"});
    EXPECT_EQ(oom.code(), errc::out_of_memory);
    EXPECT_EQ(oom.reply_code(), "OOM");
    EXPECT_STREQ(oom.what(), "m");
}

// Every code's exception says the same code: a program gets one answer
// whichever it asks, the type or the value.
TEST(Failure, EveryCodesExceptionCarriesThatCode) {
    for (const errc code : every_code) {
        const Failure failure(code, "said");
        EXPECT_TRUE(failure);
        EXPECT_TRUE(failure.is(code));
        EXPECT_EQ(thrown<Error>(failure).code(), code) << static_cast<int>(code);
        EXPECT_STREQ(thrown<Error>(failure).what(), "said");
    }
}

TEST(Failure, AServerFailureKeepsTheReplysCode) {
    const Failure busy = Failure::server("BUSYKEY", "holdfast: ... BUSYKEY");
    EXPECT_TRUE(busy.is(errc::server_error));
    EXPECT_EQ(busy.reply_code(), "BUSYKEY");
    EXPECT_EQ(thrown<ServerError>(busy).reply_code(), "BUSYKEY");
    const Failure noperm = Failure::server("NOPERM", "refused");
    EXPECT_TRUE(noperm.is(errc::no_permission));
    EXPECT_EQ(thrown<ServerError>(noperm).code(), std::errc::permission_denied);
}

TEST(Failure, MoreSaidKeepsTheKind) {
    const Failure refused = Failure::server("NOPERM", "refused").adding(" (unlock refused)");
    EXPECT_TRUE(refused.is(errc::no_permission));
    EXPECT_EQ(refused.reply_code(), "NOPERM");
    EXPECT_EQ(refused.message(), "refused (unlock refused)");
    const Failure lost = Failure(errc::reply_timeout, "late").saying("later");
    EXPECT_STREQ(thrown<ReplyTimeoutError>(lost).what(), "later");
}

// The predicates the library branches on agree with the kinds a program catches.
TEST(Failure, KindsAgreeWithTheExceptionTypes) {
    for (const errc code : every_code) {
        const std::exception_ptr e = Failure(code, "m");
        const auto is = [&e]<class E>(std::type_identity<E>) {
            try {
                std::rethrow_exception(e);
            } catch (const E&) {
                return true;
            } catch (...) {
                return false;
            }
        };
        const std::error_code ec = code;
        EXPECT_EQ(is_connection(ec), is(std::type_identity<ConnectionError>{})) << ec.message();
        EXPECT_EQ(is_not_owner(ec), is(std::type_identity<NotOwnerError>{})) << ec.message();
        EXPECT_EQ(is_server(ec), is(std::type_identity<ServerError>{})) << ec.message();
        const bool unanswered = is(std::type_identity<ConnectionError>{}) || is(std::type_identity<ClosedError>{}) ||
                                is(std::type_identity<AuthError>{}) || is(std::type_identity<TlsError>{}) ||
                                is(std::type_identity<ProtocolError>{});
        EXPECT_EQ(is_unanswered(ec), unanswered) << ec.message();
    }
}

// "Shutting down" has one spelling, whoever says it.
TEST(Failure, AClosingClientIsSaidOneWay) {
    const Failure closed = client_closed("; stopped waiting for lock 'door'");
    EXPECT_TRUE(closed.is(errc::client_closed));
    EXPECT_EQ(closed.message(), "holdfast: the client is shutting down; stopped waiting for lock 'door'");
    EXPECT_EQ(thrown<ClosedError>(client_closed()).what(), std::string("holdfast: the client is shutting down"));
}

Reply error_reply(std::string text) {
    Reply reply;
    reply.type = Reply::Type::error;
    reply.str = std::move(text);
    return reply;
}

TEST(ReplyCode, IsTheFirstWordOfAnErrorReply) {
    EXPECT_EQ(error_reply("NOPERM this user has no permissions to run the 'eval' command").code(), "NOPERM");
    EXPECT_EQ(error_reply("WRONGTYPE Operation against a key holding the wrong kind of value").code(), "WRONGTYPE");
    EXPECT_EQ(error_reply("OVERFLOW the count would overflow").code(), "OVERFLOW");
    EXPECT_EQ(error_reply("MOVED 3999 127.0.0.1:6381").code(), "MOVED");
    EXPECT_EQ(error_reply("ERR").code(), "ERR");
    EXPECT_EQ(error_reply("").code(), "");
    EXPECT_EQ(error_reply("something went wrong").code(), "") << "no code word";
    Reply status;
    status.type = Reply::Type::status;
    status.str = "OK";
    EXPECT_EQ(status.code(), "") << "not an error";
}

// A script's call refused by the ACL is an ERR on every version (Redis 7.0: "ERR The user executing the
// script can't ...", 7.2 and later "ERR ACL failure in script: ..."): NOPERM for holdfast. Every
// server's texts: tests/errors/acl_refusal_test.cpp.
TEST(ReplyCode, AScriptsRefusedCallIsNopermOnEveryVersion) {
    const Reply refused = error_reply(
        "ERR The user executing the script can't publish to the channel mentioned in the command script: 3a95..., on "
        "@user_script:1.");
    EXPECT_EQ(refused.code(), "NOPERM");
    EXPECT_TRUE(refused.is_error_code("NOPERM"));
    EXPECT_EQ(errc_of_reply(refused.code()), errc::no_permission);
    EXPECT_EQ(error_reply("ERR unknown command 'x'").code(), "ERR");
}

TEST(ReplyCode, MatchesOnlyTheWholeWord) {
    const Reply noscript = error_reply("NOSCRIPT No matching script");
    EXPECT_TRUE(noscript.is_error_code("NOSCRIPT"));
    EXPECT_FALSE(noscript.is_error_code("NOSCRIP"));
    EXPECT_FALSE(error_reply("NOSCRIPTX").is_error_code("NOSCRIPT"));
}

TEST(AclAdvice, ARefusedCommandIsNamedWithTheLineThatGrantsIt) {
    const std::string advice = acl_advice("NOPERM User app has no permissions to run the 'evalsha' command", "app");
    EXPECT_NE(advice.find("ACL SETUSER app +evalsha"), std::string::npos) << advice;
    EXPECT_NE(advice.find("ACL rules holdfast needs"), std::string::npos) << advice;
}

TEST(AclAdvice, HoldfastsOwnRefusalNamesTheCommandAndItsChannelOrKey) {
    const std::string channel = acl_advice(
        "NOPERM this user may not run PUBLISH on channel 'redisson_lock__channel:{job}', which releasing the lock "
        "needs",
        "app");
    EXPECT_NE(channel.find("ACL SETUSER app +publish &redisson_lock__channel:{job}"), std::string::npos) << channel;
    const std::string key = acl_advice("NOPERM this user may not run DEL on key 'job', which releasing needs", "app");
    EXPECT_NE(key.find("ACL SETUSER app +del ~job"), std::string::npos) << key;
}

TEST(AclAdvice, ARefusedChannelIsNamedWhereItIsKnown) {
    const std::string text = "NOPERM User app has no permissions to access one of the channels used as arguments";
    EXPECT_NE(acl_advice(text, "app", "redisson_sc:{pool}").find("ACL SETUSER app &redisson_sc:{pool}"),
              std::string::npos);
    EXPECT_NE(acl_advice(text, "app").find("ACL SETUSER app &redisson_*"), std::string::npos);
}

TEST(AclAdvice, OnlyAnAclRefusalGetsAdvice) {
    EXPECT_EQ(acl_advice("ERR unknown command 'FOO'", "app"), "");
    EXPECT_EQ(acl_advice("WRONGTYPE Operation against a key holding the wrong kind of value", "app"), "");
    EXPECT_NE(acl_advice("NOPERM no permissions", "").find("ACL SETUSER default +<command>"), std::string::npos)
        << "no user given: the default user";
}

// A key of another type is told one way, whatever found it.
TEST(WrongType, IsToldOneWay) {
    const Failure list = wrong_type("cannot lock", "job", "127.0.0.1:6379", "a list", "lock");
    EXPECT_TRUE(list.is(errc::wrong_type));
    EXPECT_EQ(list.message(),
              "holdfast: cannot lock 'job' on 127.0.0.1:6379: the key holds a list, not a lock; pick another name or "
              "delete the key");
    const Failure hash = not_a_lock("127.0.0.1:6379", "job", "name", "ada");
    EXPECT_TRUE(hash.is(errc::wrong_type));
    EXPECT_EQ(hash.message(),
              "holdfast: 'job' on 127.0.0.1:6379: the key holds a hash whose field 'name' holds 'ada' (not a hold "
              "count), not a lock; pick another name or delete the key");
    EXPECT_EQ(hold_count_in("12"), 12);
    EXPECT_FALSE(hold_count_in("ada"));
    EXPECT_THROW(hold_count_of("127.0.0.1:6379", "job", "name", "ada"), WrongTypeError);
}

}  // namespace
}  // namespace detail
}  // namespace holdfast
