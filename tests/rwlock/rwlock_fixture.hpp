// What the read-write lock tests share: a look at the hash and the hold keys.
#pragma once

#include <map>
#include <string>

#include "redis_fixture.hpp"

namespace holdfast::testing {

class ReadWriteTest : public RedisTest {
protected:
    /// The hash's fields and values (empty when the key is gone).
    std::map<std::string, std::string> fields(const std::string& key) const {
        auto reply = raw->command({"HGETALL", key});
        std::map<std::string, std::string> result;
        for (std::size_t i = 0; i + 1 < reply->elements; i += 2)
            result[reply->element[i]->str] = reply->element[i + 1]->str;
        return result;
    }

    /// Redisson's key for read hold `n` of `owner` on a lock named without braces.
    static std::string hold_key(const std::string& name, const std::string& owner, int n) {
        return "{" + name + "}:" + owner + ":rwlock_timeout:" + std::to_string(n);
    }

    static std::string channel(const std::string& name) { return "redisson_rwlock:{" + name + "}"; }

    /// The next message `listener` (subscribed) receives is `payload` on `on`.
    static void expect_message(support::SyncRedis& listener, const std::string& on, const std::string& payload) {
        auto message = listener.read_reply();
        ASSERT_EQ(message->elements, 3u);
        EXPECT_EQ(std::string(message->element[0]->str), "message");
        EXPECT_EQ(std::string(message->element[1]->str), on);
        EXPECT_EQ(std::string(message->element[2]->str), payload);
    }

    Config short_watchdog() const {
        Config c = config();
        c.lock_watchdog_timeout = std::chrono::milliseconds(1500);
        return c;
    }
};

}  // namespace holdfast::testing
