// Waiting for a lock or a permit while listening for signals: shared by the
// lock (run.cpp) and the semaphore (permit.cpp) sides of `holdfast run`.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>

#include "cli/process.hpp"
#include "holdfast/completion.hpp"

namespace holdfast::cli {

enum class Outcome { acquired, timed_out, interrupted };

struct Acquisition {
    Outcome outcome;
    int signo = 0;
    std::optional<std::int64_t> token = std::nullopt;  // --fenced
    std::string permit = {};                           // --semaphore: the permit's id
};

namespace detail_acquire {

// The library's futures cannot call back, so a thread waits and wakes the
// event loop. Detached: an abandoned acquire completes only when the Client goes.
template <class T>
void notify_when_ready(std::shared_future<T> future, std::function<void()> notify) {
    std::thread([future = std::move(future), notify = std::move(notify)] {
        future.wait();
        notify();
    }).detach();
}

// Whether a finished acquire took the lock (its token, the permit's id); throws what it failed with.
template <class T>
Acquisition outcome_of(const std::shared_future<T>& taken) {
    if constexpr (std::is_void_v<T>) {
        taken.get();
        return {Outcome::acquired};
    } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
        const auto token = taken.get();
        return {token ? Outcome::acquired : Outcome::timed_out, 0, token};
    } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
        const auto permit = taken.get();
        return {permit ? Outcome::acquired : Outcome::timed_out, 0, std::nullopt, permit.value_or("")};
    } else {
        return {taken.get() ? Outcome::acquired : Outcome::timed_out};
    }
}

}  // namespace detail_acquire

/// A callback-form acquire as a future.
template <class T>
std::shared_future<T> future_of(const std::function<void(Completion<T>)>& start) {
    auto promise = std::make_shared<std::promise<T>>();
    auto future = promise->get_future().share();
    start([promise](std::exception_ptr error, T result) {
        if (error) promise->set_exception(error);
        else promise->set_value(std::move(result));
    });
    return future;
}

/// Waits for the acquire to finish, or for a signal to give up. Giving up
/// stops the wait (a fair waiter leaves its queue, as a --wait timeout does)
/// and waits for it to end; if the attempt then in flight took the lock after
/// all, `give_back` returns it.
template <class T>
Acquisition await(std::shared_future<T> taken, std::stop_source& stop,
                  const std::function<void(const Acquisition&)>& give_back, Events& events) {
    detail_acquire::notify_when_ready(taken, events.notifier());
    for (;;) {
        const auto event = events.wait();
        if (event.kind == Events::Event::Kind::signal && event.signo != SIGCHLD) {
            stop.request_stop();
            try {
                if (const auto late = detail_acquire::outcome_of(taken); late.outcome == Outcome::acquired)
                    give_back(late);
            } catch (const std::exception&) {
                // Failed while giving up: nothing was taken that could be given back.
            }
            return {Outcome::interrupted, event.signo};
        }
        if (taken.wait_for(std::chrono::seconds::zero()) != std::future_status::ready) continue;
        return detail_acquire::outcome_of(taken);  // throws what the acquire failed with
    }
}

}  // namespace holdfast::cli
