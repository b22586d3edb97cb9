// The callbacks the async forms complete with: the core that futures and
// holdfast/asio.hpp build on.
#pragma once

#include <exception>
#include <functional>

namespace holdfast {

/// Runs once, on a client's event loop thread: `error` set (what the blocking
/// form would throw) and the results default, or error null and the results.
/// Must not block: the loop serves every lock of the client.
/// Completion<> for a release, Completion<bool> for a wait that may end
/// without the primitive (its deadline passed, or its stop_token was stopped).
template <class... Results>
using Completion = std::function<void(std::exception_ptr error, Results... results)>;

}  // namespace holdfast
