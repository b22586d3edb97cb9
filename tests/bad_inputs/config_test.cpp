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
                      BadUri{"redis://:pw@h?key_prefix=a@b", "escape it as %40"},
                      BadUri{"redis://h:", "port '' is not a number"}, BadUri{"redis://[::1]:0", "port 0"},
                      BadUri{"redis://[]:1", "no host"},
                      BadUri{"redis://h/2147483648", "database '2147483648' is out of range"},
                      BadUri{"redis-sentinel://s1:99999#m", "port '99999' is out of range"},
                      BadUri{"redis-sentinel://s1#m%zz", "bad %-escape"},
                      BadUri{"redis://h?key_prefix=%zz", "bad %-escape"},
                      BadUri{"redis://h?scan_interval=soon", "scan_interval 'soon' is not a number"},
                      BadUri{"redis://h?fair_lock_wait_timeout=-5", "fair_lock_wait_timeout '-5' is negative"},
                      BadUri{"redis://h?nat_map=", "nat_map entry '' is not ANNOUNCED=REACHABLE"},
                      BadUri{"redis://h?nat_map=a:1=b:x", "port 'x' is not a number"},
                      BadUri{"redis://h?nat_map=a=[::1", "unclosed '['"},
                      BadUri{"redis://h?nat_map==b", "no host"},
                      BadUri{"redis://h?nat_map=a=b,c", "nat_map entry 'c' is not ANNOUNCED=REACHABLE"},
                      BadUri{"redis://h?sentinel_password=x", "unknown parameter 'sentinel_password'"},
                      BadUri{"redis-sentinel://s1?x=1#m",
                             "unknown parameter 'x' (known: sentinel_password, sentinel_username, key_prefix"},
                      BadUri{"unix:///run/r.sock?x=1", "unknown parameter 'x' (known: db, password, username, key_prefix"},
                      BadUri{"unix://:pw@relative.sock", "absolute"}),
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
        BadSetting{"nat_map", [](Config& c) { c.nat_map = {{{"", 0}, {"127.0.0.1", 0}}}; }, "has no host"},
        BadSetting{"nat_map", [](Config& c) { c.nat_map = {{{"10.0.0.5", 0}, {"", 7000}}}; },
                   "a mapping has no host (announced '10.0.0.5', reachable '')"},
        BadSetting{"retry_interval_max", [](Config& c) { c.retry_interval_max = milliseconds(0); }, "must be > 0"},
        BadSetting{"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = milliseconds(0); },
                   "must be > 0"},
        BadSetting{"replica_sync_timeout", [](Config& c) { c.replica_sync_timeout = milliseconds(0); }, "must be > 0"},
        BadSetting{"replica_sync_timeout", [](Config& c) { c.replica_sync_timeout = milliseconds::max(); },
                   "must be at most 3155695200000 ms (100 years), got"},
        BadSetting{"fair_lock_wait_timeout", [](Config& c) { c.fair_lock_wait_timeout = milliseconds::max(); },
                   "at most"},
        BadSetting{"cluster_scan_interval", [](Config& c) { c.cluster_scan_interval = milliseconds(-5); },
                   "must be > 0"},
        BadSetting{"slow_acquire_threshold", [](Config& c) { c.slow_acquire_threshold = milliseconds(-1); },
                   "must be >= 0"},
        BadSetting{"client_name", [](Config& c) { c.client_name = "my app"; },
                   "CLIENT SETNAME takes printable ASCII without spaces; got 'my app'"},
        BadSetting{"client_name", [](Config& c) { c.client_name = "app\n"; }, "got 'app\\n'"},
        BadSetting{"client_name", [](Config& c) { c.client_name = "caf\xc3\xa9"; }, "printable ASCII"},
        BadSetting{"tls", [](Config& c) { c.tls.cert_file = "client.pem"; }, "give both cert_file and key_file"},
        BadSetting{"tls", [](Config& c) { c.tls.key_file = "client.key"; }, "give both cert_file and key_file"},
        BadSetting{"tls", [](Config& c) {
                       c.unix_socket = "/run/redis.sock";
                       c.tls.enabled = true;
                   },
                   "TLS over a Unix socket (unix_socket) is not supported"},
        BadSetting{"servers", [](Config& c) {
                       c.topology = Topology::sentinel;
                       c.sentinel_master = "m";
                   },
                   "Topology::sentinel needs the sentinels' addresses"},
        BadSetting{"sentinel_master", [](Config& c) {
                       c.topology = Topology::sentinel;
                       c.servers = {{"127.0.0.1", 26379}};
                   },
                   "Topology::sentinel needs the master's name"},
        BadSetting{"servers", [](Config& c) { c.topology = Topology::cluster; },
                   "Topology::cluster needs at least one seed node"},
        BadSetting{"database", [](Config& c) {
                       c.topology = Topology::cluster;
                       c.servers = {{"127.0.0.1", 7000}};
                       c.database = 1;
                   },
                   "a cluster has only database 0"},
        BadSetting{"servers", [](Config& c) {
                       c.topology = Topology::cluster;
                       c.servers = {{"127.0.0.1", 7000}, {"127.0.0.1", 0}};
                   },
                   "a server has no host, or port 0"}),
    [](const auto& info) { return "setting" + std::to_string(info.index); });

}  // namespace
}  // namespace holdfast::testing
