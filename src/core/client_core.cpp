#include "core/client_core.hpp"

#include <errno.h>  // program_invocation_short_name
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "config/validate.hpp"

namespace holdfast::detail {
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

// 1 .. 2^38 - 1, shifted past a waiter's 24-bit count: every id is >= 2^24,
// far from Redisson's messages 0 and 1, and below 2^62, in a Java long.
std::uint64_t random_waiter_id_base() {
    std::random_device device;
    const std::uint64_t bits = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    return (bits % ((std::uint64_t{1} << 38) - 1) + 1) << 24;
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
      wait_queues(transport.subscriber(), transport.loop()),
      watchdog(transport, *telemetry, config.lock_watchdog_timeout, config.lock_watchdog_batch_size),
      holds(watchdog),
      waiter_id_base_(random_waiter_id_base()) {}

std::uint64_t ClientCore::new_waiter_id() {
    return waiter_id_base_ | (next_waiter_.fetch_add(1, std::memory_order_relaxed) & 0xffffff);
}

// The loop stops first: the watchdog's timer must not fire into a destroyed
// object. Before it, a release to be sent again (unconfirmed, or unanswered)
// is sent at once and until it is confirmed, for up to Config::timeout: a
// process that exits right after an unlock in a failover would otherwise
// leave the hold the failover brings back for the rest of its lease
// (docs/deployments.md).
ClientCore::~ClientCore() {
    if (resends.size() > 0) {
        resends.hurry_all();
        resends.settle(std::chrono::steady_clock::now() + transport.config().timeout);
    }
    transport.shutdown();
}

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

}  // namespace holdfast::detail
