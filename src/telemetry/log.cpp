#include "holdfast/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace holdfast {
namespace {

// "2025-06-01T12:00:00.123Z": UTC, milliseconds, sortable.
std::string utc_timestamp(std::chrono::system_clock::time_point when) {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(when.time_since_epoch());
    const std::time_t seconds = static_cast<std::time_t>(floor<std::chrono::seconds>(ms).count());
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    const auto millis = static_cast<int>((ms.count() % 1000 + 1000) % 1000);
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                  utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
    return text;
}

void to_stderr(LogLevel, std::string_view line) {
    std::string out(line);
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stderr);  // stderr is unbuffered: one write per line
}

}  // namespace

// No default: a kind added without a level stops the build (-Werror=switch),
// and docs/operations.md lists each kind's level (tests/telemetry/log_test.cpp).
LogLevel level_of(Event::Kind kind) {
    switch (kind) {
        case Event::Kind::lease_lost:        // a holder lost its lock
        case Event::Kind::completion_threw:  // the application's completion threw: a bug, swallowed
            return LogLevel::error;
        case Event::Kind::connection_lost:
        case Event::Kind::renewal_failed:
        case Event::Kind::release_failed:  // not released as asked: others wait up to its lease
            return LogLevel::warning;
        case Event::Kind::connected:
        case Event::Kind::connection_restored:
        case Event::Kind::slow_acquire:
        case Event::Kind::script_reloaded: return LogLevel::info;
    }
    return LogLevel::error;  // only a value cast from outside the enum
}

std::string_view to_string(LogLevel level) {
    switch (level) {
        case LogLevel::info: return "info";
        case LogLevel::warning: return "warning";
        case LogLevel::error: return "error";
    }
    return "error";
}

EventHandler event_logger(LogLevel threshold, LogSink sink) {
    if (!sink) sink = to_stderr;
    return [threshold, sink = std::move(sink)](const Event& event) {
        const LogLevel level = level_of(event.kind);
        if (level < threshold) return;
        sink(level, utc_timestamp(std::chrono::system_clock::now()) + ' ' + std::string(to_string(level)) + ' ' +
                        event.to_string());
    };
}

}  // namespace holdfast
