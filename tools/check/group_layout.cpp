#include "group_layout.hpp"

#include <charconv>
#include <map>

namespace holdfast::check {

std::vector<std::string> group_holds(const std::vector<std::string>& hgetall, std::int64_t now_ms,
                                     const std::map<std::string, std::string>& names) {
    std::map<std::string, std::string> hash;
    for (std::size_t i = 0; i + 1 < hgetall.size(); i += 2) hash[hgetall[i]] = hgetall[i + 1];
    std::vector<std::string> holds;
    for (std::size_t i = 0; i + 1 < hgetall.size(); i += 2) {
        const std::string& field = hgetall[i];
        const std::string& owner = hgetall[i + 1];
        if (field.find(':') != std::string::npos) continue;  // an expire time or a count, not a value
        const auto expires = hash.find(field + ":" + owner + ":expire_time");
        if (expires == hash.end()) continue;
        std::int64_t until = 0;
        const std::string& text = expires->second;
        if (std::from_chars(text.data(), text.data() + text.size(), until).ec != std::errc() || until <= now_ms)
            continue;
        const auto name = names.find(field);
        holds.push_back(owner + "=" + (name == names.end() ? field : name->second));
    }
    return holds;
}

std::string holder_of(const std::string& hold) { return hold.substr(0, hold.find('=')); }

}  // namespace holdfast::check
