// Built against an installed holdfast::prometheus (tests/consumer/run.sh):
// takes a lock, then prints what a Prometheus scrape of the client would read.
#include <holdfast/holdfast.hpp>
#include <holdfast/prometheus.hpp>
#include <prometheus/text_serializer.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s redis://127.0.0.1:PORT\n", argv[0]);
        return 2;
    }
    holdfast::Client client(argv[1]);
    auto metrics = holdfast::prometheus_collectable(client);
    holdfast::Lock lock(client, "consumer:prometheus");
    lock.lock();
    lock.unlock();
    const std::string text = prometheus::TextSerializer().Serialize(metrics->Collect());
    const std::string expected = "holdfast_acquires_total{primitive=\"lock\",outcome=\"acquired\"} 1";
    if (text.find(expected) == std::string::npos) {
        std::fprintf(stderr, "consumer: no '%s' in the scrape:\n%s", expected.c_str(), text.c_str());
        return 1;
    }
    std::printf("consumer: holdfast::prometheus scraped %zu bytes with %s\n", text.size(), expected.c_str());
    return 0;
}
