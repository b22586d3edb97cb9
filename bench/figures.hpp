// How the report prints a figure, and the ceilings it reads figures against:
// shared by its tables (report.cpp) and its targets (targets.cpp).
#pragma once

#include <string>
#include <vector>

#include "ceiling.hpp"
#include "topologies.hpp"
#include "uncontended.hpp"

namespace holdfast::bench {

/// 1234567.8 -> "1,234,568"
std::string count(double value);
std::string fixed(double value, int decimals);
std::string micros(double us);
std::string bytes(double value);
/// 0.5 -> "0.50×"
std::string ratio_of(double value);
/// value ÷ ceiling as ratio_of, or "—" without a ceiling.
std::string ratio(double value, double ceiling);
double median(std::vector<double> values);

inline constexpr const char* heap_unmeasurable = "not measurable in this build (a sanitizer's allocator)";

/// The ceilings each holdfast figure is compared with, from the -c 1 and
/// pipelined acquire runs: a pair is two script calls, a critical section four
/// round trips (acquire, GET, SET, release), a handoff two (release, acquire).
struct Ceilings {
    double pairs_serial, pairs_pipelined, pair_p50_us, sections_per_s, handoff_us;
};

Ceilings ceilings_of(const Ceiling& c);

/// A cluster figure is compared with the mean of the masters' ceilings: the
/// client and all three masters share this machine's cores, so the masters'
/// ceilings measured one at a time do not add up.
struct ClusterCeilings {
    double pairs_serial = 0, pairs_pipelined = 0, pair_p50_us = 0;
};

ClusterCeilings cluster_ceilings(const ClusterCase& c);

/// What the cores allow at a pair's CPU cost (this process's and the server's): cores ÷ CPU per pair.
double cores_allow(const ManyPairs& m, unsigned cores);
/// "client µs + server µs"
std::string cpu_per_pair(const ManyPairs& m);

}  // namespace holdfast::bench
