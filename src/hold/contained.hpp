// A user's completion that throws must not end the process: it runs on the
// client's event loop thread, where an escaping exception would terminate
// every lock of the client with it. Contained as event handlers are.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "holdfast/completion.hpp"

namespace holdfast::detail {

class ClientCore;

/// Tells the client's event handler that a completion for `kind` `name` threw
/// `error` (Event::Kind::completion_threw); nothing else.
void completion_threw(ClientCore& core, std::string_view kind, const std::string& name, std::exception_ptr error);

/// Calls `done(args...)`; what it throws is caught and told (completion_threw).
template <class Done, class... Args>
void call_contained(ClientCore& core, std::string_view kind, const std::string& name, Done& done, Args&&... args) {
    try {
        done(std::forward<Args>(args)...);
    } catch (...) {
        completion_threw(core, kind, name, std::current_exception());
    }
}

/// `done`, with whatever it throws caught and told (completion_threw).
template <class... Results>
Completion<Results...> contained(ClientCore& core, std::string_view kind, std::string name,
                                 Completion<Results...> done) {
    return [&core, kind, name = std::move(name), done = std::move(done)](std::exception_ptr error,
                                                                        Results... results) {
        call_contained(core, kind, name, done, std::move(error), std::move(results)...);
    };
}

}  // namespace holdfast::detail
