// holdfast::prometheus: Client::metrics() as Prometheus metric families. Built
// apart from the library (it needs prometheus-cpp), on its public API only.
#include "holdfast/prometheus.hpp"

#include <prometheus/metric_family.h>

#include <cctype>
#include <chrono>
#include <stdexcept>
#include <limits>
#include <utility>
#include <vector>

namespace holdfast {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
// In the order they are printed.
using Labels = std::vector<std::pair<std::string, std::string>>;

double seconds(std::chrono::microseconds us) { return std::chrono::duration<double>(us).count(); }

class MetricsCollectable : public prometheus::Collectable {
public:
    MetricsCollectable(const Client& client, std::map<std::string, std::string> labels)
        : client_(client), labels_(std::move(labels)) {}

    std::vector<MetricFamily> Collect() const override {
        const Metrics m = client_.metrics();
        MetricFamily acquires = family("holdfast_acquires_total",
                                       "Acquire calls by primitive and outcome (acquired, gave_up, failed)",
                                       MetricType::Counter);
        MetricFamily wait = family("holdfast_acquire_wait_seconds",
                                   "Time acquires that got the primitive waited for it", MetricType::Histogram);
        MetricFamily hold = family("holdfast_hold_seconds", "Time locks were held, first hold to last unlock",
                                   MetricType::Histogram);
        MetricFamily waiting = family("holdfast_waiters", "Callers waiting for a primitive now", MetricType::Gauge);
        MetricFamily renewals =
            family("holdfast_renewals_total", "Holds the watchdog renewed", MetricType::Counter);
        MetricFamily renewal_failures = family("holdfast_renewal_failures_total",
                                               "Holds whose renewal command failed (retried)", MetricType::Counter);
        MetricFamily leases_lost = family("holdfast_leases_lost_total",
                                          "Holds lost: gone on the server, or no renewal confirmed for a lease",
                                          MetricType::Counter);
        MetricFamily release_failures =
            family("holdfast_release_failures_total",
                   "Unlocks that did not release: not held, lost, refused, or outcome unknown", MetricType::Counter);
        for (const auto& [kind, p] : m.primitives) {
            const Labels by_kind{{"primitive", kind}};
            for (auto [outcome, n] : {std::pair{"acquired", p.acquired}, {"gave_up", p.gave_up}, {"failed", p.failed}})
                acquires.metric.push_back(counter(n, {{"primitive", kind}, {"outcome", outcome}}));
            wait.metric.push_back(histogram(p.acquire_wait, by_kind));
            waiting.metric.push_back(gauge(static_cast<double>(p.waiting), by_kind));
            if (p.hold_time.count == 0 && p.renewals == 0 && p.leases_lost == 0 && p.renewal_failures == 0 &&
                p.release_failures == 0)
                continue;
            hold.metric.push_back(histogram(p.hold_time, by_kind));
            renewals.metric.push_back(counter(p.renewals, by_kind));
            renewal_failures.metric.push_back(counter(p.renewal_failures, by_kind));
            leases_lost.metric.push_back(counter(p.leases_lost, by_kind));
            release_failures.metric.push_back(counter(p.release_failures, by_kind));
        }
        std::vector<MetricFamily> families{acquires, wait,        hold,       waiting, renewals, renewal_failures,
                                           leases_lost, release_failures};
        families.push_back(single("holdfast_connections_lost_total", "Established connections that dropped",
                                  m.connections_lost));
        families.push_back(single("holdfast_reconnects_total", "Connections made again after a loss", m.reconnects));
        families.push_back(single("holdfast_scripts_reloaded_total",
                                  "Scripts sent again by EVAL after NOSCRIPT", m.scripts_reloaded));
        return families;
    }

private:
    static MetricFamily family(std::string name, std::string help, MetricType type) {
        return MetricFamily{std::move(name), std::move(help), type, {}};
    }

    ClientMetric labelled(const Labels& own) const {
        ClientMetric metric;
        for (const auto& [name, value] : labels_) metric.label.push_back({name, value});
        for (const auto& [name, value] : own) metric.label.push_back({name, value});
        return metric;
    }

    ClientMetric counter(std::uint64_t n, const Labels& own) const {
        ClientMetric metric = labelled(own);
        metric.counter.value = static_cast<double>(n);
        return metric;
    }

    ClientMetric gauge(double value, const Labels& own) const {
        ClientMetric metric = labelled(own);
        metric.gauge.value = value;
        return metric;
    }

    ClientMetric histogram(const DurationHistogram& h, const Labels& own) const {
        ClientMetric metric = labelled(own);
        metric.histogram.sample_count = h.count;
        metric.histogram.sample_sum = seconds(h.sum);
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < DurationHistogram::size; ++i) {
            cumulative += h.counts[i];
            metric.histogram.bucket.push_back({cumulative, seconds(DurationHistogram::bounds[i])});
        }
        metric.histogram.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
        return metric;
    }

    MetricFamily single(std::string name, std::string help, std::uint64_t n) const {
        MetricFamily f = family(std::move(name), std::move(help), MetricType::Counter);
        f.metric.push_back(counter(n, {}));
        return f;
    }

    const Client& client_;
    const std::map<std::string, std::string> labels_;
};

}  // namespace

namespace {

// Prometheus's label names: [a-zA-Z_][a-zA-Z0-9_]*, and those starting with
// "__" are reserved. holdfast's own ("primitive", "outcome") may not be given
// twice: a scrape with a duplicate label is rejected whole.
void check_label(const std::string& name) {
    const auto bad = [&name](const std::string& why) {
        throw std::invalid_argument("holdfast: prometheus label '" + name + "' " + why);
    };
    if (name.empty()) bad("is empty");
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!letter && !(i > 0 && c >= '0' && c <= '9'))
            bad("is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*): write it with underscores, e.g. '" +
                [&] {
                    std::string fixed = name;
                    for (char& f : fixed)
                        if (!std::isalnum(static_cast<unsigned char>(f))) f = '_';
                    return fixed;
                }() +
                "'");
    }
    if (name.starts_with("__")) bad("starts with '__', which Prometheus reserves for itself");
    if (name == "primitive" || name == "outcome")
        bad("is one of holdfast's own labels (primitive, outcome): pick another name, e.g. 'service'");
}

}  // namespace

std::shared_ptr<prometheus::Collectable> prometheus_collectable(const Client& client,
                                                               std::map<std::string, std::string> labels) {
    for (const auto& [name, value] : labels) check_label(name);
    return std::make_shared<MetricsCollectable>(client, std::move(labels));
}

}  // namespace holdfast
