// The message of an exception carried in an exception_ptr, for errors that
// wrap another (which server said what).
#pragma once

#include <exception>
#include <string>

namespace holdfast::detail {

inline std::string message_of(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "unknown error";
    }
}

}  // namespace holdfast::detail
