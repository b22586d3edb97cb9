// Checks of the arguments every lock takes, with the same messages everywhere.
// `subject` names what was being locked ("'orders'", "multi-lock 'a', 'b'");
// it is only called to build a message, so the check costs nothing otherwise.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "holdfast/config.hpp"

namespace holdfast::detail {

/// `unleased` says what to do instead: a call without a lease.
template <class Subject>
void check_lease(const Subject& subject, std::optional<std::chrono::milliseconds> lease,
                 std::string_view unleased = "take the lock without a lease to have the watchdog renew it") {
    if (!lease) return;
    const std::string got = std::to_string(lease->count()) + " ms";
    if (*lease <= std::chrono::milliseconds::zero())
        throw std::invalid_argument("holdfast: lease for " + subject() + " must be > 0 ms, got " + got + "; " +
                                    std::string(unleased));
    // Redis refuses a longer expiry only after the acquire script wrote the hold.
    if (*lease > max_duration)
        throw std::invalid_argument("holdfast: lease for " + subject() + " is too long: " + got + ", at most " +
                                    std::to_string(max_duration.count()) + " ms (100 years); " +
                                    std::string(unleased));
}

template <class Subject>
void check_wait(const Subject& subject, std::chrono::milliseconds wait) {
    if (wait < std::chrono::milliseconds::zero())
        throw std::invalid_argument("holdfast: wait for " + subject() + " must be >= 0 ms (0: try once), got " +
                                    std::to_string(wait.count()) + " ms");
}

// An empty owner id would be one hash field shared by every caller that forgot to make one.
template <class Subject>
void check_owner(const Subject& subject, const std::string& owner) {
    if (owner.empty())
        throw std::invalid_argument("holdfast: owner for " + subject() +
                                    " must not be empty; make one with Client::new_owner()");
}

/// When a wait of `wait` ends: nullopt (no deadline) for none, or for one so
/// long (max_duration or more) that now + wait would overflow the clock.
inline std::optional<std::chrono::steady_clock::time_point> deadline_after(
    std::optional<std::chrono::milliseconds> wait) {
    if (!wait || *wait >= max_duration) return std::nullopt;
    return std::chrono::steady_clock::now() + *wait;
}

}  // namespace holdfast::detail
