// Bad-input catalog, ACL: a user whose rights would let it take a primitive
// but not give it back. Every acquire checks the release's rights first
// (src/primitive/release_rights.lua.part), so such a user is refused before
// anything is written, with an error naming the command and the channel. A
// holder whose rights are revoked meanwhile has its release refused: the lock
// stays exactly as it was (every script checks and publishes before it
// writes), its renewal ends so its lease frees it, and the refusal is told.
#include <fstream>
#include <mutex>
#include <sstream>

#include "bad_inputs/bad_inputs.hpp"
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

class NoChannels : public BadInputs {
protected:
    void SetUp() override {
        BadInputs::SetUp();
        // Every command and key, no channel: any PUBLISH is refused.
        raw->command({"ACL", "SETUSER", "limited", "on", ">pw", "~*", "+@all", "resetchannels"});
    }

    Config limited() const {
        Config c = config();
        c.username = "limited";
        c.password = "pw";
        return c;
    }

    /// What every refusal must say: the name, the server, the command and
    /// channel refused, and the line that grants them.
    std::vector<std::string> expected(const std::string& quoted_name, const std::string& channel) const {
        return {quoted_name, server_name(), "PUBLISH on channel '" + channel + "'",
                "ACL SETUSER limited +publish &" + channel};
    }

    void expect_lock_held(const std::string& name, const std::string& field) const {
        EXPECT_EQ(raw->string({"HGET", name, field}), "1") << "the refused unlock changed the lock";
        EXPECT_GT(raw->integer({"PTTL", name}), 0);
    }
};

TEST_F(NoChannels, EveryAcquireIsRefusedBeforeAnythingIsWritten) {
    raw->command({"SET", "slots", "1"});
    raw->command({"SET", "pool", "1"});
    Client client(limited());
    const std::string owner = client.current_owner();
    Lock lock(client, "job");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.lock(); }, errc::no_permission),
                         expected("'job'", "redisson_lock__channel:{job}")));
    FencedLock fenced(client, "fenced");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { fenced.try_lock(); }),
                         expected("'fenced'", "redisson_lock__channel:{fenced}")));
    ReadWriteLock rw(client, "doc");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { rw.read_lock().try_lock(); }),
                         expected("'doc'", "redisson_rwlock:{doc}")));
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { rw.write_lock().lock(); }),
                         expected("'doc'", "redisson_rwlock:{doc}")));
    FairLock fair(client, "fair");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { fair.lock(); }),
                         expected("'fair'", "redisson_lock__channel:{fair}:" + owner)));
    Semaphore slots(client, "slots");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.acquire(); }), expected("'slots'", "redisson_sc:{slots}")));
    PermitExpirableSemaphore pool(client, "pool");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { pool.try_acquire(); }), expected("'pool'", "redisson_sc:{pool}")));
    EXPECT_EQ(raw->string({"GET", "slots"}), "1");
    EXPECT_EQ(raw->string({"GET", "pool"}), "1");
    expect_nothing_left(client, 2);
}

// A user may lack a command the release runs and the acquire does not.
TEST_F(NoChannels, AMissingDelIsNamedBeforeTheLockIsTaken) {
    raw->command({"ACL", "SETUSER", "limited", "allchannels", "-del"});
    Client client(limited());
    Lock lock(client, "job");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.lock(); }),
                         {"'job'", server_name(), "DEL on key 'job'", "ACL SETUSER limited +del ~job"}));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// The channel is no key: a user whose key patterns cover only the lock's
// names takes and releases its locks.
TEST_F(NoChannels, KeyPatternsNeedNotCoverTheChannel) {
    raw->command({"ACL", "SETUSER", "limited", "resetkeys", "~job*", "allchannels"});
    Client client(limited());
    Lock lock(client, "job");
    lock.lock();
    lock.release();
    FairLock fair(client, "job-fair");
    raw->command({"ACL", "SETUSER", "limited", "~redisson_lock_queue:{job-fair}", "~redisson_lock_timeout:{job-fair}",
                  "~holdfast_fair_alive:{job-fair}"});
    fair.lock();
    fair.release();
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// Targeted wake-ups need the lock's side keys and TIME (docs/design.md): a
// user whose key patterns cover only the lock, or whose categories leave out
// TIME (@fast only), still waits and is woken, as Redisson's waiters are.
TEST_F(NoChannels, AWaiterWithoutTheSideKeysOrTimeIsStillWoken) {
    for (const std::vector<std::string>& rules :
         {std::vector<std::string>{"resetkeys", "~job", "allchannels"},
          std::vector<std::string>{"allchannels", "-time"}}) {
        std::vector<std::string> setuser{"ACL", "SETUSER", "limited"};
        setuser.insert(setuser.end(), rules.begin(), rules.end());
        raw->command(setuser);
        Client holder(config()), client(limited());
        Lock held(holder, "job"), lock(client, "job");
        held.lock();
        auto waiting = lock.async_lock(client.new_owner());
        ASSERT_TRUE(eventually([&] { return raw->command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{job}"})
                                                 ->element[1]->integer == 1; }));
        EXPECT_EQ(raw->integer({"EXISTS", "holdfast_lock_waiters:{job}"}), 0) << rules[0];  // not listed
        held.unlock();
        ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready) << rules[0];
        EXPECT_TRUE(waiting.get());
        raw->command({"DEL", "job"});
        raw->command({"ACL", "SETUSER", "limited", "reset", "on", ">pw", "~*", "+@all", "resetchannels"});
    }
}

// A holder that may not read the list of waiters cannot name the first: its
// release publishes a bare `0`, which wakes a listed waiter too.
TEST_F(NoChannels, AReleaseThatCannotReadTheListStillWakesAListedWaiter) {
    raw->command({"ACL", "SETUSER", "limited", "allchannels", "-zrange"});
    Client holder(limited()), client(config());
    Lock held(holder, "job"), lock(client, "job");
    held.lock();
    auto waiting = lock.async_lock(client.new_owner());
    ASSERT_TRUE(eventually([&] { return raw->integer({"ZCARD", "holdfast_lock_waiters:{job}"}) == 1; }));
    held.unlock();
    ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(waiting.get());
    EXPECT_EQ(raw->integer({"EXISTS", "holdfast_lock_handoff:{job}"}), 0);  // no promise was made
}

// The setters publish too: refused, they set nothing.
TEST_F(NoChannels, SettingACountIsRefusedAndNothingSet) {
    Client client(limited());
    Semaphore slots(client, "slots");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.try_set_permits(3); }),
                         expected("'slots'", "redisson_sc:{slots}")));
    CountDownLatch gate(client, "gate");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { gate.try_set_count(3); }),
                         expected("'gate'", "redisson_countdownlatch__channel__{gate}")));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

TEST_F(NoChannels, ALatchCountDownIsRefusedAndTheCountKept) {
    raw->command({"SET", "gate", "1"});
    Client client(limited());
    CountDownLatch gate(client, "gate");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { gate.count_down(); }),
                         expected("'gate'", "redisson_countdownlatch__channel__{gate}")));
    EXPECT_EQ(raw->string({"GET", "gate"}), "1");
}

// A user without EVALSHA is told which command to grant.
TEST_F(NoChannels, AMissingCommandIsNamed) {
    raw->command({"ACL", "SETUSER", "limited", "allchannels", "-evalsha"});
    Client client(limited());
    Lock lock(client, "job");
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.lock(); }, errc::no_permission),
                         {"'job'", server_name(), "evalsha", "ACL SETUSER limited +evalsha"}));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
}

// The command line tool acquires once, before it runs the command: refused
// there, the command never runs.
TEST_F(NoChannels, TheCliRefusesBeforeItRunsTheCommand) {
    const fs::path dir = fs::temp_directory_path() / ("holdfast-acl-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path ran = dir / "ran";
    const std::string url = "redis://limited:pw@127.0.0.1:" + std::to_string(server->port());
    const auto done = Cli({"--url", url, "run", "job", "--", "touch", ran.string()}, dir, {}).wait();
    EXPECT_NE(done.status, 0);
    EXPECT_FALSE(fs::exists(ran)) << "the command ran without a lock it could release";
    EXPECT_TRUE(mentions(done.err, {"PUBLISH", "redisson_lock__channel:{job}"}));
    EXPECT_EQ(raw->integer({"DBSIZE"}), 0);
    fs::remove_all(dir);
}

// Rights revoked while the lock is held: the release is refused.
class Revoked : public NoChannels {
protected:
    void SetUp() override {
        NoChannels::SetUp();
        grant();
    }
    void grant() const { raw->command({"ACL", "SETUSER", "limited", "allchannels"}); }

    /// Whether `lock`'s client comes to run the trusted twins (its user
    /// allowed everything: a connection knows once its handshake is done),
    /// locking and unlocking it until it does.
    bool comes_to_trust(Lock& lock) const {
        return eventually([&] {
            lock.lock();
            lock.unlock();
            return trusted_acquire_loaded();
        });
    }
    void revoke() const { raw->command({"ACL", "SETUSER", "limited", "resetchannels"}); }

    Config told() {
        Config c = limited();
        c.on_event = [this](const Event& event) {
            std::lock_guard lock(mutex_);
            if (event.kind == Event::Kind::release_failed) releases_failed_.push_back(event.to_string());
        };
        return c;
    }
    std::vector<std::string> releases_failed() {
        std::lock_guard lock(mutex_);
        return releases_failed_;
    }

private:
    std::mutex mutex_;
    std::vector<std::string> releases_failed_;
};

// The fixture's user starts allowed everything, so its acquires skip the
// checks; rights taken away are seen within the client's re-ask interval, and
// acquires are then refused before they write, as for a narrower user.
TEST_F(Revoked, RightsTakenAwayAreCheckedAgainSoon) {
    raw->command({"SCRIPT", "FLUSH"});
    Client client(limited());
    Lock first(client, "first");
    ASSERT_TRUE(comes_to_trust(first));
    revoke();
    std::string refusal;
    int taken = 0;
    EXPECT_TRUE(eventually([&] {
        Lock lock(client, "job-" + std::to_string(taken));
        try {
            if (lock.try_lock()) ++taken;  // taken before the client saw the change; its release is refused
            return false;
        } catch (const ServerError& e) {
            EXPECT_EQ(e.code(), errc::no_permission) << e.what();
            refusal = e.what();
            return true;
        }
    }));
    EXPECT_NE(refusal.find("PUBLISH on channel 'redisson_lock__channel:{job-" + std::to_string(taken) + "}'"),
              std::string::npos)
        << refusal;
    EXPECT_EQ(raw->integer({"EXISTS", "job-" + std::to_string(taken)}), 0) << "the refused acquire wrote";
}

// A refused release tells the client at once that its user's rights are
// narrower than everything: its holder's next acquire, reentrant or not, is
// refused before it writes, not counted onto the hold its release left.
TEST_F(Revoked, ARefusalEndsTheTrustAtOnce) {
    raw->command({"SCRIPT", "FLUSH"});
    Client client(limited());
    Lock lock(client, "job");
    ASSERT_TRUE(comes_to_trust(lock));
    lock.lock();
    revoke();
    lock.unlock();  // refused, reported
    expect_lock_held("job", client.current_owner());
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.try_lock(); }, errc::no_permission),
                         expected("'job'", "redisson_lock__channel:{job}")));
    expect_lock_held("job", client.current_owner());
}

// unlock() throws nothing; the lock is left as it was, no longer renewed,
// and the holder, the handler and the metric hear of it.
TEST_F(Revoked, ARefusedUnlockIsReportedAndEndsTheRenewal) {
    Client client(told());
    Lock lock(client, "job");
    lock.lock();
    const std::stop_token lost = lock.lease_lost_token();
    revoke();
    lock.unlock();
    expect_lock_held("job", client.current_owner());
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u) << "a hold whose release was tried is still renewed";
    EXPECT_TRUE(lost.stop_requested());
    const auto told = releases_failed();
    ASSERT_EQ(told.size(), 1u);
    EXPECT_TRUE(mentions(told[0], {"release_failed", "lock 'job'", "refused", "PUBLISH"}));
    EXPECT_EQ(client.metrics().primitives["lock"].release_failures, 1u);
}

// Every lockable, through the checked form: each throws naming the channel,
// keeps its lock, and is no longer renewed. A user not allowed everything
// (no DEBUG), so every script checks: even a reentrant hold's partial release
// is refused, as the full one would be.
TEST_F(Revoked, EveryCheckedReleaseThrowsAndEndsTheRenewal) {
    raw->command({"ACL", "SETUSER", "limited", "-debug"});
    Client client(told());
    const std::string owner = client.current_owner();
    Lock lock(client, "job");
    FencedLock fenced(client, "fenced");
    FairLock fair(client, "fair");
    ReadWriteLock doc(client, "doc"), page(client, "page");
    struct Case {
        Lock* lock;
        std::string field, channel;
    };
    const std::vector<Case> cases{
        {&lock, owner, "redisson_lock__channel:{job}"},
        {&fenced, owner, "redisson_lock__channel:{fenced}"},
        {&fair, owner, "redisson_lock__channel:{fair}:" + owner},
        {&doc.read_lock(), owner, "redisson_rwlock:{doc}"},
        {&page.write_lock(), owner + ":write", "redisson_rwlock:{page}"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.lock->name());
        grant();
        c.lock->lock();
        c.lock->lock();  // reentrant: the refusal ends the renewal of both holds
        revoke();
        EXPECT_TRUE(mentions(error_of<ServerError>([&] { c.lock->release(); }),
                             expected("'" + c.lock->name() + "'", c.channel)));
        EXPECT_EQ(raw->string({"HGET", c.lock->name(), c.field}), "2") << "the refused release changed the lock";
        EXPECT_FALSE(detail::core_of(client).watchdog.renews(c.lock->name(), c.field));
    }
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u);
    EXPECT_EQ(releases_failed().size(), cases.size());
}

// A user allowed everything runs the releases' trusted twins. Rights taken
// away before the client asks again: the twin is refused at its publish,
// before it writes, and sent again checked, so the error names the channel.
// A holdfast waiter listed meanwhile keeps its place: the twin only read the
// list before its publish (a ZPOPMIN there once unlisted it).
TEST_F(Revoked, ATrustedReleaseRefusedIsToldAsACheckedOne) {
    raw->command({"SCRIPT", "FLUSH"});
    Client client(told()), other(config());
    Lock lock(client, "job"), wanted(other, "job");
    ASSERT_TRUE(comes_to_trust(lock));
    lock.lock();
    auto waiting = wanted.async_lock(other.new_owner());
    ASSERT_TRUE(eventually([&] { return raw->integer({"ZCARD", "holdfast_lock_waiters:{job}"}) == 1; }));
    const std::string listed = raw->command({"ZRANGE", "holdfast_lock_waiters:{job}", "0", "0"})->element[0]->str;
    revoke();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { lock.release(); }, errc::no_permission),
                         expected("'job'", "redisson_lock__channel:{job}")));
    EXPECT_EQ(raw->command({"SCRIPT", "EXISTS", scripts::lock_release.trusted->sha1})->element[0]->integer, 1)
        << "the release did not run trusted first";
    expect_lock_held("job", client.current_owner());
    EXPECT_EQ(detail::core_of(client).watchdog.tracked(), 0u) << "a hold whose release was tried is still renewed";
    auto still = raw->command({"ZRANGE", "holdfast_lock_waiters:{job}", "0", "-1"});
    ASSERT_EQ(still->elements, 1u) << "the refused release changed the list of waiters";
    EXPECT_EQ(std::string(still->element[0]->str), listed);
    EXPECT_EQ(raw->integer({"EXISTS", "holdfast_lock_handoff:{job}"}), 0);
    EXPECT_NE(waiting.wait_for(0s), std::future_status::ready);
}

TEST_F(Revoked, ASemaphoreReleaseIsRefusedAndThePermitStaysTaken) {
    raw->command({"SET", "slots", "1"});
    Client client(limited());
    Semaphore slots(client, "slots");
    slots.acquire();
    revoke();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.release(); }), expected("'slots'", "redisson_sc:{slots}")));
    EXPECT_EQ(raw->string({"GET", "slots"}), "0");
}

TEST_F(Revoked, AnExpirableSemaphoreReleaseIsRefusedAndThePermitStaysHeld) {
    raw->command({"SET", "pool", "1"});
    Client client(limited());
    PermitExpirableSemaphore pool(client, "pool");
    const std::string id = pool.acquire();
    revoke();
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { pool.release(id); }), expected("'pool'", "redisson_sc:{pool}")));
    EXPECT_EQ(raw->string({"GET", "pool"}), "0");
    EXPECT_EQ(raw->integer({"ZCARD", "{pool}:timeout"}), 1);
}

/// The ready-to-paste ACL SETUSER line of docs/errors.md, split into words.
std::vector<std::string> documented_acl_line() {
    std::ifstream doc(std::string(HOLDFAST_LUA_DIR) + "/../docs/errors.md");
    std::string line;
    while (std::getline(doc, line))
        if (line.rfind("    ACL SETUSER app ", 0) == 0) {
            std::istringstream words(line);
            std::vector<std::string> result;
            for (std::string word; words >> word;) result.push_back(word == ">PASSWORD" ? ">pw" : word);
            return result;
        }
    return {};
}

// The rules docs/errors.md gives are enough for every primitive, waiting included.
// The checks cost the server a quarter of its acquire rate, so a user it lets
// run everything (ACL GETUSER: +@all ~* &*) gets the acquire scripts without
// them; any narrower user keeps them.
TEST_F(NoChannels, OnlyAUserAllowedEverythingSkipsTheAcquireChecks) {
    const auto cached = [&](const detail::Script& script) {
        return raw->command({"SCRIPT", "EXISTS", script.sha1})->element[0]->integer == 1;
    };
    ASSERT_NE(scripts::lock_acquire.trusted, nullptr);
    raw->command({"SCRIPT", "FLUSH"});
    Client everything(config());
    Lock lock(everything, "job");
    // A connection knows once ready; one still in its handshake when an
    // acquire is sent runs the checked script.
    EXPECT_TRUE(eventually([&] {
        lock.lock();
        lock.unlock();
        return cached(*scripts::lock_acquire.trusted);
    }));

    raw->command({"SCRIPT", "FLUSH"});
    raw->command({"ACL", "SETUSER", "careful", "on", ">pw", "~*", "&*", "+@all", "-debug"});
    Config c = config();
    c.username = "careful";
    c.password = "pw";
    Client narrower(c);
    Lock checked(narrower, "job");
    checked.lock();
    checked.unlock();
    EXPECT_TRUE(cached(scripts::lock_acquire));
    EXPECT_FALSE(cached(*scripts::lock_acquire.trusted));
    EXPECT_EQ(raw->command({"ACL", "LOG"})->elements, 0u) << "asking the rights was refused and logged";
}

TEST_F(NoChannels, TheDocumentedRulesAreEnough) {
    const auto rule = documented_acl_line();
    ASSERT_GT(rule.size(), 5u) << "no 'ACL SETUSER app' line in docs/errors.md";
    auto set = raw->command(std::vector<std::string>(rule.begin(), rule.end()));
    ASSERT_EQ(set->type, REDIS_REPLY_STATUS) << (set->str ? set->str : "");
    Config c = config();
    c.username = "app";
    c.password = "pw";
    Client client(c), other(c);

    Lock lock(client, "app:job"), lock_too(other, "app:job");
    FencedLock fenced(client, "app:fenced");
    FairLock fair(client, "app:fair"), fair_too(other, "app:fair");
    ReadWriteLock rw(client, "app:doc"), rw_too(other, "app:doc");
    SpinLock spin(client, "app:spin");
    SimpleLock simple(client, "app:simple");
    for (Lock* each : std::initializer_list<Lock*>{&lock, &fenced, &fair, &rw.read_lock(), &spin, &simple}) {
        each->lock();
        EXPECT_TRUE(each->is_locked()) << each->name();
    }
    // A waiter subscribes, and is woken by the unlock's message.
    auto waiter = lock_too.async_try_lock(other.new_owner(), 30s);
    auto fair_waiter = fair_too.async_try_lock(other.new_owner(), 30s);
    auto writer = rw_too.write_lock().async_try_lock(other.new_owner(), 30s);
    ASSERT_TRUE(eventually([&] { return subscribers("redisson_lock__channel:{app:job}") == 1; }));
    for (Lock* each : std::initializer_list<Lock*>{&lock, &fenced, &fair, &rw.read_lock(), &spin, &simple})
        each->unlock();
    EXPECT_TRUE(waiter.get());
    EXPECT_TRUE(fair_waiter.get());
    EXPECT_TRUE(writer.get());

    Semaphore slots(client, "app:slots");
    ASSERT_TRUE(slots.try_set_permits(1));
    slots.acquire();
    slots.release();
    PermitExpirableSemaphore pool(client, "app:pool");
    ASSERT_TRUE(pool.try_set_permits(1));
    pool.release(pool.acquire(10s));
    CountDownLatch gate(client, "app:gate");
    ASSERT_TRUE(gate.try_set_count(1));
    gate.count_down();
    EXPECT_TRUE(gate.await_for(0ms));
    EXPECT_EQ(raw->command({"ACL", "LOG"})->elements, 0u) << "the server refused something";
}

}  // namespace
}  // namespace holdfast::testing
