// event_logger() (holdfast/log.hpp): the ready on_event handler writes each
// event as a timestamped line with a level, filtered by a threshold, to a
// sink or stderr; on a client against a real server, a cut connection comes
// out as a warning and its restoration as info.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "holdfast/log.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

// The lines a sink was handed, from any thread.
class Lines {
public:
    LogSink sink() {
        return [this](LogLevel level, std::string_view line) {
            std::lock_guard lock(mutex_);
            lines_.push_back({level, std::string(line)});
        };
    }
    std::vector<std::pair<LogLevel, std::string>> all() const {
        std::lock_guard lock(mutex_);
        return lines_;
    }
    bool has(const std::string& text) const {
        for (const auto& [level, line] : all())
            if (line.find(text) != std::string::npos) return true;
        return false;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::pair<LogLevel, std::string>> lines_;
};

Event lost_connection() {
    Event event;
    event.kind = Event::Kind::connection_lost;
    event.server = "127.0.0.1:1";
    event.detail = "refused";
    return event;
}

// "2025-06-01T12:00:00.123Z" back to a time point.
std::chrono::system_clock::time_point parse_utc(const std::string& text) {
    std::tm utc{};
    int millis = 0;
    std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday, &utc.tm_hour,
                &utc.tm_min, &utc.tm_sec, &millis);
    utc.tm_year -= 1900;
    utc.tm_mon -= 1;
    return std::chrono::system_clock::from_time_t(::timegm(&utc)) + std::chrono::milliseconds(millis);
}

TEST(EventLogger, ALeaseLostIsAnErrorALostConnectionAWarningTheRestInfo) {
    EXPECT_EQ(level_of(Event::Kind::lease_lost), LogLevel::error);
    EXPECT_EQ(level_of(Event::Kind::completion_threw), LogLevel::error);
    EXPECT_EQ(level_of(Event::Kind::connection_lost), LogLevel::warning);
    EXPECT_EQ(level_of(Event::Kind::renewal_failed), LogLevel::warning);
    EXPECT_EQ(level_of(Event::Kind::release_failed), LogLevel::warning);
    EXPECT_EQ(level_of(Event::Kind::connected), LogLevel::info);
    EXPECT_EQ(level_of(Event::Kind::connection_restored), LogLevel::info);
    EXPECT_EQ(level_of(Event::Kind::slow_acquire), LogLevel::info);
    EXPECT_EQ(level_of(Event::Kind::script_reloaded), LogLevel::info);
    EXPECT_EQ(to_string(LogLevel::warning), "warning");
}

// Every Event::Kind, in declaration order (to_string says "unknown" past the last).
std::vector<Event::Kind> every_kind() {
    std::vector<Event::Kind> kinds;
    for (int i = 0; to_string(static_cast<Event::Kind>(i)) != "unknown"; ++i) kinds.push_back(static_cast<Event::Kind>(i));
    return kinds;
}

// docs/operations.md lists each kind once under the level level_of() gives
// it ("`warning` for `connection_lost`, ..."), and has a row for it in its
// table of kinds: docs and code cannot drift apart.
TEST(EventLogger, OperationsMdGivesEveryKindItsLevel) {
    const std::string docs = HOLDFAST_TESTS_DIR "/../docs/operations.md";
    std::ifstream in(docs);
    ASSERT_TRUE(in) << docs;
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    std::map<std::string, std::vector<std::string>> listed;  // kind -> the levels it is listed under
    for (const LogLevel level : {LogLevel::info, LogLevel::warning, LogLevel::error}) {
        const std::string lead = "\n`" + std::string(to_string(level)) + "` for ";
        const auto at = text.find(lead);
        ASSERT_NE(at, std::string::npos) << docs << " has no line starting " << lead.substr(1);
        const std::string line = text.substr(at + lead.size(), text.find('\n', at + 1) - at - lead.size());
        static const std::regex name("`([a-z_]+)`");
        for (auto it = std::sregex_iterator(line.begin(), line.end(), name); it != std::sregex_iterator(); ++it)
            listed[(*it)[1].str()].push_back(std::string(to_string(level)));
    }
    const auto kinds = every_kind();
    ASSERT_GE(kinds.size(), 9u);
    for (const Event::Kind kind : kinds) {
        const std::string name(to_string(kind));
        EXPECT_EQ(listed[name], std::vector<std::string>{std::string(to_string(level_of(kind)))})
            << name << ": docs/operations.md's levels do not say what level_of() gives";
        EXPECT_NE(text.find("| `" + name + "` |"), std::string::npos) << name << " has no row in docs/operations.md";
        listed.erase(name);
    }
    for (const auto& [name, levels] : listed) ADD_FAILURE() << "docs/operations.md gives a level to `" << name << "`, no kind";
}

// One line: UTC time with milliseconds (the time of the call), the level,
// then Event::to_string() as it is.
TEST(EventLogger, ALineIsTheTimeTheLevelAndTheEvent) {
    Lines lines;
    const EventHandler log = event_logger(LogLevel::info, lines.sink());
    const auto before = std::chrono::system_clock::now();
    log(lost_connection());
    const auto after = std::chrono::system_clock::now();
    const auto written = lines.all();
    ASSERT_EQ(written.size(), 1u);
    EXPECT_EQ(written[0].first, LogLevel::warning);
    const std::string& line = written[0].second;
    std::smatch parts;
    ASSERT_TRUE(std::regex_match(line, parts, std::regex(R"((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) warning (.*))")))
        << line;
    EXPECT_EQ(parts[2].str(), lost_connection().to_string());
    const auto stamped = parse_utc(parts[1].str());
    EXPECT_GE(stamped, std::chrono::floor<std::chrono::milliseconds>(before)) << line;
    EXPECT_LE(stamped, after) << line;
}

TEST(EventLogger, EventsBelowTheThresholdAreNotWritten) {
    Lines lines;
    const EventHandler log = event_logger(LogLevel::warning, lines.sink());
    Event restored;
    restored.kind = Event::Kind::connection_restored;
    restored.server = "127.0.0.1:1";
    log(restored);
    EXPECT_TRUE(lines.all().empty());
    log(lost_connection());
    EXPECT_EQ(lines.all().size(), 1u);
}

TEST(EventLogger, WithoutASinkTheLineGoesToStderr) {
    ::testing::internal::CaptureStderr();
    event_logger()(lost_connection());
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(std::regex_match(err, std::regex(R"(\S+Z warning holdfast: connection_lost: on 127\.0\.0\.1:1: refused\n)")))
        << err;
}

using EventLoggerOnAClient = RedisTest;

// The wiring a service uses: Config::on_event = event_logger(...). Cutting
// the client's connections is logged as a warning naming the server, and the
// reconnect as info.
TEST_F(EventLoggerOnAClient, ACutConnectionIsAWarningAndItsReturnInfo) {
    Lines lines;
    Config c = config();
    c.on_event = event_logger(LogLevel::info, lines.sink());
    c.client_name = "log-test";
    Client client(c);
    Lock lock(client, "ledger");
    lock.lock();
    lock.unlock();
    raw->command({"CLIENT", "KILL", "SKIPME", "yes"});  // every other connection
    const std::string server_name = "127.0.0.1:" + std::to_string(server->port());
    ASSERT_TRUE(eventually([&] { return lines.has(" info holdfast: connection_restored: on " + server_name); }, 10s));
    EXPECT_TRUE(lines.has(" warning holdfast: connection_lost: on " + server_name));
    for (const auto& [level, line] : lines.all()) EXPECT_EQ(line.find(to_string(level)), 25u) << line;
}

}  // namespace
}  // namespace holdfast::testing
