// Whether an exception carried in an exception_ptr is of a kind, for the few
// places that must tell a lost reply from a refusal.
#pragma once

#include <exception>

namespace holdfast::detail {

/// Whether `error` is (or derives from) E.
template <class E>
bool is(const std::exception_ptr& error) {
    if (!error) return false;
    try {
        std::rethrow_exception(error);
    } catch (const E&) {
        return true;
    } catch (...) {
        return false;
    }
}

}  // namespace holdfast::detail
