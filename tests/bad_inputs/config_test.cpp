// Bad-input catalog, configuration: malformed URIs and out-of-range settings
// are std::invalid_argument naming the URI or the field and what is expected,
// before any connection is made.
#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

struct BadUri {
    const char* uri;
    const char* why;  // what the message must say is wrong
    friend void PrintTo(const BadUri& b, std::ostream* os) { *os << "'" << b.uri << "'"; }
};

class BadUris : public ::testing::TestWithParam<BadUri> {};

TEST_P(BadUris, AreRefusedNamingTheUriAndTheFix) {
    const auto& [uri, why] = GetParam();
    const auto what = error_of<std::invalid_argument>([&] { Config::from_uri(uri); });
    EXPECT_TRUE(mentions(what, {"bad Redis URI '", why, "expected redis[s]://"}));
    // The URI is shown as given, but for its password (an error may be logged).
    const std::string_view given(uri);
    if (given.find('@') == std::string_view::npos && given.find("password=") == std::string_view::npos)
        EXPECT_TRUE(mentions(what, {"bad Redis URI '" + std::string(uri) + "'"}));
    else
        EXPECT_TRUE(mentions(what, {"***"}));
    // The Client constructor says the same, and connects to nothing.
    EXPECT_TRUE(mentions(error_of<std::invalid_argument>([&] { Client client(uri); }), {why}));
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, BadUris,
    ::testing::Values(BadUri{"", "unknown scheme"}, BadUri{"127.0.0.1:6379", "unknown scheme"},
                      BadUri{"http://127.0.0.1:6379", "unknown scheme"},
                      BadUri{"redis://", "no host"},
                      BadUri{"redis://:6379", "no host"}, BadUri{"redis://h:port", "port 'port' is not a number"},
                      BadUri{"redis://h:70000", "port '70000' is out of range"},
                      BadUri{"redis://h:-1", "port '-1' is not a number"}, BadUri{"redis://h:0", "port 0"},
                      BadUri{"redis://h/x", "database 'x' is not a number"},
                      BadUri{"redis://h/-1", "database '-1' is negative"},
                      BadUri{"redis://h/99999999999", "database '99999999999' is out of range"},
                      BadUri{"redis://a%zzb@h", "bad %-escape"}, BadUri{"redis://a%4@h", "bad %-escape"},
                      BadUri{"redis://[::1", "unclosed '['"}, BadUri{"redis://[::1]x", "junk after ']'"},
                      BadUri{"unix://relative.sock", "absolute"}, BadUri{"unix://", "absolute"},
                      BadUri{"unix:///run/r.sock?db=x", "database 'x' is not a number"},
                      BadUri{"unix:///run/r.sock?pass=x", "unknown parameter 'pass'"},
                      BadUri{"unix://:a@/run/r.sock?password=b", "a password both before '@' and in ?password="},
                      BadUri{"redis://a:1,b:2", "several hosts: use redis-sentinel:// or redis-cluster://"},
                      BadUri{"redis-sentinel://s1:26379", "no #master-name"},
                      BadUri{"redis://h#master", "a #master-name is only for redis-sentinel://"},
                      BadUri{"redis-cluster://a:7000/1", "a cluster has only database 0"},
                      BadUri{"redis-cluster://a:7000,,b:7001", "no host"},
                      BadUri{"redis://h?db=1", "unknown parameter 'db' (known: key_prefix, fair_lock_wait_timeout, nat_map, scan_interval)"},
                      BadUri{"redis://h?fair_lock_wait_timeout=5m", "fair_lock_wait_timeout '5m' is not a number"},
                      BadUri{"redis://h?nat_map=10.0.0.5:6379", "nat_map entry '10.0.0.5:6379' is not ANNOUNCED=REACHABLE"},
                      BadUri{"redis://:pw@h?key_prefix=a@b", "escape it as %40"}),
    [](const auto& info) { return "uri" + std::to_string(info.index); });

struct BadSetting {
    const char* name;  // the field the message must name
    std::function<void(Config&)> set;
    const char* why;
    friend void PrintTo(const BadSetting& b, std::ostream* os) { *os << b.name << ": " << b.why; }
};

class BadSettings : public ::testing::TestWithParam<BadSetting> {};

TEST_P(BadSettings, AreRefusedNamingTheField) {
    Config c;
    c.port = support::free_port();  // nothing listens: a setting let through fails as a ConnectionError
    GetParam().set(c);
    const auto what = error_of<std::invalid_argument>([&] { Client client(c); });
    EXPECT_TRUE(mentions(what, {std::string("Config::") + GetParam().name, GetParam().why}));
}

TEST(ConfigDefaults, TwoConnectionsPerServerButOnePerClusterMasterUnlessSet) {
    Config c;
    EXPECT_EQ(c.pool_size(), 2u);
    c.topology = Topology::cluster;
    EXPECT_EQ(c.pool_size(), 1u);
    c.connection_pool_size = 3;
    EXPECT_EQ(c.pool_size(), 3u);
    c.topology = Topology::single;
    EXPECT_EQ(c.pool_size(), 3u);
}

using std::chrono::milliseconds;

INSTANTIATE_TEST_SUITE_P(
    BadInputs, BadSettings,
    ::testing::Values(
        BadSetting{"timeout", [](Config& c) { c.timeout = milliseconds(0); }, "must be > 0"},
        BadSetting{"timeout", [](Config& c) { c.timeout = milliseconds(-1); }, "must be > 0"},
        BadSetting{"timeout", [](Config& c) { c.timeout = milliseconds::max(); }, "at most"},
        BadSetting{"connect_timeout", [](Config& c) { c.connect_timeout = milliseconds(0); }, "must be > 0"},
        BadSetting{"connect_timeout", [](Config& c) { c.connect_timeout = milliseconds::max(); }, "at most"},
        BadSetting{"retry_interval", [](Config& c) { c.retry_interval = milliseconds(0); }, "must be > 0"},
        BadSetting{"retry_interval_max", [](Config& c) { c.retry_interval_max = milliseconds::max(); }, "at most"},
        BadSetting{"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = milliseconds(2); },
                   "at least 3 ms"},
        BadSetting{"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = milliseconds::max(); },
                   "at most"},
        BadSetting{"connection_pool_size", [](Config& c) { c.connection_pool_size = 0; }, "at least 1"},
        BadSetting{"lock_watchdog_batch_size", [](Config& c) { c.lock_watchdog_batch_size = 0; }, "at least 1"},
        BadSetting{"lock_handoff_check", [](Config& c) { c.lock_handoff_check = milliseconds(0); }, "must be > 0"},
        BadSetting{"lock_handoff_check", [](Config& c) { c.lock_handoff_check = milliseconds::max(); }, "at most"},
        BadSetting{"host", [](Config& c) { c.host = ""; }, "empty"},
        BadSetting{"port", [](Config& c) { c.port = 0; }, "must not be 0"},
        BadSetting{"database", [](Config& c) { c.database = -1; }, "must be >= 0"},
        BadSetting{"fair_lock_wait_timeout", [](Config& c) { c.fair_lock_wait_timeout = milliseconds(0); },
                   "must be > 0"},
        BadSetting{"sentinel_scan_interval", [](Config& c) { c.sentinel_scan_interval = milliseconds(0); },
                   "must be > 0"},
        BadSetting{"nat_map", [](Config& c) { c.nat_map = {{{"", 0}, {"127.0.0.1", 0}}}; }, "has no host"}),
    [](const auto& info) { return "setting" + std::to_string(info.index); });

}  // namespace
}  // namespace holdfast::testing
