// inspect(): TYPE tells which layout to read; the layout's own keys and the
// side keys that belong with it (queue, token, permits) fill in the rest.
#include "holdfast/inspect.hpp"

#include <charconv>
#include <set>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "inspect/glob.hpp"
#include "lock/layout.hpp"
#include "multi_value_lock/layout.hpp"
#include "primitive/call.hpp"
#include "primitive/count.hpp"
#include "primitive/names.hpp"
#include "semaphore/permits.hpp"

namespace holdfast {

namespace {

using detail::Reply;
using Kind = LockState::Kind;

/// Lease keys checked per reader, at most: one EXISTS of that many keys.
constexpr std::int64_t max_read_holds_checked = 1024;

/// A ZSET score (epoch ms) as a time; nullopt for Redisson's "never" or beyond.
std::optional<LockState::TimePoint> time_of_score(std::string_view score) {
    double value = 0;
    const auto [end, ec] = std::from_chars(score.data(), score.data() + score.size(), value);
    if (ec != std::errc() || !std::isfinite(value) || value >= static_cast<double>(detail::permit_never_expires))
        return std::nullopt;
    return LockState::TimePoint(std::chrono::milliseconds(std::llround(value)));
}

std::string a_type(const std::string& type) {
    if (type == "zset") return "a sorted set";
    return "a " + type;
}

std::string not_a_hold_count(const std::string& field, const std::string& value) {
    return "a hash with field '" + field + "' = '" + value + "' (not a hold count)";
}

/// HGETALL of a hash: a group of values if laid out as one, a read-write
/// lock if it has a mode (its writer listed first), else a reentrant lock.
void decode_hash(const std::vector<Reply>& hgetall, LockState& state) {
    if (auto values = detail::group_values(hgetall)) {
        state.kind = Kind::multi_value_lock;
        for (auto& held : *values)
            state.values.push_back({std::move(held.field), std::move(held.owner), held.hold_count,
                                    held.expires_ms ? std::optional(LockState::TimePoint(std::chrono::milliseconds(
                                                                        *held.expires_ms)))
                                                    : std::nullopt});
        return;
    }
    const bool read_write = detail::has_mode(hgetall);
    state.kind = read_write ? Kind::read_write_lock : Kind::lock;
    for (detail::LockField& field : detail::lock_fields(hgetall, read_write)) {
        if (field.role == detail::LockField::Role::mode) {
            if (field.value != "read" && field.value != "write") {
                state.kind = Kind::not_a_primitive;
                state.description = "a hash with field 'mode' = '" + field.value + "' (not read or write)";
                return;
            }
            state.mode = field.value;
            continue;
        }
        const auto count = detail::parse_count(field.value);
        if (!count) {
            state.kind = Kind::not_a_primitive;
            state.description = not_a_hold_count(field.name, field.value);
            return;
        }
        const bool writer = field.role == detail::LockField::Role::writer;
        LockState::Holder holder{std::move(field.owner), *count, writer, std::nullopt};
        if (writer) state.holders.insert(state.holders.begin(), std::move(holder));
        else state.holders.push_back(std::move(holder));
    }
}

/// ZRANGE ... WITHSCORES as member -> time pairs, lowest score first.
std::vector<std::pair<std::string, std::optional<LockState::TimePoint>>> scored(const Reply& reply) {
    std::vector<std::pair<std::string, std::optional<LockState::TimePoint>>> result;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2)
        result.emplace_back(reply.elements[i].str, time_of_score(reply.elements[i + 1].str));
    return result;
}

/// The commands, all for keys in `name`'s slot.
class Inspector {
public:
    Inspector(detail::Transport& transport, const std::string& name) : transport_(transport), name_(name) {}

    LockState run() {
        LockState state;
        state.name = name_;
        state.type = query(name_, {"TYPE", name_}).str;
        if (state.type == "none") return with_side_keys(std::move(state));
        const Reply ttl = query(name_, {"PTTL", name_});
        if (ttl.integer == -2) return free();
        if (ttl.integer >= 0) state.ttl = LockState::Duration(ttl.integer);
        if (state.type == "hash") return read_hash(std::move(state));
        if (state.type == "string") return read_string(std::move(state));
        state.kind = Kind::not_a_primitive;
        state.description = a_type(state.type);
        return state;
    }

private:
    Reply query(const std::string& key, std::vector<std::string_view> args) {
        return detail::query(transport_, key, "inspect", std::move(args));
    }

    // Deleted while read: what is left is a free name and its side keys.
    LockState free() {
        LockState state;
        state.name = name_;
        return with_side_keys(std::move(state));
    }

    LockState read_hash(LockState state) {
        const Reply fields = query(name_, {"HGETALL", name_});
        if (fields.elements.empty()) return free();
        decode_hash(fields.elements, state);
        if (state.kind == Kind::read_write_lock)
            for (auto& holder : state.holders)
                if (!holder.writer) holder.live_read_holds = live_read_holds(holder);
        return with_side_keys(std::move(state));
    }

    LockState read_string(LockState state) {
        Reply value = query(name_, {"GET", name_});
        if (value.is_nil()) return free();
        if (const auto count = detail::parse_count(value.str)) {
            state.kind = Kind::counter;
            state.count = *count;
        } else {
            state.kind = Kind::simple_lock;
            state.token = std::move(value.str);
        }
        return with_side_keys(std::move(state));
    }

    // The keys beside `name` that belong with its kind.
    LockState with_side_keys(LockState state) {
        if (state.kind == Kind::free || state.kind == Kind::lock) {
            read_queue(state);
            read_fencing_token(state);
        }
        if (state.kind == Kind::free || state.kind == Kind::counter) read_permits(state);
        return state;
    }

    std::optional<std::int64_t> live_read_holds(const LockState::Holder& reader) {
        if (reader.hold_count <= 0 || reader.hold_count > max_read_holds_checked) return std::nullopt;
        std::vector<std::string> keys;
        for (std::int64_t n = 1; n <= reader.hold_count; ++n)
            keys.push_back(detail::rwlock_timeout_key(name_, reader.owner, n));
        std::vector<std::string_view> args{"EXISTS"};
        args.insert(args.end(), keys.begin(), keys.end());
        return query(keys.front(), std::move(args)).integer;
    }

    void read_queue(LockState& state) {
        const std::string queue = detail::fair_queue_key(name_);
        const Reply waiters = query(queue, {"LRANGE", queue, "0", "-1"});
        if (waiters.elements.empty()) return;
        const std::string timeouts = detail::fair_timeout_key(name_);
        const auto deadlines = scored(query(timeouts, {"ZRANGE", timeouts, "0", "-1", "WITHSCORES"}));
        for (const auto& waiter : waiters.elements) {
            LockState::Waiter entry{waiter.str, std::nullopt};
            for (const auto& [owner, deadline] : deadlines)
                if (owner == waiter.str) entry.deadline = deadline;
            state.queue.push_back(std::move(entry));
        }
    }

    void read_fencing_token(LockState& state) {
        const std::string key = detail::fence_token_key(name_);
        const Reply token = query(key, {"GET", key});
        if (!token.is_nil()) state.fencing_token = detail::parse_count(token.str);
    }

    void read_permits(LockState& state) {
        const std::string key = detail::expirable_permits_key(name_);
        const auto permits = scored(query(key, {"ZRANGE", key, "0", "-1", "WITHSCORES"}));
        if (permits.empty()) return;
        state.kind = Kind::permit_expirable_semaphore;
        for (const auto& [id, expires] : permits) state.permits.push_back({detail::permit_hex(id), expires});
    }

    detail::Transport& transport_;
    const std::string& name_;
};

}  // namespace

namespace {

// `{X}` -> X; a name that had braces of its own was kept as it is.
std::string unwrapped(std::string_view wrapped) {
    if (wrapped.size() >= 2 && wrapped.front() == '{' && wrapped.back() == '}' &&
        wrapped.find_first_of("{}", 1) == wrapped.size() - 1)
        return std::string(wrapped.substr(1, wrapped.size() - 2));
    return std::string(wrapped);
}

// The name a key stands for (names.hpp writes the side keys); nullopt for a
// side key whose name cannot be read back (a reader's lease key of a name
// with braces of its own: its lock hash is there while it lives anyway).
std::optional<std::string> name_of_key(std::string_view key) {
    for (std::string_view prefix : {detail::lock_waiters_prefix, detail::lock_handoff_prefix})
        if (key.starts_with(prefix) && key.substr(prefix.size()).starts_with("::"))
            return std::string(key.substr(prefix.size() + 2));  // a name with braces of its own
    for (std::string_view prefix : {detail::fair_queue_prefix, detail::fair_timeout_prefix, detail::fence_token_prefix,
                                    detail::fair_alive_prefix, detail::lock_waiters_prefix, detail::lock_handoff_prefix})
        if (key.starts_with(prefix) && key.size() > prefix.size() + 1 && key[prefix.size()] == ':')
            return unwrapped(key.substr(prefix.size() + 1));
    if (key.find(detail::rwlock_timeout_infix) != std::string_view::npos) {
        const auto close = key.find("}:");
        if (!key.starts_with('{') || close == std::string_view::npos) return std::nullopt;
        return std::string(key.substr(1, close - 1));
    }
    const std::string permits_suffix = ":" + std::string(detail::expirable_permits_suffix);
    if (key.ends_with(permits_suffix) && key.starts_with('{'))
        return unwrapped(key.substr(0, key.size() - permits_suffix.size()));
    return std::string(key);
}

}  // namespace

std::vector<std::string> find_names(Client& client, const std::string& pattern) {
    if (pattern.empty()) throw std::invalid_argument("holdfast: find_names: an empty pattern matches nothing; use *");
    detail::Transport& transport = detail::core_of(client).transport;
    // Every key that stands for a matching name holds Config::key_prefix and
    // the name (a side key inside its braces): SCAN is asked for that
    // superset, and each key's name is checked against the pattern here.
    const std::string& prefix = client.config().key_prefix;
    const std::string match = "*" + detail::glob_escaped(prefix) + pattern + "*";
    std::set<std::string> names;
    for (const ServerAddress& master : transport.masters()) {  // each master of a cluster has its own keys
        std::string cursor = "0";
        do {
            const std::vector<std::string_view> scan{"SCAN", cursor, "MATCH", match, "COUNT", "1000"};
            const Reply page = detail::block<Reply>(transport, [&](auto done) {
                transport.execute_on(master, scan, [done](detail::Failure error, Reply reply) mutable {
                    if (!error && reply.is_error())
                        error = detail::Failure::server(std::string(reply.code()),
                                                        "holdfast: SCAN refused: " + reply.str);
                    done(error, std::move(reply));
                });
            });
            if (page.elements.size() != 2) throw ServerError("holdfast: SCAN replied " + page.describe());
            cursor = page.elements[0].str;
            for (const Reply& key : page.elements[1].elements) {
                auto name = name_of_key(key.str);
                if (!name || !name->starts_with(prefix)) continue;
                name->erase(0, prefix.size());
                if (detail::glob_matches(pattern, *name)) names.insert(std::move(*name));
            }
        } while (cursor != "0");
    }
    return {names.begin(), names.end()};
}

LockState inspect(Client& client, const std::string& name) {
    if (name.empty()) throw std::invalid_argument("holdfast: inspect: a name must not be empty");
    const std::string key = detail::mapped_name(client.config().key_prefix, name);
    auto& transport = detail::core_of(client).transport;
    LockState state = Inspector(transport, key).run();
    state.name = name;
    std::tie(state.server, state.server_version) = transport.server_of(key);
    return state;
}

}  // namespace holdfast
