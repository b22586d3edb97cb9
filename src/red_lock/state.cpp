#include "red_lock/state.hpp"

#include "group/fan_out.hpp"
#include "group/members.hpp"
#include "lock/access.hpp"

namespace holdfast::detail {

namespace {

using Failures = std::vector<std::pair<std::size_t, Failure>>;

template <class Pred>
bool all_are(const Failures& failures, Pred pred) {
    for (const auto& [i, error] : failures)
        if (!pred(error.code())) return false;
    return true;
}

}  // namespace

Failure quorum_error(const std::string& description, std::string_view verb, const std::vector<Lock*>& locks,
                     const Failures& failures) {
    std::string message = "holdfast: cannot " + std::string(verb) + " " + description + ": a quorum needs " +
                          std::to_string(quorum_of(locks.size())) + " of " + std::to_string(locks.size()) +
                          " servers, and " + std::to_string(failures.size()) + " failed:";
    for (const auto& [i, error] : failures)
        message += " [" + LockAccess::client(*locks[i]).config().server_name() + ": " + error.message() + "]";
    if (failures.empty()) return {errc::server_error, message};
    const Failure& first = failures.front().second;
    if (all_are(failures, [&first](const std::error_code& code) { return code == first.code(); }))
        return first.saying(message);
    if (all_are(failures, is_connection)) return {errc::connection_lost, message};
    if (all_are(failures, is_not_owner)) return {errc::not_owner, message};
    for (const auto& [i, error] : failures)
        if (is_server(error.code())) return error.saying(message);
    return {errc::server_error, message};
}

RedLockState::RedLockState(std::vector<Lock*> locks, std::string description)
    : locks_(std::move(locks)), description_(std::move(description)) {}

Transport& RedLockState::home() const { return LockAccess::core(*locks_.front()).transport; }

WaitQueues& RedLockState::home_queues() const { return LockAccess::core(*locks_.front()).wait_queues; }

RedLockState::Duration RedLockState::watchdog_lease() const {
    return LockAccess::core(*locks_.front()).watchdog.lease();
}

void RedLockState::add_hold(const Owners& owners, Duration lease, bool renewed, Clock::time_point until) {
    std::lock_guard lock(mutex_);
    Hold& hold = holds_[owners_key(owners)];
    if (hold.count == 0 || hold.is_lost) {
        hold = Hold{};
        hold.owners = owners;
        hold.generation = ++next_generation_;
        hold.valid_until = until;
    }
    ++hold.count;
    hold.valid_until = std::max(hold.valid_until, until);
    hold.lease = std::max(hold.lease, lease);
    hold.renewed = hold.renewed || renewed;
    if (stopped_) return;
    if (!armed_) next_renewal_ = Clock::now() + watchdog_lease() / 3;
    armed_ = true;
    // Re-armed for every hold: its validity may end before the timer fires.
    home().run_on_loop([self = shared_from_this()] { self->arm(); });
}

bool RedLockState::drop_hold(const Owners& owners) {
    std::lock_guard lock(mutex_);
    auto it = holds_.find(owners_key(owners));
    if (it == holds_.end()) return false;
    const bool was_lost = it->second.is_lost;
    if (was_lost || --it->second.count == 0) holds_.erase(it);
    return was_lost;
}

std::stop_token RedLockState::lost(const Owners& owners) const {
    std::lock_guard lock(mutex_);
    auto it = holds_.find(owners_key(owners));
    if (it == holds_.end()) return {};
    return it->second.lost.get_token();
}

std::optional<RedLockState::Duration> RedLockState::validity(const Owners& owners) const {
    std::lock_guard lock(mutex_);
    auto it = holds_.find(owners_key(owners));
    if (it == holds_.end() || it->second.is_lost) return std::nullopt;
    const auto left = std::chrono::floor<Duration>(it->second.valid_until - Clock::now());
    if (left <= Duration::zero()) return std::nullopt;
    return left;
}

bool RedLockState::held_for_good(const Owners& owners) const {
    {
        std::lock_guard lock(mutex_);
        auto it = holds_.find(owners_key(owners));
        if (it == holds_.end() || it->second.is_lost) return false;
    }
    for (const Lock* lock : locks_)
        if (!LockAccess::kind(*lock).reentrant()) return true;
    return false;
}

void RedLockState::release_on(const Owners& owners, const std::vector<std::size_t>& members,
                              std::function<void()> then) {
    fan_out<Failure>(
        locks_.size(), members,
        [&](std::size_t i, std::function<void(Failure)> report) {
            LockAccess::release(*locks_[i], owners[i], std::move(report));
        },
        [](const Tally<Failure>&) { return false; },
        [then = std::move(then)](const Tally<Failure>&) {
            if (then) then();
        });
}

void RedLockState::stop() {
    home().run_on_loop([self = shared_from_this()] {
        std::lock_guard lock(self->mutex_);
        self->stopped_ = true;
        if (auto timer = self->timer_.lock()) timer->cancel();
    });
}

// On the home loop: the timer fires at the next renewal or the earliest end
// of a hold's validity, whichever comes first.
void RedLockState::arm() {
    std::optional<Clock::time_point> wake;
    {
        std::lock_guard lock(mutex_);
        if (stopped_) return;
        for (const auto& [key, hold] : holds_) {
            if (hold.is_lost) continue;
            wake = std::min(wake.value_or(hold.valid_until), hold.valid_until);
            if (hold.renewed) wake = std::min(*wake, next_renewal_);
        }
        if (!wake) {
            armed_ = false;  // the next hold re-arms
            return;
        }
    }
    if (auto previous = timer_.lock()) previous->cancel();
    auto timer = std::make_shared<asio::steady_timer>(home().loop(), *wake);
    timer_ = timer;
    timer->async_wait([self = shared_from_this(), timer](asio::error_code ec) {
        if (!ec) self->tick();
    });
}

// On the home loop: holds whose validity ended are lost (their holder told
// at once, not when a late round answers); then, when due, one renewal round
// per renewed hold not already in one.
void RedLockState::tick() {
    struct Due {
        std::string key;
        std::uint64_t generation;
        Owners owners;
        Duration lease;
    };
    std::vector<Due> due;
    std::vector<std::stop_source> lost;
    {
        std::lock_guard lock(mutex_);
        if (stopped_) return;
        const auto now = Clock::now();
        const bool renewal_due = now >= next_renewal_;
        if (renewal_due) next_renewal_ = now + watchdog_lease() / 3;
        for (auto& [key, hold] : holds_) {
            if (hold.is_lost) continue;
            if (hold.valid_until <= now) {
                hold.is_lost = true;
                lost.push_back(hold.lost);
                continue;
            }
            if (!renewal_due || !hold.renewed || hold.renewing) continue;  // a slow round is still out
            hold.renewing = true;
            due.push_back({key, hold.generation, hold.owners, hold.lease});
        }
    }
    for (auto& source : lost) source.request_stop();  // outside the mutex: stop callbacks are user code
    for (const auto& d : due) renew(d.key, d.generation, d.owners, d.lease);
    arm();
}

void RedLockState::renew(const std::string& key, std::uint64_t generation, const Owners& owners, Duration lease) {
    const auto start = Clock::now();
    const std::string lease_ms = std::to_string(lease.count());
    const std::size_t n = locks_.size(), q = quorum();
    fan_out<bool>(
        n, every_member(n),
        [&](std::size_t i, std::function<void(bool)> report) {
            const Lock& lock = *locks_[i];
            const std::string field = LockAccess::kind(lock).hold_field(owners[i]);
            LockAccess::core(lock).transport.eval(
                LockAccess::kind(lock).renew(), {lock.name()}, {lease_ms, field},
                [report = std::move(report)](Failure error, Reply reply) {
                    report(!error && reply.is_array() && !reply.elements.empty() && reply.elements[0].integer == 1);
                });
        },
        [n, q](const Tally<bool>& tally) {
            return tally.count([](bool ok) { return ok; }) >= q || tally.count([](bool ok) { return !ok; }) > n - q;
        },
        [self = shared_from_this(), key, generation, q, until = start + lease - drift_of(lease)](const Tally<bool>& tally) {
            self->renewed(key, generation, tally.count([](bool ok) { return ok; }) >= q, until);
        });
}

void RedLockState::renewed(const std::string& key, std::uint64_t generation, bool quorum, Clock::time_point until) {
    std::stop_source lost;
    {
        std::lock_guard lock(mutex_);
        auto it = holds_.find(key);
        if (it == holds_.end() || it->second.generation != generation) return;  // unlocked meanwhile
        Hold& hold = it->second;
        hold.renewing = false;
        if (hold.is_lost) return;  // its validity ended while the round was out: told then
        if (quorum && Clock::now() < until) {
            hold.valid_until = until;
            return;
        }
        hold.is_lost = true;
        lost = hold.lost;
    }
    lost.request_stop();  // outside the mutex: stop callbacks are user code
}

}  // namespace holdfast::detail
