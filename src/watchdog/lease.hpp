// How long a holder may trust a lease it has not been able to renew.
#pragma once

#include <algorithm>
#include <chrono>

namespace holdfast::detail {

/// The clock drift allowed for a lease, as the Redlock algorithm allows it:
/// 1 % of the lease plus 2 ms (clock rates of two machines under NTP differ by
/// far less than 1 %).
inline std::chrono::milliseconds drift_of(std::chrono::milliseconds lease) {
    return lease / 100 + std::chrono::milliseconds(2);
}

/// How much earlier than the server a holder counts a lease as ended: the
/// drift, plus time for the holder's own timer and for it to react (a tenth
/// of the lease, at most a second), since a loaded machine runs timers late.
inline std::chrono::milliseconds lease_margin(std::chrono::milliseconds lease) {
    return drift_of(lease) + std::min<std::chrono::milliseconds>(lease / 10, std::chrono::seconds(1));
}

}  // namespace holdfast::detail
