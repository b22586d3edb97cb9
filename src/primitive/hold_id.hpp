// Which hold an operation works for.
#pragma once

#include <string>
#include <string_view>

namespace holdfast::detail {

/// Which hold: names it to the ledger, the watchdog, metrics, events and
/// errors. The hold pipeline keeps one per operation and hands it to the
/// primitive's steps, so a step need not copy its names.
struct HoldId {
    std::string_view kind;  ///< "fair lock": a literal
    std::string key;        ///< the primitive's key; replica sync and renewal route by it
    std::string field;      ///< what counts the owner's holds (a hash field), if not the owner id itself
    std::string owner;      ///< the owner id ("" for permits, which have none)

    /// The hash field that counts the owner's holds: the ledger's and the
    /// watchdog's name for the hold (most often the owner id: not copied).
    const std::string& counted_as() const { return field.empty() ? owner : field; }

    /// "fair lock 'orders'": how errors name it.
    std::string subject() const;
};

}  // namespace holdfast::detail
