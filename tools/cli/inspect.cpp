// holdfast status: look at what names hold.
#include <chrono>
#include <iostream>
#include <string_view>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "cli/inspect.hpp"
#include "cli/state_json.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {
namespace {

using Kind = LockState::Kind;
using detail::printable;

std::string describe_ttl(std::optional<Duration> ttl) {
    return ttl ? format_duration(*ttl) : "none (the key never expires)";
}

// How far apart two times are, for "in 4.998s" and "1.2s ago".
std::string between(LockState::TimePoint earlier, LockState::TimePoint later) {
    return format_duration(std::chrono::duration_cast<Duration>(later - earlier));
}

}  // namespace

bool beyond_int64(const LockState& state) {
    std::string_view digits = state.token;
    if (digits.starts_with('-')) digits.remove_prefix(1);
    return state.kind == Kind::simple_lock && !digits.empty() &&
           digits.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string beyond_int64_description(const LockState& state) {
    return "the integer " + printable(state.token) +
           ", beyond the 64-bit counts Redis and holdfast keep (so no semaphore or latch count)";
}

namespace {

std::string plural(std::int64_t n, const std::string& one, const std::string& many) {
    return std::to_string(n) + ' ' + (n == 1 ? one : many);
}

std::string headline(const LockState& state) {
    switch (state.kind) {
        case Kind::free: return "free";
        case Kind::lock: return "locked";
        case Kind::read_write_lock:
            return std::string(state.mode == "write" ? "locked for writing" : "locked for reading") +
                   " (read-write lock)";
        case Kind::multi_value_lock:
            return plural(static_cast<std::int64_t>(state.values.size()), "value", "values") +
                   " held (multi-value lock: Redisson's getMultiLock(group, values))";
        case Kind::counter: return "semaphore or count-down latch (Redisson stores both as one integer)";
        case Kind::permit_expirable_semaphore: return "permit-expirable semaphore";
        case Kind::simple_lock: return "locked (simple lock: SET NX PX)";
        case Kind::not_a_primitive: break;
    }
    return "not a holdfast/Redisson primitive";
}

void print_holder(const LockState::Holder& holder, std::string_view label) {
    std::cout << "  " << label << ": " << printable(holder.owner) << " (hold count " << holder.hold_count;
    if (holder.live_read_holds && *holder.live_read_holds < holder.hold_count)
        std::cout << ", " << plural(holder.hold_count - *holder.live_read_holds, "lease", "leases") << " expired";
    std::cout << ")\n";
}

void print_queue(const LockState& state, LockState::TimePoint now) {
    if (state.queue.empty()) return;
    std::cout << "  fair-lock queue: " << state.queue.size() << " waiting\n";
    for (std::size_t i = 0; i < state.queue.size(); ++i) {
        const auto& waiter = state.queue[i];
        std::cout << "    " << i + 1 << ". " << printable(waiter.owner) << " (";
        if (!waiter.deadline) std::cout << "no deadline";
        else if (*waiter.deadline >= now) std::cout << "deadline in " << between(now, *waiter.deadline);
        else
            std::cout << "deadline passed " << between(*waiter.deadline, now) << " ago; dropped "
                      << (i == 0 ? "at the next acquire" : "when it reaches the head");
        std::cout << ")\n";
    }
}

// A group's values: each by its field (the hash of the value), its holder and
// when that hold ends unless renewed.
void print_values(const LockState& state, LockState::TimePoint now) {
    for (const auto& held : state.values) {
        std::cout << "  value " << printable(held.field) << ": " << printable(held.owner) << " (hold count "
                  << held.hold_count << ", ";
        if (!held.expires) std::cout << "no expire time: free";
        else if (*held.expires >= now) std::cout << "expires in " << between(now, *held.expires);
        else std::cout << "expired " << between(*held.expires, now) << " ago: free";
        std::cout << ")\n";
    }
}

void print_permits(const LockState& state, LockState::TimePoint now) {
    std::cout << "  permits available: " << state.count << '\n';
    std::cout << "  permits taken: " << state.permits.size() << '\n';
    for (const auto& permit : state.permits) {
        std::cout << "    " << permit.id << " (";
        if (!permit.expires) std::cout << "never expires";
        else if (*permit.expires >= now) std::cout << "expires in " << between(now, *permit.expires);
        else std::cout << "expired " << between(*permit.expires, now) << " ago; returned at the next acquire";
        std::cout << ")\n";
    }
}

void print_state(const LockState& state, LockState::TimePoint now) {
    std::cout << printable(state.name) << ": " << headline(state) << '\n';
    if (state.kind != Kind::free) std::cout << "  ttl: " << describe_ttl(state.ttl) << '\n';
    for (const auto& holder : state.holders)
        print_holder(holder, state.kind == Kind::lock ? "holder" : holder.writer ? "writer" : "reader");
    print_values(state, now);
    print_queue(state, now);
    if (state.fencing_token) std::cout << "  fencing token: " << *state.fencing_token << " (the last handed out)\n";
    if (state.kind == Kind::counter) {
        std::cout << "  semaphore: " << plural(state.count, "permit", "permits") << " available\n";
        std::cout << "  count-down latch: count " << state.count << '\n';
    }
    if (state.kind == Kind::permit_expirable_semaphore) print_permits(state, now);
    if (state.kind == Kind::simple_lock) std::cout << "  token: " << printable(state.token) << '\n';
    // What it was read on: an operator sees which server (and version) answers for the name.
    std::cout << "  server: " << state.server;
    if (!state.server_version.empty()) std::cout << " (" << state.server_version << ')';
    std::cout << '\n';
}

}  // namespace

int status(const GlobalOptions& global, const StatusOptions& options) {
    const Config config = make_config(global);
    Client client(config);
    int code = exit_code::ok;
    for (const std::string& name : options.names) {
        const LockState state = inspect(client, name);
        if (options.json) {
            std::cout << dump(to_json(state)) << '\n';
            if (state.kind == Kind::not_a_primitive) code = exit_code::failure;
        } else if (state.kind == Kind::not_a_primitive || beyond_int64(state)) {
            const std::string held =
                beyond_int64(state) ? beyond_int64_description(state) : printable(state.description);
            code = fail(exit_code::failure, "cannot show " + detail::quoted(name) + " on " + config.server_name() +
                                                ": the key holds " + held +
                                                ", not a lock or any other holdfast/Redisson primitive; pick another "
                                                "name or delete the key");
        } else {
            print_state(state, std::chrono::system_clock::now());
        }
    }
    return code;
}

}  // namespace holdfast::cli
