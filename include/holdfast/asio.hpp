// holdfast's waits and releases as Asio asynchronous operations: any
// completion token (asio::use_awaitable, asio::use_future, deferred, a
// callback), per-operation cancellation through Asio's cancellation slots, and
// std::error_code completions through with_error_code(token). Header-only,
// over the callback forms; needs standalone Asio (docs/async.md).
#pragma once

#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/dispatch.hpp>
#include <asio/error.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/prefer.hpp>
#include <asio/system_executor.hpp>

#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "holdfast/count_down_latch.hpp"
#include "holdfast/errors.hpp"
#include "holdfast/fenced_lock.hpp"
#include "holdfast/lock.hpp"
#include "holdfast/lock_group.hpp"
#include "holdfast/permit_expirable_semaphore.hpp"
#include "holdfast/semaphore.hpp"

namespace holdfast {

/// A completion token given to a holdfast adapter as with_error_code(token):
/// the operation completes with std::error_code where it would give
/// std::exception_ptr (void(std::error_code, bool) for async_try_lock, ...), so
/// asio::redirect_error, asio::as_tuple and any handler taking an error_code
/// work as with Asio's own operations. The code is the error's code()
/// (holdfast::errc, docs/errors.md), or asio::error::operation_aborted when
/// cancelled; the message is not carried: the std::exception_ptr form has it.
template <class Token>
struct with_error_code_t {
    Token token;
};

template <class Token>
with_error_code_t<std::decay_t<Token>> with_error_code(Token&& token) {
    return {std::forward<Token>(token)};
}

namespace asio_detail {

template <class Token>
struct error_code_form : std::false_type {};
template <class Token>
struct error_code_form<with_error_code_t<Token>> : std::true_type {};

/// void(std::exception_ptr, R...) as void(std::error_code, R...).
template <class Signature>
struct with_code;
template <class... Results>
struct with_code<void(std::exception_ptr, Results...)> {
    using type = void(std::error_code, Results...);
};

/// The code of what a callback form completed with: a holdfast::Error's, or a
/// cancellation's (std::system_error); nothing else comes.
inline std::error_code code_of(const std::exception_ptr& error) {
    if (!error) return {};
    try {
        std::rethrow_exception(error);
    } catch (const Error& e) {
        return e.code();
    } catch (const std::system_error& e) {
        return e.code();
    } catch (...) {
        return std::make_error_code(std::errc::io_error);
    }
}

/// The handler as the finish steps call it, with a std::exception_ptr; in the
/// error_code form (`codes`), it hands the handler the code instead.
template <bool codes, class Handler>
auto completing(Handler handler) {
    if constexpr (codes)
        return [handler = std::move(handler)](std::exception_ptr error, auto&&... results) mutable {
            std::move(handler)(code_of(error), std::forward<decltype(results)>(results)...);
        };
    else
        return handler;
}

/// What a wait cancelled through its slot completes with.
inline std::exception_ptr aborted() {
    return std::make_exception_ptr(std::system_error(asio::error::operation_aborted, "holdfast: wait cancelled"));
}

/// A handler waiting for the client's loop thread, with a tracked executor (so
/// its io_context does not run out of work meanwhile) and the stop source its
/// cancellation slot requests.
template <class Handler>
struct Pending {
    using Executor = asio::associated_executor_t<Handler>;
    // decay_t: for an executor without the property (use_future's), prefer()
    // returns its argument as T&&, and a reference member would dangle.
    using Work =
        std::decay_t<decltype(asio::prefer(std::declval<Executor>(), asio::execution::outstanding_work.tracked))>;

    explicit Pending(Handler h)
        : handler(std::move(h)),
          work(asio::prefer(asio::get_associated_executor(handler), asio::execution::outstanding_work.tracked)) {}

    Handler handler;
    Work work;
    std::stop_source stop;
};

/// Starts `start(stop_token, completion)` and completes the handler on its
/// own executor (inline on the loop thread for a plain callback) through
/// `finish(handler, cancelled, error, results...)`. `cancellable`: the slot's
/// cancellation (any type: a stopped wait leaves nothing behind) requests the
/// stop. `Signature` has a std::exception_ptr first; with_error_code(token)
/// makes it a std::error_code.
template <class Signature, class Token, class Start, class Finish>
auto initiate(Token&& token, bool cancellable, Start start, Finish finish) {
    constexpr bool codes = error_code_form<std::decay_t<Token>>::value;
    auto initiation = [cancellable, start = std::move(start), finish = std::move(finish)](auto handler) mutable {
        using Handler = decltype(handler);
        auto pending = std::make_shared<Pending<Handler>>(std::move(handler));
        if (cancellable) {
            auto slot = asio::get_associated_cancellation_slot(pending->handler);
            if (slot.is_connected())
                slot.assign([stop = pending->stop](asio::cancellation_type) mutable { stop.request_stop(); });
        }
        start(pending->stop.get_token(), [pending, finish](std::exception_ptr error, auto... results) {
            auto complete = [pending, finish, error, results...]() mutable {
                asio::get_associated_cancellation_slot(pending->handler).clear();
                finish(completing<codes>(std::move(pending->handler)), pending->stop.stop_requested(),
                       std::move(error), std::move(results)...);
            };
            // A handler with no executor of its own (a plain callback) runs
            // here, inline on the loop thread, so that what it throws reaches
            // holdfast's containment (Event::Kind::completion_threw): Asio's
            // system executor would terminate on it.
            if constexpr (std::is_same_v<typename Pending<Handler>::Executor, asio::system_executor>) complete();
            else asio::dispatch(pending->work, std::move(complete));
        });
    };
    if constexpr (codes)
        return asio::async_initiate<decltype(token.token), typename with_code<Signature>::type>(std::move(initiation),
                                                                                              token.token);
    else
        return asio::async_initiate<Token, Signature>(std::move(initiation), token);
}

/// Whether a wait's result says it took what it waited for.
inline bool taken(bool result) { return result; }
template <class T>
bool taken(const std::optional<T>& result) {
    return result.has_value();
}
inline bool taken(const std::vector<std::string>& result) { return !result.empty(); }

/// Completes a wait with the member callback's result; operation_aborted when
/// cancelled with nothing taken.
inline constexpr auto finish_wait = [](auto handler, bool cancelled, std::exception_ptr error, auto result) {
    if (!error && !taken(result) && cancelled) error = aborted();
    std::move(handler)(std::move(error), std::move(result));
};

/// Completes a release or a try-release (which gets whether it released).
inline constexpr auto finish_release = [](auto handler, bool, std::exception_ptr error, auto... released) {
    std::move(handler)(std::move(error), std::move(released)...);
};

/// A wait: `start(stop, done)` calls the member callback form whose
/// Completion<Result> it is given. Cancellable.
template <class Result, class Token, class Start>
auto waiting(Token&& token, Start start) {
    return initiate<void(std::exception_ptr, Result)>(token, true, std::move(start), finish_wait);
}

/// A release: `start(stop, done)` calls the member callback form with its
/// Completion<Results...>. Not cancellable: a release once sent cannot be taken back.
template <class... Results, class Token, class Start>
auto releasing(Token&& token, Start start) {
    return initiate<void(std::exception_ptr, Results...)>(token, false, std::move(start), finish_release);
}

}  // namespace asio_detail

// Every adapter completes with what its member callback form gets (docs/async.md):
// a wait with whether it took (or what it took), a release with nothing (a
// try-release with whether it released), the error first. A cancelled wait
// completes with operation_aborted and leaves nothing taken.

// ---- Lock and LockGroup ----

/// Lock (and FairLock, SpinLock, FencedLock, the read-write lock's sides) and
/// LockGroup (MultiLock, RedLock): what the lock adapters accept.
template <class L>
concept AsyncLockable = std::derived_from<L, Lock> || std::derived_from<L, LockGroup>;

/// Waits as long as it takes for `lock`, for `owner` (Client::new_owner());
/// renewed by the watchdog. Completion: void(std::exception_ptr, bool taken),
/// taken false only when cancelled (then with operation_aborted).
template <AsyncLockable L, class Token>
auto async_lock(L& lock, std::string owner, Token&& token) {
    return asio_detail::waiting<bool>(token, [&lock, owner = std::move(owner)](std::stop_token stop, Completion<bool> done) mutable {
        lock.async_lock(std::move(owner), std::nullopt, std::move(stop), std::move(done));
    });
}

/// As async_lock(lock, owner, token), held for `lease` and not renewed.
template <AsyncLockable L, class Token>
auto async_lock(L& lock, std::string owner, Lock::Duration lease, Token&& token) {
    return asio_detail::waiting<bool>(
        token, [&lock, owner = std::move(owner), lease](std::stop_token stop, Completion<bool> done) mutable {
            lock.async_lock(std::move(owner), lease, std::move(stop), std::move(done));
        });
}

/// Waits up to `wait` (zero: try once). Completion: void(std::exception_ptr, bool taken).
template <AsyncLockable L, class Token>
auto async_try_lock(L& lock, std::string owner, Lock::Duration wait, Token&& token) {
    return asio_detail::waiting<bool>(
        token, [&lock, owner = std::move(owner), wait](std::stop_token stop, Completion<bool> done) mutable {
            lock.async_try_lock(std::move(owner), wait, std::nullopt, std::move(stop), std::move(done));
        });
}

/// As async_try_lock(lock, owner, wait, token), held for `lease` and not renewed.
template <AsyncLockable L, class Token>
auto async_try_lock(L& lock, std::string owner, Lock::Duration wait, Lock::Duration lease, Token&& token) {
    return asio_detail::waiting<bool>(
        token, [&lock, owner = std::move(owner), wait, lease](std::stop_token stop, Completion<bool> done) mutable {
            lock.async_try_lock(std::move(owner), wait, lease, std::move(stop), std::move(done));
        });
}

/// Releases one hold of `owner` (release()'s outcome). Completion: void(std::exception_ptr).
template <AsyncLockable L, class Token>
auto async_release(L& lock, std::string owner, Token&& token) {
    return asio_detail::releasing(token, [&lock, owner = std::move(owner)](std::stop_token, Completion<> done) mutable {
        lock.async_release(std::move(owner), std::move(done));
    });
}

// ---- FencedLock ----

/// async_lock returning the fencing token (nullopt when cancelled).
/// Completion: void(std::exception_ptr, std::optional<std::int64_t>).
template <class Token>
auto async_lock_and_get_token(FencedLock& lock, std::string owner, Token&& token) {
    return asio_detail::waiting<std::optional<std::int64_t>>(
        token, [&lock, owner = std::move(owner)](std::stop_token stop,
                                                 Completion<std::optional<std::int64_t>> done) mutable {
            lock.async_lock_and_get_token(std::move(owner), std::nullopt, std::move(stop), std::move(done));
        });
}

/// As async_lock_and_get_token(lock, owner, token), held for `lease` and not renewed.
template <class Token>
auto async_lock_and_get_token(FencedLock& lock, std::string owner, Lock::Duration lease, Token&& token) {
    return asio_detail::waiting<std::optional<std::int64_t>>(
        token, [&lock, owner = std::move(owner), lease](std::stop_token stop,
                                                        Completion<std::optional<std::int64_t>> done) mutable {
            lock.async_lock_and_get_token(std::move(owner), lease, std::move(stop), std::move(done));
        });
}

/// async_try_lock returning the fencing token, or nullopt when not taken.
/// Completion: void(std::exception_ptr, std::optional<std::int64_t>).
template <class Token>
auto async_try_lock_and_get_token(FencedLock& lock, std::string owner, Lock::Duration wait, Token&& token) {
    return asio_detail::waiting<std::optional<std::int64_t>>(
        token, [&lock, owner = std::move(owner), wait](std::stop_token stop,
                                                       Completion<std::optional<std::int64_t>> done) mutable {
            lock.async_try_lock_and_get_token(std::move(owner), wait, std::nullopt, std::move(stop), std::move(done));
        });
}

/// As async_try_lock_and_get_token(lock, owner, wait, token), held for `lease` and not renewed.
template <class Token>
auto async_try_lock_and_get_token(FencedLock& lock, std::string owner, Lock::Duration wait, Lock::Duration lease,
                                  Token&& token) {
    return asio_detail::waiting<std::optional<std::int64_t>>(
        token, [&lock, owner = std::move(owner), wait, lease](std::stop_token stop,
                                                              Completion<std::optional<std::int64_t>> done) mutable {
            lock.async_try_lock_and_get_token(std::move(owner), wait, lease, std::move(stop), std::move(done));
        });
}

// ---- Semaphore ----

/// Waits as long as it takes for `permits`. Completion: void(std::exception_ptr,
/// bool taken), false only when cancelled.
template <class Token>
auto async_acquire(Semaphore& semaphore, std::int64_t permits, Token&& token) {
    return asio_detail::waiting<bool>(token, [&semaphore, permits](std::stop_token stop, Completion<bool> done) {
        semaphore.async_acquire(permits, std::move(stop), std::move(done));
    });
}

/// One permit.
template <class Token>
auto async_acquire(Semaphore& semaphore, Token&& token) {
    return async_acquire(semaphore, 1, std::forward<Token>(token));
}

/// Waits up to `wait` for `permits`. Completion: void(std::exception_ptr, bool taken).
template <class Token>
auto async_try_acquire(Semaphore& semaphore, std::int64_t permits, Semaphore::Duration wait, Token&& token) {
    return asio_detail::waiting<bool>(token, [&semaphore, permits, wait](std::stop_token stop, Completion<bool> done) {
        semaphore.async_try_acquire(permits, wait, std::move(stop), std::move(done));
    });
}

/// Completion: void(std::exception_ptr).
template <class Token>
auto async_release(Semaphore& semaphore, std::int64_t permits, Token&& token) {
    return asio_detail::releasing(token, [&semaphore, permits](std::stop_token, Completion<> done) {
        semaphore.async_release(permits, std::move(done));
    });
}

/// Completion: void(std::exception_ptr, bool released): false when the semaphore has no count.
template <class Token>
auto async_release_if_exists(Semaphore& semaphore, std::int64_t permits, Token&& token) {
    return asio_detail::releasing<bool>(token, [&semaphore, permits](std::stop_token, Completion<bool> done) {
        semaphore.async_release_if_exists(permits, std::move(done));
    });
}

// ---- PermitExpirableSemaphore ----

/// Waits as long as it takes for a permit that never expires.
/// Completion: void(std::exception_ptr, std::optional<std::string> permit_id), nullopt only when cancelled.
template <class Token>
auto async_acquire(PermitExpirableSemaphore& semaphore, Token&& token) {
    return asio_detail::waiting<std::optional<std::string>>(
        token, [&semaphore](std::stop_token stop, Completion<std::optional<std::string>> done) {
            semaphore.async_acquire(std::nullopt, std::move(stop), std::move(done));
        });
}

/// As async_acquire(semaphore, token), the permit held for `lease`.
template <class Token>
auto async_acquire(PermitExpirableSemaphore& semaphore, PermitExpirableSemaphore::Duration lease, Token&& token) {
    return asio_detail::waiting<std::optional<std::string>>(
        token, [&semaphore, lease](std::stop_token stop, Completion<std::optional<std::string>> done) {
            semaphore.async_acquire(lease, std::move(stop), std::move(done));
        });
}

/// Waits up to `wait` for a permit (held for `lease`, if given).
/// Completion: void(std::exception_ptr, std::optional<std::string> permit_id).
template <class Token>
auto async_try_acquire(PermitExpirableSemaphore& semaphore, PermitExpirableSemaphore::Duration wait, Token&& token) {
    return asio_detail::waiting<std::optional<std::string>>(
        token, [&semaphore, wait](std::stop_token stop, Completion<std::optional<std::string>> done) {
            semaphore.async_try_acquire(wait, std::nullopt, std::move(stop), std::move(done));
        });
}
template <class Token>
auto async_try_acquire(PermitExpirableSemaphore& semaphore, PermitExpirableSemaphore::Duration wait,
                       PermitExpirableSemaphore::Duration lease, Token&& token) {
    return asio_detail::waiting<std::optional<std::string>>(
        token, [&semaphore, wait, lease](std::stop_token stop, Completion<std::optional<std::string>> done) {
            semaphore.async_try_acquire(wait, lease, std::move(stop), std::move(done));
        });
}

/// `permits` at once, or none. Completion: void(std::exception_ptr,
/// std::vector<std::string> permit_ids), empty only when cancelled.
template <class Token>
auto async_acquire(PermitExpirableSemaphore& semaphore, std::int64_t permits, Token&& token) {
    return asio_detail::waiting<std::vector<std::string>>(
        token, [&semaphore, permits](std::stop_token stop, Completion<std::vector<std::string>> done) {
            semaphore.async_acquire(permits, std::nullopt, std::move(stop), std::move(done));
        });
}
template <class Token>
auto async_acquire(PermitExpirableSemaphore& semaphore, std::int64_t permits, PermitExpirableSemaphore::Duration lease,
                   Token&& token) {
    return asio_detail::waiting<std::vector<std::string>>(
        token, [&semaphore, permits, lease](std::stop_token stop, Completion<std::vector<std::string>> done) {
            semaphore.async_acquire(permits, lease, std::move(stop), std::move(done));
        });
}

/// Waits up to `wait` for `permits` at once. Completion: void(std::exception_ptr,
/// std::vector<std::string> permit_ids), empty when none were taken.
template <class Token>
auto async_try_acquire(PermitExpirableSemaphore& semaphore, std::int64_t permits,
                       PermitExpirableSemaphore::Duration wait, Token&& token) {
    return asio_detail::waiting<std::vector<std::string>>(
        token, [&semaphore, permits, wait](std::stop_token stop, Completion<std::vector<std::string>> done) {
            semaphore.async_try_acquire(permits, wait, std::nullopt, std::move(stop), std::move(done));
        });
}
template <class Token>
auto async_try_acquire(PermitExpirableSemaphore& semaphore, std::int64_t permits,
                       PermitExpirableSemaphore::Duration wait, PermitExpirableSemaphore::Duration lease,
                       Token&& token) {
    return asio_detail::waiting<std::vector<std::string>>(
        token, [&semaphore, permits, wait, lease](std::stop_token stop, Completion<std::vector<std::string>> done) {
            semaphore.async_try_acquire(permits, wait, lease, std::move(stop), std::move(done));
        });
}

/// Returns the permit (every permit listed, or none); NotOwnerError if it is
/// not held. Completion: void(std::exception_ptr).
template <class Token>
auto async_release(PermitExpirableSemaphore& semaphore, std::string permit_id, Token&& token) {
    return asio_detail::releasing(token, [&semaphore, permit_id = std::move(permit_id)](std::stop_token,
                                                                                   Completion<> done) mutable {
        semaphore.async_release(std::move(permit_id), std::move(done));
    });
}
template <class Token>
auto async_release(PermitExpirableSemaphore& semaphore, std::vector<std::string> permit_ids, Token&& token) {
    return asio_detail::releasing(token, [&semaphore, permit_ids = std::move(permit_ids)](std::stop_token,
                                                                                     Completion<> done) mutable {
        semaphore.async_release(std::move(permit_ids), std::move(done));
    });
}

/// As async_release, with false in place of NotOwnerError. Completion: void(std::exception_ptr, bool released).
template <class Token>
auto async_try_release(PermitExpirableSemaphore& semaphore, std::string permit_id, Token&& token) {
    return asio_detail::releasing<bool>(token, [&semaphore, permit_id = std::move(permit_id)](
                                                 std::stop_token, Completion<bool> done) mutable {
        semaphore.async_try_release(std::move(permit_id), std::move(done));
    });
}
template <class Token>
auto async_try_release(PermitExpirableSemaphore& semaphore, std::vector<std::string> permit_ids, Token&& token) {
    return asio_detail::releasing<bool>(token, [&semaphore, permit_ids = std::move(permit_ids)](
                                                 std::stop_token, Completion<bool> done) mutable {
        semaphore.async_try_release(std::move(permit_ids), std::move(done));
    });
}

// ---- CountDownLatch ----

/// Waits as long as it takes for the latch to open. Completion:
/// void(std::exception_ptr, bool opened), false only when cancelled.
template <class Token>
auto async_await(CountDownLatch& latch, Token&& token) {
    return asio_detail::waiting<bool>(
        token, [&latch](std::stop_token stop, Completion<bool> done) { latch.async_await(std::move(stop), std::move(done)); });
}

/// Waits up to `wait`. Completion: void(std::exception_ptr, bool opened).
template <class Token>
auto async_await_for(CountDownLatch& latch, CountDownLatch::Duration wait, Token&& token) {
    return asio_detail::waiting<bool>(token, [&latch, wait](std::stop_token stop, Completion<bool> done) {
        latch.async_await_for(wait, std::move(stop), std::move(done));
    });
}

/// Completion: void(std::exception_ptr).
template <class Token>
auto async_count_down(CountDownLatch& latch, Token&& token) {
    return asio_detail::releasing(
        token, [&latch](std::stop_token, Completion<> done) { latch.async_count_down(std::move(done)); });
}

}  // namespace holdfast
