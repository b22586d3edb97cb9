// What the permit-expirable semaphore's two sources share: its noun, its
// clock, how a lease becomes a score, and one permit out of a list.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/quoted.hpp"
#include "holdfast/completion.hpp"
#include "primitive/arguments.hpp"
#include "semaphore/permits.hpp"

namespace holdfast::detail {

inline constexpr std::string_view expirable_noun = "permit-expirable semaphore";

/// This host's clock in epoch ms: lease ends are absolute times from the acquirer's clock (Redisson's).
inline std::int64_t epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// The score a permit given `lease` now keeps until: now + lease, or never.
inline std::string lease_end(std::int64_t now, std::optional<std::chrono::milliseconds> lease) {
    if (!lease || lease->count() >= permit_never_expires - now) return std::to_string(permit_never_expires);
    return std::to_string(now + lease->count());
}

/// A lease > 0 and at most max_duration (a longer one would overflow the epoch-ms arithmetic).
inline void check_permit_lease(const std::string& name, std::optional<std::chrono::milliseconds> lease) {
    check_lease([&] { return std::string(expirable_noun) + ' ' + quoted(name); }, lease,
                "acquire without a lease for a permit that never expires");
}

/// The one-permit completion, fed by the list form's: its first id, or nullopt.
inline Completion<std::vector<std::string>> first_permit(Completion<std::optional<std::string>> done) {
    return [done = std::move(done)](std::exception_ptr error, std::vector<std::string> ids) {
        done(std::move(error), ids.empty() ? std::nullopt : std::optional(std::move(ids.front())));
    };
}

}  // namespace holdfast::detail
