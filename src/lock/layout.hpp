// Redisson's lock hash read back (docs/redisson-layout.md): a field per
// holder counting its holds, `<owner>`; a read-write lock's also has `mode`
// and names its writer `<owner>:write`. The scripts write it; the kinds'
// queries and inspect() read it here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "transport/reply.hpp"

namespace holdfast::detail {

/// A read-write lock's mode field: "read" or "write".
inline constexpr std::string_view mode_field = "mode";
/// What a writer's field adds to its owner.
inline constexpr std::string_view writer_suffix = ":write";

/// The field that counts `owner`'s write holds.
inline std::string writer_field(std::string_view owner) { return std::string(owner) + std::string(writer_suffix); }

/// One field of a lock hash, and what it stands for.
struct LockField {
    enum class Role {
        holder,  ///< counts an owner's holds (a read-write lock's reader)
        writer,  ///< counts a read-write lock's writer's holds
        mode,    ///< a read-write lock's mode
    };
    Role role = Role::holder;
    std::string name;   ///< as stored
    std::string value;  ///< as stored: a hold count in a lock (primitive/count.hpp reads it)
    std::string owner;  ///< holder, writer: whose holds it counts
};

/// HGETALL's reply on a lock hash (field, value, ...), in its order.
/// `read_write`: read as a read-write lock's (`mode`, `<owner>:write`); else
/// every field is a holder's, as in the RLock's.
std::vector<LockField> lock_fields(const std::vector<Reply>& hgetall, bool read_write);

/// Whether HGETALL's reply is a read-write lock's: it has a mode.
bool has_mode(const std::vector<Reply>& hgetall);

}  // namespace holdfast::detail
