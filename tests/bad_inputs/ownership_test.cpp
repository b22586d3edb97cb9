// Bad-input catalog, owners and keys: unlocking what one does not hold, empty
// owner ids, and keys under the lock's name that are not locks.
#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

using Owners = BadInputs;

TEST_F(Owners, UnlockWithoutLockIsNotOwnerError) {
    Client client(config());
    Lock lock(client, "job");
    EXPECT_TRUE(mentions(error_of<NotOwnerError>([&] { lock.release(); }),
                         {"'job'", client.current_owner(), server_name(), "does not hold it"}));
    const std::string owner = client.new_owner();
    auto unlocked = lock.async_release(owner);
    EXPECT_TRUE(mentions(error_of<NotOwnerError>(unlocked), {"'job'", owner}));
    expect_nothing_left(client);
}

TEST_F(Owners, UnlockingOnceTooOftenIsNotOwnerError) {
    Client client(config());
    Lock lock(client, "job");
    lock.lock();
    lock.lock();
    lock.unlock();
    lock.unlock();
    EXPECT_TRUE(mentions(error_of<NotOwnerError>([&] { lock.release(); }), {"'job'", client.current_owner()}));
    expect_nothing_left(client);
}

// The holder is untouched: its hold count, its TTL and its renewal.
TEST_F(Owners, UnlockByAnotherClientIsNotOwnerErrorAndTheHolderKeepsIt) {
    Client holder(config()), other(config());
    Lock held(holder, "job"), foreign(other, "job");
    held.lock();
    held.lock();
    EXPECT_TRUE(mentions(error_of<NotOwnerError>([&] { foreign.release(); }), {"'job'", other.current_owner()}));
    EXPECT_EQ(raw->string({"HGET", "job", holder.current_owner()}), "2");
    EXPECT_GT(raw->integer({"PTTL", "job"}), 0);
    EXPECT_TRUE(detail::core_of(holder).watchdog.renews("job", holder.current_owner()));
    expect_nothing_left(other, 1);
    held.unlock();
    held.unlock();
    expect_nothing_left(holder);
}

// Two async owners of one client: a wrong owner's unlock neither releases
// the other's hold nor stops its renewal.
TEST_F(Owners, UnlockByAnotherOwnerOfTheSameClientKeepsTheHoldRenewed) {
    Client client(config());
    Lock lock(client, "job");
    const std::string owner = client.new_owner(), intruder = client.new_owner();
    lock.async_lock(owner).get();
    auto refused = lock.async_release(intruder);
    EXPECT_TRUE(mentions(error_of<NotOwnerError>(refused), {"'job'", intruder}));
    EXPECT_EQ(raw->string({"HGET", "job", owner}), "1");
    EXPECT_TRUE(detail::core_of(client).watchdog.renews("job", owner));
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 1u);
    EXPECT_FALSE(lock.lease_lost_token(owner).stop_requested());
    lock.async_release(owner).get();
    expect_nothing_left(client);
}

// An empty owner id would be stored as an empty hash field, shared by every
// caller that forgot to make one: refused.
TEST_F(Owners, EmptyOwnerIsRefused) {
    Client client(config());
    Lock lock(client, "job");
    raw->command({"CONFIG", "RESETSTAT"});
    for (auto call : std::vector<std::function<void()>>{[&] { lock.async_lock(""); },
                                                        [&] { lock.async_try_lock("", 1s); },
                                                        [&] { lock.async_release(""); }})
        EXPECT_TRUE(mentions(error_of<std::invalid_argument>(call), {"owner", "'job'", "new_owner()"}));
    EXPECT_EQ(script_calls(), 0);
    expect_nothing_left(client);
}

// A key of another type under the lock's name: every call says which type,
// which key, on which server, and what to do; the key is left as it was.
struct Foreign {
    const char* type;
    std::vector<std::string> create;
    friend void PrintTo(const Foreign& f, std::ostream* os) { *os << f.type; }
};

class ForeignKeys : public BadInputs, public ::testing::WithParamInterface<Foreign> {};

TEST_P(ForeignKeys, AreWrongTypeErrorsAndLeftAlone) {
    raw->command(GetParam().create);
    const std::string before = raw->string({"DUMP", "job"});
    Client client(config());
    Lock lock(client, "job");
    const std::string owner = client.new_owner();
    const std::vector<std::string> expected{"'job'", server_name(), std::string("a ") + GetParam().type,
                                            "not a lock", "pick another name or delete the key"};
    for (auto call : std::vector<std::function<void()>>{
             [&] { lock.lock(); }, [&] { lock.try_lock(); }, [&] { lock.try_lock_for(30s); },
             [&] { lock.lock(10s); }, [&] { lock.release(); }, [&] { lock.force_unlock(); },
             [&] { lock.is_held_by_current_thread(); }, [&] { lock.hold_count(); }, [&] { lock.holders(); }})
        EXPECT_TRUE(mentions(error_of<WrongTypeError>(call), expected));
    auto async = lock.async_lock(owner);
    EXPECT_TRUE(mentions(error_of<WrongTypeError>(async), expected));
    try {  // the reply's code, as text and as a value
        lock.lock();
    } catch (const ServerError& e) {
        EXPECT_EQ(e.reply_code(), "WRONGTYPE");
        EXPECT_EQ(e.code(), errc::wrong_type);
    }
    EXPECT_EQ(raw->string({"DUMP", "job"}), before) << "the key was changed";
    expect_nothing_left(client, 1);
}

INSTANTIATE_TEST_SUITE_P(BadInputs, ForeignKeys,
                         ::testing::Values(Foreign{"string", {"SET", "job", "x"}},
                                           Foreign{"list", {"RPUSH", "job", "a", "b"}},
                                           Foreign{"set", {"SADD", "job", "a"}},
                                           Foreign{"zset", {"ZADD", "job", "1", "a"}}),
                         [](const auto& info) { return std::string(info.param.type); });

// A hash that is not a lock (no TTL, a value that is no hold count) must not
// be mistaken for a lock held forever: lock() would wait for ever.
TEST_F(Owners, AHashThatIsNotALockIsAWrongTypeErrorNotAnEndlessWait) {
    raw->command({"HSET", "job", "name", "ada"});
    Client client(config());
    Lock lock(client, "job");
    const std::vector<std::string> expected{"'job'", server_name(), "a hash whose field 'name'", "not a lock",
                                            "holds 'ada'", "pick another name or delete the key"};
    auto waiting = lock.async_lock(client.new_owner());
    EXPECT_TRUE(mentions(error_of<WrongTypeError>(waiting), expected));
    auto trying = lock.async_try_lock(client.new_owner(), std::chrono::milliseconds::max());
    EXPECT_TRUE(mentions(error_of<WrongTypeError>(trying), expected));
    for (auto call : std::vector<std::function<void()>>{[&] { lock.try_lock(); }, [&] { lock.holders(); }})
        EXPECT_TRUE(mentions(error_of<WrongTypeError>(call), expected));
    EXPECT_EQ(lock.hold_count(), 0);  // true: no field of this owner's
    EXPECT_EQ(raw->string({"HGET", "job", "name"}), "ada");
    EXPECT_EQ(raw->integer({"HLEN", "job"}), 1);
    expect_nothing_left(client, 1);
}

}  // namespace
}  // namespace holdfast::testing
