// holdfast::event_logger(): a ready Config::on_event handler that writes each
// event as one timestamped line with a level, to stderr or a sink of yours.
#pragma once

#include <functional>
#include <string_view>

#include "holdfast/events.hpp"
#include "holdfast/export.hpp"

namespace holdfast {

/// How much an event matters to an operator, least first.
enum class LogLevel {
    info,     ///< connected, connection_restored, slow_acquire, script_reloaded: worth a line, nothing to do
    warning,  ///< connection_lost, renewal_failed, release_failed: a hold may be at risk or stay until its lease ends
    error,    ///< lease_lost, completion_threw: a holder lost its lock; the application's completion threw
};

/// The level event_logger() writes `kind` at.
HOLDFAST_EXPORT LogLevel level_of(Event::Kind kind);
/// "info", "warning", "error": as the lines print it.
HOLDFAST_EXPORT std::string_view to_string(LogLevel level);

/// Where the lines go: one call per line, without the newline, on the
/// client's event loop thread (keep it short, never block on holdfast).
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

/// A handler for Config::on_event that turns each event at `threshold` or
/// above into one line,
///   2025-06-01T12:00:00.123Z warning holdfast: connection_lost: on 10.0.0.5:6379: ...
/// (UTC time with milliseconds, the level, Event::to_string()) and hands it to
/// `sink`; an empty sink writes it to stderr with its newline in one write, so
/// lines from several clients do not interleave.
///
///   config.on_event = holdfast::event_logger();                    // info and above, stderr
///   config.on_event = holdfast::event_logger(holdfast::LogLevel::warning,
///       [](holdfast::LogLevel, std::string_view line) { my_log(line); });
///
/// Thread safety: the handler may be shared by clients; each call formats
/// its own line. An exception the sink throws is swallowed as on_event's are.
HOLDFAST_EXPORT EventHandler event_logger(LogLevel threshold = LogLevel::info, LogSink sink = {});

}  // namespace holdfast
