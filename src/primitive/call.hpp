// The blocking and std::future faces of the asynchronous operations every
// primitive offers: the blocking API is a thin wrapper, never a second
// implementation.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "errors/failure.hpp"
#include "primitive/blocking.hpp"
#include "transport/reply.hpp"

namespace holdfast::detail {

class Transport;

/// Throws std::logic_error on the client's event loop thread (in a callback
/// such as a lease-lost stop_callback), where a blocking call would wait for
/// the very thread that must deliver its reply.
void refuse_loop_thread(Transport& transport);

/// Sends one command for `key`; `done` gets its reply, or the error: an error
/// reply as reply_error() describes it (`what` on `key`, where a `kind` of
/// primitive was expected).
void ask(Transport& transport, const std::string& key, std::string what, const std::vector<std::string_view>& args,
         std::function<void(Failure, Reply)> done, std::string_view kind = "lock");

/// ask(), blocking for the reply; an error is thrown.
Reply query(Transport& transport, const std::string& key, std::string what, const std::vector<std::string_view>& args,
            std::string_view kind = "lock");

/// Calls `start(done)` and blocks the calling thread until `done(error, value)`
/// runs (on any thread); returns the value or throws the error.
template <class T, class Start>
T block(Transport& transport, Start&& start) {
    refuse_loop_thread(transport);
    BlockingResult<T> result;
    std::forward<Start>(start)(
        [&result](std::exception_ptr error, T value) { result.set(std::move(error), std::move(value)); });
    return result.get();
}

/// Calls `start(done)` and returns a future of what `done` receives:
/// `done(error, value)`, or `done(error)` for a std::future<void>.
template <class T, class Start>
std::future<T> future_of(Start&& start) {
    auto promise = std::make_shared<std::promise<T>>();
    auto future = promise->get_future();
    if constexpr (std::is_void_v<T>) {
        std::forward<Start>(start)([promise](std::exception_ptr error) {
            if (error) promise->set_exception(std::move(error));
            else promise->set_value();
        });
    } else {
        std::forward<Start>(start)([promise](std::exception_ptr error, T value) {
            if (error) promise->set_exception(std::move(error));
            else promise->set_value(std::move(value));
        });
    }
    return future;
}

}  // namespace holdfast::detail
