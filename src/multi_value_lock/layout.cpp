#include "multi_value_lock/layout.hpp"

#include <map>
#include <utility>

#include "primitive/count.hpp"

namespace holdfast::detail {

namespace {

constexpr std::size_t field_size = 22;
constexpr std::string_view expire_suffix = ":expire_time";
constexpr std::string_view count_suffix = ":lock_count";

bool base64(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

}  // namespace

bool is_value_field(std::string_view name) {
    if (name.size() != field_size) return false;
    for (char c : name)
        if (!base64(c)) return false;
    return true;
}

std::optional<std::vector<GroupValue>> group_values(const std::vector<Reply>& hgetall) {
    std::vector<GroupValue> values;
    // `<field>:<owner>` -> {expire time, count}, as the side fields give them.
    std::map<std::string, std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>, std::less<>> sides;
    for (std::size_t i = 0; i + 1 < hgetall.size(); i += 2) {
        const std::string& name = hgetall[i].str;
        const std::string& value = hgetall[i + 1].str;
        if (is_value_field(name)) {
            values.push_back({name, value, 0, std::nullopt});
            continue;
        }
        const bool expires = name.ends_with(expire_suffix), counts = name.ends_with(count_suffix);
        const std::size_t suffix = expires ? expire_suffix.size() : count_suffix.size();
        if ((!expires && !counts) || name.size() <= field_size + 1 + suffix || name[field_size] != ':' ||
            !is_value_field(std::string_view(name).substr(0, field_size)))
            return std::nullopt;
        const auto number = parse_count(value);
        if (!number) return std::nullopt;
        auto& side = sides[name.substr(0, name.size() - suffix)];
        (expires ? side.first : side.second) = *number;
    }
    if (sides.empty()) return std::nullopt;
    for (GroupValue& held : values) {
        const auto side = sides.find(held.field + ':' + held.owner);
        if (side == sides.end()) continue;
        held.expires_ms = side->second.first;
        held.hold_count = side->second.second.value_or(0);
    }
    return values;
}

}  // namespace holdfast::detail
