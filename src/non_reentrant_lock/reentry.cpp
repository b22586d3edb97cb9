#include "non_reentrant_lock/reentry.hpp"

#include <string_view>
#include <utility>

#include "common/quoted.hpp"
#include "core/client_core.hpp"

namespace holdfast::detail {

namespace {

// The first word of the acquire script's refusal: Redisson's text.
constexpr std::string_view reentry_refused = "NON_REENTRANT_REACQUIRE";

}  // namespace

void report_reentry_as_deadlock(ClientCore& core, AcquireRequest& request) {
    request.attempt = [&core, attempt = std::move(request.attempt)](const HoldId& hold,
                                                                    std::function<void(Attempt)> report) {
        // The hold outlives the reply: the report keeps its operation.
        attempt(hold, [&core, &hold, report = std::move(report)](Attempt result) {
            // The word, wherever the server put it: Redis prefixes a one-word error with ERR.
            if (result.outcome == Attempt::Outcome::failed && is_server(result.error.code()) &&
                result.error.message().find(reentry_refused) != std::string::npos)
                result.error = Failure(errc::deadlock,
                                       "holdfast: cannot take " + hold.subject() + " on " +
                                           core.transport.config().server_name() + ": owner " + quoted(hold.owner) +
                                           " holds it already, and it is not reentrant (the server refused a second "
                                           "hold: NON_REENTRANT_REACQUIRE); unlock it before taking it again, or use "
                                           "a reentrant Lock");
            report(std::move(result));
        });
    };
}

}  // namespace holdfast::detail
