// What MultiLock and RedLock say about their members.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "errors/failure.hpp"
#include "holdfast/lock.hpp"

namespace holdfast::detail {

/// One member's answer to an acquire attempt.
struct Took {
    Failure error;
    bool acquired = false;
};

inline std::vector<Lock*> members_of(const std::vector<std::reference_wrapper<Lock>>& locks) {
    std::vector<Lock*> members;
    for (Lock& lock : locks) members.push_back(&lock);
    return members;
}

/// 0, 1, ... n - 1: every member.
inline std::vector<std::size_t> every_member(std::size_t n) {
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    return all;
}

/// Names one owner's hold of a group (its owner id on each member).
inline std::string owners_key(const std::vector<std::string>& owners) {
    std::string key;
    for (const auto& owner : owners) key += owner + '\n';
    return key;
}

}  // namespace holdfast::detail
