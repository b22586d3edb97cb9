#include "figures.hpp"

#include <algorithm>
#include <cstdio>

namespace holdfast::bench {

std::string count(double value) {
    const std::string digits = std::to_string(static_cast<long long>(value + 0.5));
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string micros(double us) { return fixed(us, 1) + " µs"; }
std::string bytes(double value) { return count(value) + " B"; }
std::string ratio_of(double value) { return fixed(value, 2) + "×"; }
std::string ratio(double value, double ceiling) { return ceiling > 0 ? ratio_of(value / ceiling) : "—"; }

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

Ceilings ceilings_of(const Ceiling& c) {
    return {c.acquire_serial.ops_per_s / 2, c.acquire_pipelined.ops_per_s / 2, 2 * c.acquire_serial.p50_ms * 1e3,
            c.acquire_serial.ops_per_s / 4, 2 * c.acquire_serial.p50_ms * 1e3};
}

ClusterCeilings cluster_ceilings(const ClusterCase& c) {
    ClusterCeilings k;
    for (const auto& m : c.per_master) {
        k.pairs_serial += m.acquire_serial.ops_per_s / 2 / static_cast<double>(c.per_master.size());
        k.pairs_pipelined += m.acquire_pipelined.ops_per_s / 2 / static_cast<double>(c.per_master.size());
        k.pair_p50_us += 2 * m.acquire_serial.p50_ms * 1e3 / static_cast<double>(c.per_master.size());
    }
    return k;
}

double cores_allow(const ManyPairs& m, unsigned cores) {
    const double us = m.client_us_per_pair + m.server_us_per_pair;
    return us > 0 ? cores * 1e6 / us : 0;
}

std::string cpu_per_pair(const ManyPairs& m) {
    return micros(m.client_us_per_pair) + " + " + micros(m.server_us_per_pair);
}

}  // namespace holdfast::bench
