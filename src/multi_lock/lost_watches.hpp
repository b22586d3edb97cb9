// A MultiLock's lease-lost tokens: one stop_source per owner, requested when
// any member's own lease-lost token is.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

namespace holdfast::detail {

/// Thread safety: any thread.
class LostWatches {
public:
    /// The group token for `key` (an owner) watching `members` (each member
    /// lock's token for that owner). No stop state if any member has none (it
    /// is not watchdog-held). The same token while the members' tokens are
    /// the same, and after it was requested until forget().
    std::stop_token token(const std::string& key, std::vector<std::stop_token> members);
    /// After an unlock: drops the watch for `key` unless `members` (the
    /// members' tokens now) are still the ones it watches (a reentrant hold goes on).
    void forget(const std::string& key, const std::vector<std::stop_token>& members);

private:
    struct Watch {
        std::vector<std::stop_token> members;
        std::stop_source source;
        std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>> callbacks;
    };

    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<Watch>> watches_;
};

}  // namespace holdfast::detail
