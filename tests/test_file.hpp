// A file of the test tree read whole: the Redisson peers' scripts, written
// from docs/redisson-layout.md, are kept as .lua files beside their tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace holdfast::testing {

/// The text of `relative` (to tests/), read once per call.
inline std::string test_file(const std::string& relative) {
    const auto path = std::filesystem::path(HOLDFAST_TESTS_DIR) / relative;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace holdfast::testing
