// LockState as JSON, for `holdfast status --json` and `holdfast list --json`.
// The field names are a stable interface (docs/cli.md, "JSON output").
#pragma once

#include <nlohmann/json.hpp>

#include "holdfast/inspect.hpp"

namespace holdfast::cli {

/// "free", "lock", "read_write_lock", "counter", "permit_expirable_semaphore",
/// "simple_lock" or "not_a_primitive".
const char* kind_name(LockState::Kind kind);

nlohmann::json to_json(const LockState& state);

/// One line of JSON; bytes that are not UTF-8 become U+FFFD, so the output
/// always parses (names and owners are bytes in Redis).
std::string dump(const nlohmann::json& value);

}  // namespace holdfast::cli
