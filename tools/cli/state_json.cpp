#include "cli/state_json.hpp"

#include <iostream>

#include "cli/cli.hpp"

namespace holdfast::cli {
namespace {

using Kind = LockState::Kind;
using nlohmann::json;

std::int64_t epoch_ms(LockState::TimePoint t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

template <class T, class F>
json or_null(const std::optional<T>& value, F&& convert) {
    return value ? json(convert(*value)) : json(nullptr);
}

}  // namespace

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::free: return "free";
        case Kind::lock: return "lock";
        case Kind::read_write_lock: return "read_write_lock";
        case Kind::multi_value_lock: return "multi_value_lock";
        case Kind::counter: return "counter";
        case Kind::permit_expirable_semaphore: return "permit_expirable_semaphore";
        case Kind::simple_lock: return "simple_lock";
        case Kind::not_a_primitive: break;
    }
    return "not_a_primitive";
}

json to_json(const LockState& state) {
    auto same = [](auto v) { return v; };
    json holders = json::array();
    for (const auto& h : state.holders)
        holders.push_back({{"owner", h.owner},
                           {"hold_count", h.hold_count},
                           {"writer", h.writer},
                           {"live_read_holds", or_null(h.live_read_holds, same)}});
    json queue = json::array();
    for (const auto& w : state.queue) queue.push_back({{"owner", w.owner}, {"deadline_ms", or_null(w.deadline, epoch_ms)}});
    json permits = json::array();
    for (const auto& p : state.permits) permits.push_back({{"id", p.id}, {"expires_ms", or_null(p.expires, epoch_ms)}});
    json values = json::array();
    for (const auto& v : state.values)
        values.push_back({{"field", v.field},
                          {"owner", v.owner},
                          {"hold_count", v.hold_count},
                          {"expires_ms", or_null(v.expires, epoch_ms)}});
    const bool counted = state.kind == Kind::counter || state.kind == Kind::permit_expirable_semaphore;
    return {
        {"name", state.name},
        {"kind", kind_name(state.kind)},
        {"type", state.type},
        {"ttl_ms", or_null(state.ttl, [](auto d) { return d.count(); })},
        {"holders", std::move(holders)},
        {"mode", state.mode.empty() ? json(nullptr) : json(state.mode)},
        {"values", std::move(values)},
        {"queue", std::move(queue)},
        {"fencing_token", or_null(state.fencing_token, same)},
        {"count", counted ? json(state.count) : json(nullptr)},
        {"permits", std::move(permits)},
        {"token", state.kind == Kind::simple_lock ? json(state.token) : json(nullptr)},
        {"description", state.description.empty() ? json(nullptr) : json(state.description)},
        {"server", state.server},
        {"server_version", state.server_version.empty() ? json(nullptr) : json(state.server_version)},
    };
}

void print_json_error(int code, const std::string& message) {
    std::cout << dump({{"error", {{"exit_code", code}, {"message", message}}}}) << std::endl;
}

int fail(int code, const std::string& message) {
    warn(message);
    if (json_errors) print_json_error(code, message);
    return code;
}

std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace holdfast::cli
