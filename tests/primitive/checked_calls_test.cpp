// The rule of src/primitive/checked_calls.lua.part, held for every embedded
// script (trusted twins included): Redis keeps a script's writes made before
// a call that fails, so a user whose ACL refuses one command the script runs
// (or the channel, or one of its keys) must get either what a user allowed
// everything gets, or an error with every key as it was and nothing
// published. A script missing from the table below fails the test, so a new
// script cannot skip the rule.
#include <regex>
#include <set>

#include "checked_calls_scenarios.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using support::ReplyPtr;

/// What a key holds: DUMP's bytes and its PTTL.
struct KeyState {
    std::string dump;
    long long pttl = 0;
};
using Keyspace = std::map<std::string, KeyState>;

/// One run of a script: its reply, the keyspace after it, what it published.
struct Outcome {
    std::string reply;  // Reply-like rendering
    bool error = false;
    ReplyPtr raw;
    Keyspace before, after;
    std::vector<std::string> published;
};

std::string render(const redisReply* r) {
    switch (r->type) {
        case REDIS_REPLY_NIL: return "(nil)";
        case REDIS_REPLY_INTEGER: return std::to_string(r->integer);
        case REDIS_REPLY_ERROR: return "(error) " + std::string(r->str, r->len);
        case REDIS_REPLY_ARRAY: {
            std::string out = "[";
            for (std::size_t i = 0; i < r->elements; ++i) out += (i ? ", " : "") + render(r->element[i]);
            return out + "]";
        }
        default: return '"' + std::string(r->str, r->len) + '"';
    }
}

/// Whether two replies agree: exactly, or for a scenario with clock values
/// in its reply, integers within a second (or both clock readings).
bool same_reply(const redisReply* a, const redisReply* b, bool timed) {
    if (a->type != b->type) return false;
    if (a->type == REDIS_REPLY_INTEGER) {
        if (a->integer == b->integer) return true;
        const bool clocks = a->integer > 1'000'000'000'000 && b->integer > 1'000'000'000'000;
        return timed && (clocks || std::llabs(a->integer - b->integer) <= 1000);
    }
    if (a->type != REDIS_REPLY_ARRAY) return render(a) == render(b);
    if (a->elements != b->elements) return false;
    for (std::size_t i = 0; i < a->elements; ++i)
        if (!same_reply(a->element[i], b->element[i], timed)) return false;
    return true;
}

/// Every command a script's text runs with redis.call or lists for a check,
/// and the publish command its scenario passes. Not side() nor pcall: their
/// refusals abort nothing.
std::set<std::string> commands_of(const std::string& body, const Scenario& scenario) {
    static const std::regex called(R"(redis\.call\('([a-z_]+)')"), listed(R"(\{'([a-z_]+)',)");
    std::set<std::string> found;
    for (const std::regex* pattern : {&called, &listed})
        for (std::sregex_iterator at(body.begin(), body.end(), *pattern), end; at != end; ++at)
            found.insert((*at)[1].str());
    for (const std::string& arg : scenario.args)
        if (arg == "publish" || arg == "spublish") found.insert(arg);
    return found;
}

/// A glob matching exactly `key` (ACL key patterns are globs).
std::string exact_pattern(const std::string& key) {
    std::string out;
    for (const char c : key) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

class CheckedCalls : public RedisTest {
protected:
    void SetUp() override {
        RedisTest::SetUp();
        raw->command({"ACL", "SETUSER", "rule", "on", ">pw", "~*", "&*", "+@all"});
        user = std::make_unique<support::SyncRedis>(server->port());
        ASSERT_EQ(user->string({"AUTH", "rule", "pw"}), "OK");
        listener = std::make_unique<support::SyncRedis>(server->port());
        listener->command({"PSUBSCRIBE", "*"});
    }

    /// The rule user's rights from now on: everything, then `rules`.
    void allow(const std::vector<std::string>& rules) const {
        // Not `reset`: it would switch the user off, and some servers drop its connections then.
        std::vector<std::string> setuser{"ACL",        "SETUSER", "rule", "on",   ">pw",
                                         "resetkeys", "resetchannels", "-@all", "+@all"};
        setuser.insert(setuser.end(), rules.begin(), rules.end());
        const ReplyPtr set = raw->command(setuser);
        if (set->type == REDIS_REPLY_ERROR) throw std::runtime_error("ACL SETUSER: " + std::string(set->str));
    }

    Keyspace keyspace() const {
        Keyspace result;
        const ReplyPtr keys = raw->command({"KEYS", "*"});
        for (std::size_t i = 0; i < keys->elements; ++i) {
            const std::string key(keys->element[i]->str, keys->element[i]->len);
            const ReplyPtr dump = raw->command({"DUMP", key});
            result[key] = {std::string(dump->str, dump->len), raw->integer({"PTTL", key})};
        }
        return result;
    }

    /// Messages the listener got since the last call (a PING marks the end:
    /// anything published before it arrives first).
    std::vector<std::string> published() const {
        std::vector<std::string> messages;
        for (ReplyPtr r = listener->command({"PING", "end"});; r = listener->read_reply()) {
            if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && std::string(r->element[0]->str) == "pong") break;
            if (r->type == REDIS_REPLY_ARRAY && r->elements == 4)
                messages.push_back(std::string(r->element[2]->str) + " " + r->element[3]->str);
        }
        return messages;
    }

    Outcome run(const detail::Script& script, const Scenario& scenario) const {
        raw->command({"FLUSHALL"});
        for (const auto& setup : scenario.setup) {
            const ReplyPtr r = raw->command(setup);
            if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error(setup[0] + ": " + r->str);
        }
        Outcome outcome;
        outcome.before = keyspace();
        published();  // none from the setup counts
        std::vector<std::string> eval{"EVAL", script.body, std::to_string(scenario.keys.size())};
        eval.insert(eval.end(), scenario.keys.begin(), scenario.keys.end());
        eval.insert(eval.end(), scenario.args.begin(), scenario.args.end());
        outcome.raw = user->command(eval);
        outcome.reply = render(outcome.raw.get());
        outcome.error = outcome.raw->type == REDIS_REPLY_ERROR;
        outcome.after = keyspace();
        outcome.published = published();
        return outcome;
    }

    /// The key `key` is as it was (its PTTL only counted down).
    static bool unchanged(const Keyspace& before, const Keyspace& after, const std::string& key) {
        const auto was = before.find(key), is = after.find(key);
        if (was == before.end() || is == after.end()) return was == before.end() && is == after.end();
        if (was->second.dump != is->second.dump) return false;
        const long long a = was->second.pttl, b = is->second.pttl;
        return a == b || (a > 0 && b > 0 && b <= a && a - b < 2000);
    }

    static std::string describe(const Keyspace& keys) {
        std::string out;
        for (const auto& [key, state] : keys) out += " " + key + "(pttl " + std::to_string(state.pttl) + ")";
        return out.empty() ? " (none)" : out;
    }

    /// Holds the rule for one restricted run against the unrestricted one.
    void expect_rule(const std::string& where, const Outcome& free_run, const Outcome& run,
                     const Scenario& scenario) const {
        if (!run.error && same_reply(run.raw.get(), free_run.raw.get(), scenario.timed)) return;
        if (run.error) {
            bool same = run.before.size() == run.after.size();
            for (const auto& [key, state] : run.before) same = same && unchanged(run.before, run.after, key);
            EXPECT_TRUE(same) << where << ": refused (" << run.reply << ") but the keys changed: before"
                              << describe(run.before) << ", after" << describe(run.after);
            EXPECT_TRUE(run.published.empty())
                << where << ": refused (" << run.reply << ") but published " << run.published.front();
            return;
        }
        // A batch (renewals): each key's outcome its own, 0 for one not renewed, which is left as it was.
        if (scenario.per_key && run.raw->type == REDIS_REPLY_ARRAY &&
            run.raw->elements == free_run.raw->elements) {
            for (std::size_t i = 0; i < run.raw->elements; ++i) {
                if (same_reply(run.raw->element[i], free_run.raw->element[i], false)) continue;
                EXPECT_EQ(run.raw->element[i]->integer, 0) << where << ": key " << scenario.keys[i];
                EXPECT_TRUE(unchanged(run.before, run.after, scenario.keys[i]))
                    << where << ": " << scenario.keys[i] << " reported not renewed, but changed";
            }
            return;
        }
        ADD_FAILURE() << where << ": replied " << run.reply << " where a user allowed everything gets "
                      << free_run.reply;
    }

    std::unique_ptr<support::SyncRedis> user, listener;
};

TEST_F(CheckedCalls, NoScriptLeavesHalfItsWritesWhenTheAclRefusesOneOfItsCalls) {
    const auto table = scenarios();
    int runs = 0, refused = 0;
    for (const detail::Script* script : scripts::all) {
        std::string name = script->name;
        if (name.ends_with("_trusted")) name.resize(name.size() - std::string_view("_trusted").size());
        const auto found = table.find(name);
        if (found == table.end()) {
            ADD_FAILURE() << script->name << " has no scenario in tests/primitive/checked_calls_scenarios.hpp";
            continue;
        }
        for (const Scenario& scenario : found->second) {
            const std::string where = std::string(script->name) + " / " + scenario.name;
            allow({"~*", "&*"});
            const Outcome free_run = run(*script, scenario);
            ASSERT_FALSE(free_run.error) << where << ": " << free_run.reply;
            std::set<std::string> keys(scenario.keys.begin(), scenario.keys.end());
            for (const auto& [key, state] : free_run.before) keys.insert(key);
            for (const auto& [key, state] : free_run.after) keys.insert(key);
            // Honest scenarios: each reaches a write or a publish.
            bool changed = !free_run.published.empty() || free_run.before.size() != free_run.after.size();
            for (const std::string& key : keys) changed = changed || !unchanged(free_run.before, free_run.after, key);
            EXPECT_TRUE(changed || scenario.reads_only) << where << ": changes nothing, so tests nothing";

            std::vector<std::pair<std::string, std::vector<std::string>>> restrictions;
            for (const std::string& command : commands_of(script->body, scenario))
                restrictions.push_back({"without " + command, {"~*", "&*", "-" + command}});
            restrictions.push_back({"without channels", {"~*", "resetchannels"}});
            for (const std::string& lacking : keys) {
                // Keys passed as arguments are hints (side() in lock/handoff.lua.part): refused, they are no hint.
                if (std::find(scenario.args.begin(), scenario.args.end(), lacking) != scenario.args.end()) continue;
                std::vector<std::string> rules{"&*"};
                // Every key the scenario touches, and every argument (the side keys), but this one.
                std::set<std::string> granted(keys);
                granted.insert(scenario.args.begin(), scenario.args.end());
                granted.erase(lacking);
                for (const std::string& key : granted) rules.push_back("~" + exact_pattern(key));
                restrictions.push_back({"without key " + lacking, rules});
            }
            for (const auto& [what, rules] : restrictions) {
                allow(rules);
                const Outcome restricted = run(*script, scenario);
                ++runs;
                refused += restricted.error;
                expect_rule(where + " / " + what, free_run, restricted, scenario);
            }
        }
    }
    std::cout << runs << " restricted runs, " << refused << " refused\n";
    EXPECT_GT(refused, 0);
}

// The table covers what the rule needs: every script is in it (checked
// above), and no entry names a script that does not exist.
TEST(CheckedCallsScenarios, NameOnlyEmbeddedScripts) {
    std::set<std::string> names;
    for (const detail::Script* script : scripts::all) names.insert(script->name);
    for (const auto& [name, list] : scenarios()) {
        EXPECT_TRUE(names.contains(name)) << name;
        EXPECT_FALSE(list.empty()) << name;
    }
}

}  // namespace
}  // namespace holdfast::testing
