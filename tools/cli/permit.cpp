// holdfast run --semaphore N: one permit of a permit-expirable semaphore
// (Redisson's RPermitExpirableSemaphore layout: the count under NAME, the
// permits taken in {NAME}:timeout), its lease renewed while the command runs,
// so that the permit of a holdfast killed with -9 comes back within one lease.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cli/acquire.hpp"
#include "cli/duration.hpp"
#include "cli/hold.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"
#include "watchdog/lease.hpp"

namespace holdfast::cli {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Keeps the lease of a permit from ending while the command runs: confirmed
// once at the start, then (unless --lease asked for a fixed one) renewed
// every third of it. The local deadline, as for a lock, is the send time of
// the last confirmed renewal plus the lease, less the library's safety margin.
//
// Thread safety: deadline() and lost() from any thread; stop() from one.
class PermitLease {
public:
    PermitLease(PermitExpirableSemaphore& semaphore, std::string id, Duration lease, bool renewed, bool verbose)
        : semaphore_(semaphore), id_(std::move(id)), lease_(lease), verbose_(verbose) {
        // Throws when it cannot be confirmed: then no deadline is known.
        if (confirm() && renewed) thread_ = std::jthread([this](std::stop_token stop) { renew(stop); });
    }
    PermitLease(const PermitLease&) = delete;
    PermitLease& operator=(const PermitLease&) = delete;

    std::stop_token lost() const { return lost_.get_token(); }
    Clock::time_point deadline() const { return Clock::time_point(Clock::duration(deadline_.load())); }
    /// Ends the renewals, waiting for one in flight.
    void stop() {
        thread_.request_stop();
        if (thread_.joinable()) thread_.join();
    }

private:
    // Moves the lease end to `lease_` from now; false (and lost) if the permit is gone.
    bool confirm() {
        const auto sent = Clock::now();
        if (!semaphore_.update_lease(id_, lease_)) {
            lost_.request_stop();
            return false;
        }
        deadline_.store((sent + lease_ - detail::lease_margin(lease_)).time_since_epoch().count());
        return true;
    }

    void renew(std::stop_token stop) {
        std::mutex mutex;
        std::condition_variable_any never_notified;
        auto next = Clock::now() + lease_ / 3;
        for (;;) {
            {
                std::unique_lock lock(mutex);
                never_notified.wait_until(lock, stop, next, [] { return false; });
            }
            if (stop.stop_requested()) return;
            const auto sent = Clock::now();
            try {
                if (!confirm()) return;
                next = sent + lease_ / 3;
            } catch (const std::exception& e) {
                if (verbose_) warn("could not renew the permit of the semaphore " + detail::quoted(semaphore_.name()) +
                                   ": " + describe(e) + "; trying again");
                next = Clock::now() + std::max<Duration>(lease_ / 10, 1ms);
            }
        }
    }

    PermitExpirableSemaphore& semaphore_;
    const std::string id_;
    const Duration lease_;
    const bool verbose_;
    std::stop_source lost_;
    std::atomic<Clock::rep> deadline_{0};
    std::jthread thread_;  // last: stopped and joined before the members it uses go
};

Acquisition acquire_permit(PermitExpirableSemaphore& semaphore, Duration lease, const RunOptions& options,
                           Events& events) {
    using Taken = std::optional<std::string>;
    std::stop_source stop;
    const auto taken = future_of<Taken>([&](Completion<Taken> done) {
        if (options.wait) semaphore.async_try_acquire(*options.wait, lease, stop.get_token(), std::move(done));
        else semaphore.async_acquire(lease, stop.get_token(), std::move(done));
    });
    const std::function<void(const Acquisition&)> give_back = [&](const Acquisition& late) {
        semaphore.try_release(late.permit);
    };
    return await(taken, stop, give_back, events);
}

void release(PermitExpirableSemaphore& semaphore, PermitLease& renewal, const std::string& id) {
    renewal.stop();
    const std::string named = "the permit of the semaphore " + detail::quoted(semaphore.name());
    try {
        if (!semaphore.try_release(id))
            warn(named + " was no longer held when the command exited (its lease ran out, or unlock --force took "
                         "it back); nothing to give back");
    } catch (const std::exception& e) {
        warn("could not give back " + named + ": " + describe(e) + "; it comes back by itself when its lease ends");
    }
}

}  // namespace

int run_with_permit(Client& client, const Config& config, bool verbose, const RunOptions& options, Events& events,
                    const std::vector<int>& inherited) {
    PermitExpirableSemaphore semaphore(client, options.name);
    semaphore.try_set_permits(*options.permits);
    const Duration lease = options.lease.value_or(config.lock_watchdog_timeout);
    const Acquisition acquisition = acquire_permit(semaphore, lease, options, events);
    if (const auto status = unless_acquired(acquisition, options, "semaphore")) return *status;
    const std::string& id = acquisition.permit;
    std::optional<PermitLease> renewal;
    try {
        renewal.emplace(semaphore, id, lease, !options.lease, verbose);
    } catch (const std::exception&) {
        try {
            semaphore.try_release(id);
        } catch (const std::exception&) {
            // It comes back by itself when its lease ends; the first error is the one to report.
        }
        throw;
    }
    const std::string named = "the permit of the semaphore " + detail::quoted(options.name);
    const std::string why_lost = options.lease ? "the " + format_duration(*options.lease) + " lease on " + named +
                                                     " is running out"
                                               : "lost " + named +
                                                     " (no renewal confirmed for a whole lease, or its lease "
                                                     "ended, or unlock --force took it back)";
    const Hold hold{id,       std::nullopt, renewal->lost(), [&] { return std::optional(renewal->deadline()); },
                    why_lost, [&] { release(semaphore, *renewal, id); }};
    return hold_and_run(hold, options, events, inherited);
}

}  // namespace holdfast::cli
