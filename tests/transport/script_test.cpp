// Every embedded script's SHA1 is the one Redis computes, and a flushed
// script cache is refilled without the caller noticing.
#include "holdfast_scripts.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using Scripts = RedisTest;

TEST_F(Scripts, EmbeddedSha1MatchesScriptLoad) {
    for (const auto* script : {&scripts::lock_acquire, &scripts::lock_release, &scripts::lock_renew,
                               &scripts::lock_force_unlock, &scripts::simple_lock_acquire,
                               &scripts::simple_lock_release, &scripts::simple_lock_renew,
                               &scripts::simple_lock_force_unlock}) {
        EXPECT_EQ(raw->string({"SCRIPT", "LOAD", script->body}), script->sha1) << script->name;
    }
}

TEST_F(Scripts, ScriptFlushIsTransparent) {
    Client client(config());
    Lock lock(client, "flushed");
    for (int i = 0; i < 3; ++i) {
        raw->command({"SCRIPT", "FLUSH"});
        lock.lock();
        raw->command({"SCRIPT", "FLUSH"});
        lock.unlock();
    }
    EXPECT_EQ(raw->integer({"EXISTS", "flushed"}), 0);
}

}  // namespace
}  // namespace holdfast::testing
