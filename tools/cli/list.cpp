// holdfast list: the primitives in a database, found by SCAN and read by inspect().
#include <algorithm>
#include <iostream>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "cli/state_json.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {
namespace {

using Kind = LockState::Kind;

bool listed(const LockState& state) { return state.kind != Kind::free && state.kind != Kind::not_a_primitive; }

std::string holders_of(const LockState& state) {
    if (state.kind == Kind::multi_value_lock) {
        if (state.values.empty()) return "-";
        const auto& first = state.values.front();
        std::string text = detail::printable(first.owner) + " x" + std::to_string(first.hold_count) + " of a value";
        if (state.values.size() > 1) text += " +" + std::to_string(state.values.size() - 1) + " more";
        return text;
    }
    if (state.holders.empty()) return "-";
    const auto& first = state.holders.front();
    std::string text = detail::printable(first.owner) + (first.writer ? " (w)" : "") + " x" +
                       std::to_string(first.hold_count);
    if (state.holders.size() > 1) text += " +" + std::to_string(state.holders.size() - 1) + " more";
    return text;
}

std::string count_of(const LockState& state) {
    if (state.kind == Kind::counter) return std::to_string(state.count);
    if (state.kind == Kind::multi_value_lock) return std::to_string(state.values.size()) + " values";
    if (state.kind == Kind::permit_expirable_semaphore)
        return std::to_string(state.count) + " free, " + std::to_string(state.permits.size()) + " taken";
    return "-";
}

void print_table(const std::vector<LockState>& states) {
    std::vector<std::vector<std::string>> rows{{"NAME", "KIND", "TTL", "HOLDERS", "QUEUE", "COUNT"}};
    for (const auto& s : states)
        rows.push_back({detail::printable(s.name), kind_name(s.kind), s.ttl ? format_duration(*s.ttl) : "-",
                        holders_of(s), s.queue.empty() ? "-" : std::to_string(s.queue.size()), count_of(s)});
    std::vector<std::size_t> width(rows.front().size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i)
            line += row[i] + (i + 1 < row.size() ? std::string(width[i] - row[i].size() + 2, ' ') : "");
        std::cout << line << '\n';
    }
}

}  // namespace

int list(const GlobalOptions& global, const ListOptions& options) {
    Client client(make_config(global));
    std::vector<LockState> states;
    for (const std::string& name : find_names(client, options.pattern)) {
        try {
            LockState state = inspect(client, name);
            if (listed(state)) states.push_back(std::move(state));
        } catch (const ServerError& e) {  // a side key of another type, say: name it, go on
            warn("skipped " + detail::quoted(name) + ": " + describe(e));
        }
    }
    if (options.json) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto& s : states) all.push_back(to_json(s));
        std::cout << dump(all) << '\n';
    } else if (states.empty()) {
        std::cout << "no locks, semaphores or latches match " << detail::printable(options.pattern) << '\n';
    } else {
        print_table(states);
    }
    return exit_code::ok;
}

}  // namespace holdfast::cli
