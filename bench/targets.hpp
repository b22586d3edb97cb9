// The report's targets: every figure a run is held to, its comparison and
// target value kept as data (targets.cpp), with this run's verdict.
#pragma once

#include <sstream>

#include "figures.hpp"
#include "report.hpp"

namespace holdfast::bench {

/// The "Targets" section: one table per kind of figure, MET / NOT MET.
void targets_section(std::ostringstream& out, const Results& r, const Ceilings& k, unsigned cores);

}  // namespace holdfast::bench
