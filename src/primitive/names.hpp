// Redisson's key and channel names (docs/redisson-layout.md, "Names").
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace holdfast::detail {

/// The key of a primitive named `name` under Config::key_prefix, as Redisson's
/// NameMapper maps an object's name once: every other key and channel is
/// derived from this (docs/redisson-layout.md, "Names").
inline std::string mapped_name(std::string_view key_prefix, std::string name) {
    if (key_prefix.empty()) return name;
    return std::string(key_prefix) + name;
}

/// Appends prefixed_name(prefix, name) to `out`.
template <class Text>  // std::string, or a std::pmr::string on the stack
void append_prefixed_name(Text& out, std::string_view prefix, std::string_view name) {
    const bool tagged = name.find('{') != std::string_view::npos;
    out.append(prefix).append(tagged ? ":" : ":{").append(name);
    if (!tagged) out += '}';
}

/// `prefix:{name}`, or `prefix:name` when the name already has a `{`, so every
/// key of a lock hashes to the lock's own cluster slot. Built in one
/// allocation: names are made on every acquire and release.
inline std::string prefixed_name(std::string_view prefix, std::string_view name) {
    std::string result;
    result.reserve(prefix.size() + name.size() + 3);
    append_prefixed_name(result, prefix, name);
    return result;
}

/// `{name}:suffix`, or `name:suffix` when the name already has a `{`.
inline std::string suffixed_name(std::string_view name, std::string_view suffix) {
    const bool tagged = name.find('{') != std::string_view::npos;
    std::string result;
    result.reserve(name.size() + suffix.size() + 3);
    if (!tagged) result += '{';
    result.append(name).append(tagged ? ":" : "}:").append(suffix);
    return result;
}

/// The RLock's release channel: redisson_lock__channel:{name}.
inline constexpr std::string_view lock_channel_prefix = "redisson_lock__channel";
inline std::string lock_channel(std::string_view name) { return prefixed_name(lock_channel_prefix, name); }

// holdfast's own side keys of the RLock, for targeted wake-ups
// (lock/handoff.lua.part): its listed waiters, and the promise of the free
// lock to the one a release named.
inline constexpr std::string_view lock_waiters_prefix = "holdfast_lock_waiters";
inline constexpr std::string_view lock_handoff_prefix = "holdfast_lock_handoff";
/// Appends `prefix:{name}`, or `prefix::name` when the name has a `{`: not
/// Redisson's `prefix:name`, which gives `a` and `{a}` one key (harmless for
/// a channel, not for a promise of the free lock).
template <class Text>
void append_lock_side_key(Text& out, std::string_view prefix, std::string_view name) {
    const bool tagged = name.find('{') != std::string_view::npos;
    out.append(prefix).append(tagged ? "::" : ":{").append(name);
    if (!tagged) out += '}';
}


// What an unlock publishes on a lock's channel (the RLock's, the fair lock's
// waiters', the read-write lock's), as Redisson's LockPubSub reads it.
/// UNLOCK_MESSAGE: one waiter may try.
inline constexpr std::string_view unlock_message = "0";
/// READ_UNLOCK_MESSAGE, which a write unlock publishes: every waiter may try
/// (readers may all enter).
inline constexpr std::string_view unlock_all_message = "1";
/// holdfast's release names the waiter it wakes, just before its `0`: a
/// waiter id, a decimal from 2 up (Redisson's LockPubSub ignores any number
/// but 0 and 1). The waiter id in `payload`, or 0 when it names none.
inline std::uint64_t waiter_named_in(std::string_view payload) {
    std::uint64_t id = 0;
    const char* end = payload.data() + payload.size();
    const auto [stop, error] = std::from_chars(payload.data(), end, id);
    return error == std::errc() && stop == end && id >= 2 ? id : 0;
}

// The fair lock's side keys: its FIFO queue, its waiters' deadlines, and
// holdfast's own heartbeat of live waiters.
inline constexpr std::string_view fair_queue_prefix = "redisson_lock_queue";
inline constexpr std::string_view fair_timeout_prefix = "redisson_lock_timeout";
inline constexpr std::string_view fair_alive_prefix = "holdfast_fair_alive";
inline std::string fair_queue_key(std::string_view name) { return prefixed_name(fair_queue_prefix, name); }
inline std::string fair_timeout_key(std::string_view name) { return prefixed_name(fair_timeout_prefix, name); }
inline std::string fair_alive_key(std::string_view name) { return prefixed_name(fair_alive_prefix, name); }

/// The fenced lock's token counter: redisson_lock_token:{name}.
inline constexpr std::string_view fence_token_prefix = "redisson_lock_token";
inline std::string fence_token_key(std::string_view name) { return prefixed_name(fence_token_prefix, name); }

/// The read-write lock's channel: redisson_rwlock:{name}.
inline std::string rwlock_channel(std::string_view name) { return prefixed_name("redisson_rwlock", name); }
/// Infix of a reader's per-hold lease keys: {name}:<hold field>:rwlock_timeout:<n>.
inline constexpr std::string_view rwlock_timeout_infix = ":rwlock_timeout:";
inline std::string rwlock_timeout_key(std::string_view name, std::string_view hold_field, std::int64_t n) {
    return suffixed_name(name, std::string(hold_field) + std::string(rwlock_timeout_infix) + std::to_string(n));
}

/// Both semaphores' channel: redisson_sc:{name}.
inline std::string semaphore_channel(std::string_view name) { return prefixed_name("redisson_sc", name); }
/// The permit-expirable semaphore's permits and lease ends: {name}:timeout.
inline constexpr std::string_view expirable_permits_suffix = "timeout";
inline std::string expirable_permits_key(std::string_view name) { return suffixed_name(name, expirable_permits_suffix); }

/// The count-down latch's channel: redisson_countdownlatch__channel__{name}
/// (braces always, no colon, as Redisson spells it).
inline std::string latch_channel(std::string_view name) {
    return "redisson_countdownlatch__channel__{" + std::string(name) + "}";
}

}  // namespace holdfast::detail
