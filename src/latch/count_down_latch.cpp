#include "holdfast/count_down_latch.hpp"

#include <stdexcept>

#include "hold/contained.hpp"
#include "core/client_core.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/names.hpp"
#include "primitive/script_call.hpp"
#include "hold/hold.hpp"
#include "common/quoted.hpp"
#include "primitive/arguments.hpp"
#include "primitive/call.hpp"
#include "primitive/count.hpp"
#include "primitive/reply_errors.hpp"
#include "primitive/wait_queue.hpp"

namespace holdfast {

using detail::Attempt;
using detail::Reply;

namespace {

constexpr std::string_view noun = "count-down latch";
constexpr std::string_view zero_message = "0";       // the count reached 0
constexpr std::string_view new_count_message = "1";  // a count was set (Redisson: or the latch deleted)

using detail::latch_channel;

/// Any message may mean the latch opened (Redisson's delete publishes `1` with
/// the count gone), so each wakes every waiter to read the count.
std::size_t every_waiter(std::string_view) { return detail::wakes::all; }

}  // namespace

CountDownLatch::CountDownLatch(Client& client, std::string name) : client_(&client), name_(std::move(name)) {
    if (name_.empty()) throw std::invalid_argument("holdfast: a " + std::string(noun) + " name must not be empty");
    name_ = detail::mapped_name(client.config().key_prefix, std::move(name_));
}

void CountDownLatch::async_try_set_count(std::int64_t count, Completion<bool> done) {
    if (count <= 0)
        throw std::invalid_argument("holdfast: " + std::string(noun) + " '" + name_ + "': count must be > 0, got " +
                                    std::to_string(count));
    auto& core = detail::core_of(*client_);
    detail::eval_reporting(core.transport, scripts::latch_try_set_count, {name_},
                           {std::string(new_count_message), std::to_string(count),
                            std::string(core.transport.publish_command(name_, latch_channel(name_))),
                            latch_channel(name_)},
                           name_, "set the count of " + std::string(noun),
                           [done = detail::contained(core, noun, name_, std::move(done))](detail::Failure error,
                                                                                          Reply reply) {
                               done(std::move(error), !error && reply.integer == 1);
                           },
                           noun);
}

bool CountDownLatch::try_set_count(std::int64_t count) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { async_try_set_count(count, std::move(done)); });
}

std::future<bool> CountDownLatch::async_try_set_count(std::int64_t count) {
    return detail::future_of<bool>([&](Completion<bool> done) { async_try_set_count(count, std::move(done)); });
}

void CountDownLatch::start_count_down(std::function<void(std::exception_ptr)> done) {
    auto& core = detail::core_of(*client_);
    detail::eval_reporting(
        core.transport, scripts::latch_count_down, {name_},
        {std::string(zero_message), std::string(core.transport.publish_command(name_, latch_channel(name_))), latch_channel(name_)}, name_,
        "count down " + std::string(noun),
        [&core, name = name_, done = std::move(done)](detail::Failure error, Reply) {
            if (error) return done(std::move(error));
            // Replica sync: waiters are told, and a failover should not close the latch again.
            detail::confirm_write(core, name, [done] { done(nullptr); });
        },
        noun);
}

void CountDownLatch::count_down() {
    detail::block<bool>(detail::core_of(*client_).transport, [&](auto done) {
        start_count_down([done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

// An open latch has no key; a count at or below 0 reads as open too.
void CountDownLatch::async_count(Completion<std::int64_t> done) const {
    auto& core = detail::core_of(*client_);
    detail::ask_count(core.transport, name_, "query " + std::string(noun), noun,
                      [done = detail::contained(core, noun, name_, std::move(done))](detail::Failure error,
                                                                                     std::int64_t count) {
                          done(std::move(error), std::max<std::int64_t>(0, count));
                      });
}

std::int64_t CountDownLatch::count() const {
    return detail::block<std::int64_t>(detail::core_of(*client_).transport,
                                       [&](Completion<std::int64_t> done) { async_count(std::move(done)); });
}

std::future<std::int64_t> CountDownLatch::async_count() const {
    return detail::future_of<std::int64_t>([&](Completion<std::int64_t> done) { async_count(std::move(done)); });
}

// Awaiting is acquiring "the latch is open": each attempt reads the count.
void CountDownLatch::start_await(std::optional<Duration> wait, std::stop_token stop, Completion<bool> done) {
    if (wait) detail::check_wait([&] { return std::string(noun) + ' ' + detail::quoted(name_); }, *wait);
    auto& core = detail::core_of(*client_);
    detail::AcquireRequest request;
    request.channel = latch_channel(name_);
    request.wakes = every_waiter;
    request.attempt = [&core](const detail::HoldId& hold, auto report) {
        const std::string& name = hold.key;
        core.transport.execute(name, {"GET", name},
                               [&core, &name, report = std::move(report)](detail::Failure error, Reply reply) {
                                   if (error) return report(Attempt::failed(std::move(error)));
                                   if (reply.is_error())
                                       return detail::reply_error(
                                           core.transport, name, "await " + std::string(noun), reply,
                                           [report](detail::Failure e) { report(Attempt::failed(std::move(e))); },
                                           noun);
                                   const auto count = detail::count_in(reply);
                                   if (!count)
                                       return report(
                                           Attempt::failed(detail::not_a_count(core.transport, reply, name, noun)));
                                   report(*count <= 0 ? Attempt::acquired() : Attempt::refused(-1));
                               });
    };
    request.deadline = detail::deadline_after(wait);
    request.stop = std::move(stop);
    detail::AcquireSpec spec;
    spec.hold = {noun, name_, {}, {}};
    spec.request = std::move(request);
    spec.writes = false;  // it only reads the count
    detail::acquire_hold(core, std::move(spec),
                         [done = std::move(done)](detail::Failure error, bool opened, std::int64_t) {
                             done(std::move(error), opened);
                         });
}

void CountDownLatch::await() { await(std::stop_token()); }

bool CountDownLatch::await(std::stop_token stop) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](auto done) { start_await(std::nullopt, std::move(stop), std::move(done)); });
}

bool CountDownLatch::await_ms(Duration wait, std::stop_token stop) {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](auto done) { start_await(wait, std::move(stop), std::move(done)); });
}

void CountDownLatch::async_await_for(Duration wait, std::stop_token stop, Completion<bool> done) {
    start_await(wait, std::move(stop), detail::contained(detail::core_of(*client_), noun, name_, std::move(done)));
}

void CountDownLatch::async_await(std::stop_token stop, Completion<bool> done) {
    start_await(std::nullopt, std::move(stop), detail::contained(detail::core_of(*client_), noun, name_, std::move(done)));
}

void CountDownLatch::async_count_down(Completion<> done) {
    start_count_down(detail::contained(detail::core_of(*client_), noun, name_, std::move(done)));
}

std::future<bool> CountDownLatch::async_await(std::stop_token stop) {
    return detail::future_of<bool>([&](Completion<bool> done) { async_await(std::move(stop), std::move(done)); });
}

std::future<bool> CountDownLatch::async_await_for(Duration wait, std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_await_for(wait, std::move(stop), std::move(done)); });
}

std::future<void> CountDownLatch::async_count_down() {
    return detail::future_of<void>([&](Completion<> done) { async_count_down(std::move(done)); });
}

}  // namespace holdfast
