#include "group_layout.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace holdfast::check {

std::vector<std::string> group_holders(const std::vector<std::string>& hgetall, std::int64_t now_ms) {
    std::map<std::string, std::string> hash;
    for (std::size_t i = 0; i + 1 < hgetall.size(); i += 2) hash[hgetall[i]] = hgetall[i + 1];
    std::vector<std::string> holders;
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
        if (std::find(holders.begin(), holders.end(), owner) == holders.end()) holders.push_back(owner);
    }
    return holders;
}

}  // namespace holdfast::check
