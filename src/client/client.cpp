#include "holdfast/client.hpp"

#include <errno.h>  // program_invocation_short_name
#include <sys/syscall.h>
#include <unistd.h>

#include <future>
#include <random>
#include <stdexcept>

#include "client/client_core.hpp"
#include "common/quoted.hpp"

namespace holdfast {
namespace detail {
namespace {

std::string random_uuid() {
    std::random_device device;
    std::mt19937_64 rng((static_cast<std::uint64_t>(device()) << 32) ^ device());
    const std::uint64_t hi = rng(), lo = rng();
    char text[37];
    // Version 4, variant 10: as java.util.UUID.randomUUID() prints it.
    std::snprintf(text, sizeof text, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                  static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0x0fff),
                  static_cast<unsigned>(0x8000 | ((lo >> 48) & 0x3fff)),
                  static_cast<unsigned long long>(lo & 0xffffffffffffULL));
    return text;
}

void validate(const Config& config) {
    // Longer ones overflow steady_clock deadlines, or Redis expiry times.
    auto positive = [](std::chrono::milliseconds d, const char* name) {
        if (d <= std::chrono::milliseconds::zero())
            throw std::invalid_argument(std::string("holdfast: Config::") + name + " must be > 0");
        if (d > max_duration)
            throw std::invalid_argument(std::string("holdfast: Config::") + name + " must be at most " +
                                        std::to_string(max_duration.count()) + " ms (100 years), got " +
                                        std::to_string(d.count()) + " ms");
    };
    positive(config.connect_timeout, "connect_timeout");
    positive(config.timeout, "timeout");
    positive(config.retry_interval, "retry_interval");
    positive(config.retry_interval_max, "retry_interval_max");
    positive(config.lock_watchdog_timeout, "lock_watchdog_timeout");
    if (config.lock_watchdog_timeout < std::chrono::milliseconds(3))
        throw std::invalid_argument("holdfast: Config::lock_watchdog_timeout must be at least 3 ms");
    if (config.connection_pool_size == std::size_t{0})
        throw std::invalid_argument("holdfast: Config::connection_pool_size must be at least 1");
    if (config.lock_watchdog_batch_size == 0)
        throw std::invalid_argument("holdfast: Config::lock_watchdog_batch_size must be at least 1");
    positive(config.replica_sync_timeout, "replica_sync_timeout");
    if (config.database < 0) throw std::invalid_argument("holdfast: Config::database must be >= 0");
    auto fail = [](const std::string& why) { throw std::invalid_argument("holdfast: Config::" + why); };
    switch (config.topology) {
        case Topology::single:
            if (config.unix_socket.empty() && config.host.empty()) fail("host is empty");
            if (config.unix_socket.empty() && config.port == 0) fail("port must not be 0");
            if (!config.unix_socket.empty() && config.tls.enabled) fail("tls: TLS over a Unix socket (unix_socket) is not supported");
            break;
        case Topology::sentinel:
            if (config.servers.empty()) fail("servers: Topology::sentinel needs the sentinels' addresses");
            if (config.sentinel_master.empty()) fail("sentinel_master: Topology::sentinel needs the master's name");
            break;
        case Topology::cluster:
            if (config.servers.empty()) fail("servers: Topology::cluster needs at least one seed node");
            if (config.database != 0) fail("database: a cluster has only database 0");
            break;
    }
    for (const ServerAddress& s : config.servers)
        if (s.host.empty() || s.port == 0) fail("servers: a server has no host, or port 0");
    if (config.slow_acquire_threshold < std::chrono::milliseconds::zero()) fail("slow_acquire_threshold must be >= 0");
    if (config.client_name)
        for (char c : *config.client_name)
            if (c <= ' ' || c > '~')
                fail("client_name: CLIENT SETNAME takes printable ASCII without spaces; got " +
                     quoted(*config.client_name));
    if (config.tls.cert_file.empty() != config.tls.key_file.empty())
        fail("tls: give both cert_file and key_file (a client certificate and its key), or neither");
}

// "<program>-<client id>", printable and without spaces as CLIENT SETNAME requires.
std::string default_client_name(const std::string& uuid) {
    std::string name = program_invocation_short_name;
    for (char& c : name)
        if (c <= ' ' || c > '~') c = '_';
    return (name.empty() ? "holdfast" : name) + "-" + uuid;
}

// The Config the transport runs on: validated, the client name filled in,
// and events routed through the client's telemetry (which counts them).
Config effective(const Config& config, const std::string& uuid, const std::shared_ptr<const Telemetry>& telemetry) {
    validate(config);
    Config c = config;
    if (!c.client_name) c.client_name = default_client_name(uuid);
    c.on_event = nullptr;
    if (telemetry->listening()) c.on_event = [telemetry](const Event& event) { telemetry->tell(event); };
    return c;
}

}  // namespace

ClientCore::ClientCore(const Config& config)
    : uuid(random_uuid()),
      telemetry(std::make_shared<Telemetry>(config.on_event, config.metrics, config.slow_acquire_threshold)),
      transport(effective(config, uuid, telemetry)),
      watchdog(transport, *telemetry, config.lock_watchdog_timeout, config.lock_watchdog_batch_size) {}

// The loop stops first: the watchdog's timer must not fire into a destroyed object.
ClientCore::~ClientCore() { transport.shutdown(); }

const std::string& ClientCore::current_owner() const {
    static thread_local const long tid = ::syscall(SYS_gettid);
    // One slot per thread: a thread using several clients rebuilds on a switch.
    static thread_local const ClientCore* cached_for = nullptr;
    static thread_local std::string cached;
    if (cached_for != this || !cached.starts_with(uuid)) {
        cached = uuid + ':' + std::to_string(tid);
        cached_for = this;
    }
    return cached;
}

std::string ClientCore::new_owner() { return uuid + ':' + std::to_string(next_owner_++); }

}  // namespace detail

Client::Client(const Config& config) : core_(std::make_unique<detail::ClientCore>(config)) {
    // Fail here, naming the server, rather than at the first lock.
    auto ready = std::make_shared<std::promise<void>>();
    auto done = ready->get_future();
    core_->transport.execute({}, {"PING"}, [ready](std::exception_ptr error, detail::Reply) {
        if (error) ready->set_exception(error);
        else ready->set_value();
    });
    done.get();
}

Client::Client(std::string_view uri) : Client(Config::from_uri(uri)) {}

Client::~Client() = default;

const std::string& Client::id() const { return core_->uuid; }
std::string Client::current_owner() const { return core_->current_owner(); }
std::string Client::new_owner() { return core_->new_owner(); }
const Config& Client::config() const { return core_->transport.config(); }
Metrics Client::metrics() const { return core_->telemetry->snapshot(); }

}  // namespace holdfast
