// holdfast::prometheus: a client's metrics in Prometheus's text format, as a
// scrape would read them.
#include <prometheus/text_serializer.h>

#include "holdfast/prometheus.hpp"
#include "redis_fixture.hpp"

namespace holdfast::testing {
namespace {

using PrometheusCollectable = RedisTest;

std::string scrape(const prometheus::Collectable& metrics) {
    return prometheus::TextSerializer().Serialize(metrics.Collect());
}

TEST_F(PrometheusCollectable, ShowsWhatTheClientCounted) {
    Client client(config());
    auto metrics = prometheus_collectable(client, {{"service", "orders"}});
    Lock lock(client, "ledger");
    lock.lock();
    lock.unlock();
    Semaphore semaphore(client, "permits");
    EXPECT_FALSE(semaphore.try_acquire());

    const std::string text = scrape(*metrics);
    for (const std::string line :
         {"# TYPE holdfast_acquires_total counter",
          "holdfast_acquires_total{service=\"orders\",primitive=\"lock\",outcome=\"acquired\"} 1",
          "holdfast_acquires_total{service=\"orders\",primitive=\"semaphore\",outcome=\"gave_up\"} 1",
          "# TYPE holdfast_acquire_wait_seconds histogram",
          "holdfast_acquire_wait_seconds_count{service=\"orders\",primitive=\"lock\"} 1",
          "holdfast_acquire_wait_seconds_bucket{service=\"orders\",primitive=\"lock\",le=\"+Inf\"} 1",
          "holdfast_hold_seconds_count{service=\"orders\",primitive=\"lock\"} 1",
          "holdfast_waiters{service=\"orders\",primitive=\"lock\"} 0",
          "holdfast_reconnects_total{service=\"orders\"} 0"})
        EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\nin:\n" << text;
    // A semaphore has no holds nor renewals to show.
    EXPECT_EQ(text.find("holdfast_hold_seconds_count{service=\"orders\",primitive=\"semaphore\"}"), std::string::npos);

    lock.lock();
    lock.unlock();
    EXPECT_NE(scrape(*metrics).find("holdfast_acquires_total{service=\"orders\",primitive=\"lock\",outcome=\"acquired\"} 2"),
              std::string::npos);
}

// A label Prometheus would reject, or one of holdfast's own, would make every
// scrape invalid: refused when the collectable is made.
TEST_F(PrometheusCollectable, RefusesLabelsThatWouldSpoilTheScrape) {
    Client client(config());
    expect_invalid_argument([&] { prometheus_collectable(client, {{"primitive", "x"}}); }, "holdfast's own labels");
    expect_invalid_argument([&] { prometheus_collectable(client, {{"outcome", "x"}}); }, "holdfast's own labels");
    expect_invalid_argument([&] { prometheus_collectable(client, {{"service-name", "x"}}); }, "'service_name'");
    expect_invalid_argument([&] { prometheus_collectable(client, {{"__reserved", "x"}}); }, "reserves");
    expect_invalid_argument([&] { prometheus_collectable(client, {{"1st", "x"}}); }, "not a Prometheus label name");
    expect_invalid_argument([&] { prometheus_collectable(client, {{"", "x"}}); }, "is empty");
    EXPECT_NE(prometheus_collectable(client, {{"service_name", "orders"}, {"_shard", "1"}}), nullptr);
}

// An unlock that did not release is counted by primitive.
TEST_F(PrometheusCollectable, CountsReleaseFailures) {
    Client client(config());
    auto metrics = prometheus_collectable(client);
    Lock lock(client, "ledger");
    lock.lock();
    lock.force_unlock();
    lock.unlock();
    const std::string text = scrape(*metrics);
    EXPECT_NE(text.find("holdfast_release_failures_total{primitive=\"lock\"} 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace holdfast::testing
