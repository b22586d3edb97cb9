#include "semaphore/permits.hpp"

#include <random>
#include <set>
#include <stdexcept>

namespace holdfast::detail {

namespace {

constexpr std::size_t id_bytes = 16;

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::string new_permit() {
    static thread_local std::mt19937_64 random{(static_cast<std::uint64_t>(std::random_device{}()) << 32) ^
                                               std::random_device{}()};
    std::string bytes(id_bytes, '\0');
    for (std::size_t i = 0; i < id_bytes; i += 8) {
        std::uint64_t word = random();
        for (std::size_t j = 0; j < 8; ++j, word >>= 8) bytes[i + j] = static_cast<char>(word & 0xff);
    }
    return bytes;
}

std::vector<std::string> permit_bytes(std::string_view noun, const std::string& name,
                                      const std::vector<std::string>& permit_ids) {
    const std::string subject = "holdfast: " + std::string(noun) + " '" + name + "': ";
    if (permit_ids.empty()) throw std::invalid_argument(subject + "no permit ids given");
    std::vector<std::string> all;
    std::set<std::string> seen;
    for (const std::string& permit_id : permit_ids) {
        std::string bytes;
        if (permit_id.size() == id_bytes * 2) {
            for (std::size_t i = 0; i < permit_id.size(); i += 2) {
                const int high = hex_value(permit_id[i]), low = hex_value(permit_id[i + 1]);
                if (high < 0 || low < 0) break;
                bytes += static_cast<char>(high << 4 | low);
            }
        }
        if (bytes.size() != id_bytes)
            throw std::invalid_argument(subject + "permit_id must be " + std::to_string(id_bytes * 2) +
                                        " hex digits, as acquire() returns, got '" + permit_id + "'");
        if (!seen.insert(bytes).second)
            throw std::invalid_argument(subject + "permit " + permit_hex(bytes) + " is given twice");
        all.push_back(std::move(bytes));
    }
    return all;
}

}  // namespace holdfast::detail
