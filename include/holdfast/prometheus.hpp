// A Client's metrics for Prometheus, through prometheus-cpp: the optional
// holdfast::prometheus component (docs/operations.md).
#pragma once

#include <prometheus/collectable.h>

#include <map>
#include <memory>
#include <string>

#include "holdfast/client.hpp"
#include "holdfast/export.hpp"

namespace holdfast {

/// A prometheus-cpp Collectable that reads client.metrics() at each scrape
/// and names them as docs/operations.md lists (holdfast_acquires_total,
/// holdfast_acquire_wait_seconds, ...), each with `labels` added (a service
/// or instance name, say). Publish them with one line:
///
///     auto metrics = holdfast::prometheus_collectable(client);
///     exposer.RegisterCollectable(metrics);  // prometheus::Exposer
///
/// Throws std::invalid_argument for a label name Prometheus would reject
/// (not [a-zA-Z_][a-zA-Z0-9_]*, or starting with "__") or one of holdfast's
/// own (primitive, outcome): either would make every scrape invalid.
///
/// The exposer keeps a weak reference: keep `metrics` alive while serving,
/// and no longer than `client` (declared after it, it is destroyed first).
HOLDFAST_EXPORT std::shared_ptr<prometheus::Collectable> prometheus_collectable(
    const Client& client, std::map<std::string, std::string> labels = {});

}  // namespace holdfast
