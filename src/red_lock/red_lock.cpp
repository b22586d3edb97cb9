#include "holdfast/red_lock.hpp"

#include <map>
#include <stdexcept>

#include "group/fan_out.hpp"
#include "group/members.hpp"
#include "errors/failure.hpp"
#include "holdfast/errors.hpp"
#include "lock/access.hpp"
#include "primitive/acquire.hpp"
#include "primitive/arguments.hpp"
#include "red_lock/state.hpp"

namespace holdfast {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Attempt;
using detail::LockAccess;
using detail::RedLockState;
using detail::Tally;
using detail::Took;

using Failures = std::vector<std::pair<std::size_t, detail::Failure>>;

bool taken(const Took& took) { return !took.error && took.acquired; }

// One round of the algorithm: try once on every server at once, judged as soon
// as a quorum is taken or out of reach. `report` gets the Attempt for the
// acquire skeleton and, when taken, the time the hold is valid until.
void round(const std::shared_ptr<RedLockState>& state, const std::vector<std::string>& owners,
           std::chrono::milliseconds lease, std::function<void(Attempt, Clock::time_point)> report) {
    const auto start = Clock::now();
    const auto& locks = state->locks();
    const std::size_t n = locks.size(), q = state->quorum();
    detail::fan_out<Took>(
        n, detail::every_member(n),
        [&](std::size_t i, std::function<void(Took)> took) {
            LockAccess::acquire(*locks[i], owners[i], std::chrono::milliseconds::zero(), lease,
                                [took = std::move(took)](detail::Failure error, bool acquired, std::int64_t) {
                                    took({std::move(error), acquired});
                                },
                                LockAccess::Watch::caller);  // the RedLock renews and judges its members itself
        },
        [n, q](const Tally<Took>& tally) {
            return tally.count(taken) >= q || tally.count([](const Took& t) { return !taken(t); }) > n - q;
        },
        [state, owners, q, report = std::move(report),
         until = start + lease - detail::drift_of(lease)](const Tally<Took>& tally) {
            if (tally.count(taken) >= q && Clock::now() < until) return report(Attempt::acquired(), until);
            // Failed: give back whatever may be ours: taken, failed (it may
            // have run), or not answered yet (its release queues behind it).
            std::vector<std::size_t> taken_here, unsure;
            Failures failures;
            for (std::size_t i = 0; i < tally.outcomes.size(); ++i) {
                const auto& outcome = tally.outcomes[i];
                if (outcome && taken(*outcome)) taken_here.push_back(i);
                else if (!outcome || outcome->error) unsure.push_back(i);
                if (outcome && outcome->error) failures.emplace_back(i, outcome->error);
            }
            state->release_on(owners, unsure, nullptr);
            const std::size_t n = tally.outcomes.size();
            Attempt attempt = failures.size() > n - q
                                  ? Attempt::failed(detail::quorum_error(state->description(), "lock",
                                                                         state->locks(), failures))
                                  : Attempt::refused(-1);  // -1: back off, no TTL to go by
            // Reported once the servers that granted the lock have it back.
            state->release_on(owners, taken_here, [report, attempt] { report(attempt, {}); });
        });
}

}  // namespace

RedLock::RedLock(std::vector<std::reference_wrapper<Lock>> locks) : LockGroup(std::move(locks), "RedLock") {
    std::map<std::string, std::size_t> servers;
    for (std::size_t i = 0; i < this->locks().size(); ++i) {
        const std::string server = LockAccess::client(this->locks()[i]).config().server_name();
        const auto [it, fresh] = servers.try_emplace(server, i);
        if (!fresh)
            throw std::invalid_argument("holdfast: a RedLock needs independent servers, but locks[" +
                                        std::to_string(it->second) + "] and locks[" + std::to_string(i) +
                                        "] are both on " + server);
    }
    state_ = std::make_shared<RedLockState>(detail::members_of(this->locks()), description());
}

RedLock::~RedLock() { state_->stop(); }

std::size_t RedLock::quorum() const { return state_->quorum(); }

void RedLock::acquire(Owners owners, std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop,
                      Acquired done) {
    // Its members would refuse every round (not reentrant): say so instead of polling forever.
    if (state_->held_for_good(owners)) {
        if (wait && *wait == Duration::zero()) return done(nullptr, false);
        const std::string why = "holdfast: " + description() + " is already held by owner " + owners.front() +
                                " and its locks are not reentrant, so waiting for it would wait for itself";
        return done(detail::Failure(errc::deadlock, why), false);
    }
    const Duration used = lease.value_or(state_->watchdog_lease());
    auto valid_until = std::make_shared<Clock::time_point>();
    detail::Transport& home = state_->home();
    detail::AcquireRequest request;
    request.backoff = detail::Backoff{};
    request.deadline = detail::deadline_after(wait);
    request.stop = std::move(stop);
    request.attempt = [state = state_, owners, used, valid_until, &home](const detail::HoldId&,
                                                                        std::function<void(Attempt)> report) {
        // The skeleton runs on the home loop; a round ends on any member's. The
        // report is moved out there, so no closure left on another loop keeps
        // the operation (and its timer on the home loop) alive.
        auto slot = std::make_shared<std::function<void(Attempt)>>(std::move(report));
        round(state, owners, used, [valid_until, &home, slot](Attempt attempt, Clock::time_point until) {
            *valid_until = until;
            home.run_on_loop([slot, attempt] {
                auto report = std::move(*slot);
                report(attempt);
            });
        });
    };
    // A stop that lands while a round is in flight: what the round took goes
    // back (members it did not take refuse, harmlessly), on the home loop.
    request.give_back = [state = state_, owners, &home](const detail::HoldId&, std::function<void()> then) {
        const auto& locks = state->locks();
        detail::fan_out<detail::Failure>(
            locks.size(), detail::every_member(locks.size()),
            [&locks, &owners](std::size_t i, std::function<void(detail::Failure)> report) {
                LockAccess::release(*locks[i], owners[i], std::move(report));
            },
            [](const Tally<detail::Failure>&) { return false; },
            [&home, then = std::move(then)](const Tally<detail::Failure>&) { home.run_on_loop(then); });
    };
    detail::acquire(home, state_->home_queues(), std::move(request),
                    [state = state_, owners, used, renewed = !lease, valid_until, done = std::move(done)](
                        detail::Failure error, bool acquired, std::int64_t) {
                        if (acquired) state->add_hold(owners, used, renewed, *valid_until);
                        done(std::move(error), acquired);
                    });
}

void RedLock::start_release(Owners owners, Released done) {
    const bool was_lost = state_->drop_hold(owners);
    const auto& locks = state_->locks();
    const std::size_t n = locks.size(), q = state_->quorum();
    const auto ok = [](const detail::Failure& e) { return !e; };
    detail::fan_out<detail::Failure>(
        n, detail::every_member(n),
        [&](std::size_t i, std::function<void(detail::Failure)> report) {
            LockAccess::release(*locks[i], owners[i], std::move(report));
        },
        [n, q, ok](const Tally<detail::Failure>& tally) {
            return tally.count(ok) >= q || tally.count([](const detail::Failure& e) { return !!e; }) > n - q;
        },
        [state = state_, owners, was_lost, q, ok, done = std::move(done)](const Tally<detail::Failure>& tally) {
            if (was_lost)
                return done(detail::Failure(errc::not_owner,
                                            "holdfast: cannot unlock " + state->description() + ": owner " +
                                                owners.front() +
                                                " lost it (its validity ran out before a renewal round reached " +
                                                std::to_string(q) +
                                                " servers, or with its explicit lease); what was left is released"));
            Failures failures;
            for (std::size_t i = 0; i < tally.outcomes.size(); ++i)
                if (tally.outcomes[i] && *tally.outcomes[i]) failures.emplace_back(i, *tally.outcomes[i]);
            if (tally.count(ok) >= q) return done(nullptr);
            done(detail::quorum_error(state->description(), "unlock", state->locks(), failures));
        });
}

std::stop_token RedLock::lost(const Owners& owners) const { return state_->lost(owners); }

std::optional<RedLock::Duration> RedLock::validity() const { return state_->validity(current_owners()); }

std::optional<RedLock::Duration> RedLock::validity(const std::string& owner) const {
    return state_->validity(same_owner(owner));
}

}  // namespace holdfast
