// The holds a client has told its callers they took, per key and hold field.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "watchdog/watchdog.hpp"

namespace holdfast::detail {

/// An acquire whose reply is lost (a timeout, a dropped connection) may have
/// run: the server then counts one hold more than the caller knows of. The
/// ledger is what the caller knows, so a release can tell the server's extra
/// holds from real ones and give them back too (primitive/release_verdict.hpp),
/// instead of leaving the lock held (and renewed) for ever.
///
/// Its counts live in the watchdog's records (LeaseBook), one per hold for
/// both, so that a held lock costs one record.
///
/// Thread safety: any thread.
class HoldLedger {
public:
    using Clock = std::chrono::steady_clock;

    explicit HoldLedger(Watchdog& watchdog) : watchdog_(watchdog) {}

    void taken(const std::string& key, const std::string& field) { watchdog_.taken(key, field); }

    /// Holds of `field` callers were told of and have not given back; 0 if none.
    std::int64_t known(const std::string& key, const std::string& field) const { return watchdog_.known(key, field); }

    /// One hold given back (`all`: every hold, the server says none is left).
    /// Returns how long since the first of them was taken, if any was known.
    std::optional<Clock::duration> given_back(const std::string& key, const std::string& field, bool all) {
        return watchdog_.given_back(key, field, all);
    }

    /// Keys and fields with holds (tests check nothing is left behind).
    std::size_t size() const { return watchdog_.counted(); }

private:
    Watchdog& watchdog_;
};

}  // namespace holdfast::detail
