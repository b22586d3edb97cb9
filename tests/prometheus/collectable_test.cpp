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

}  // namespace
}  // namespace holdfast::testing
