#include "holdfast/lock_group.hpp"

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

#include "group/fan_out.hpp"
#include "group/members.hpp"
#include "hold/contained.hpp"
#include "lock/access.hpp"
#include "primitive/arguments.hpp"
#include "primitive/call.hpp"

namespace holdfast {

namespace {

// "'a', 'b'": each distinct name once, in order.
std::string names_of(const std::vector<std::reference_wrapper<Lock>>& locks) {
    std::string names;
    std::set<std::string_view> seen;
    for (const Lock& lock : locks) {
        if (!seen.insert(lock.name()).second) continue;
        if (!names.empty()) names += ", ";
        names += "'" + lock.name() + "'";
    }
    return names;
}

// A completion that throws is told, not let loose on a loop thread (hold/contained.hpp).
template <class... Results>
Completion<Results...> contained(const std::vector<std::reference_wrapper<Lock>>& locks, const std::string& description,
                                 Completion<Results...> done) {
    return detail::contained(detail::LockAccess::core(locks.front()), "lock group", description, std::move(done));
}

}  // namespace

LockGroup::LockGroup(std::vector<std::reference_wrapper<Lock>> locks, std::string noun)
    : locks_(std::move(locks)), description_(noun + " " + names_of(locks_)) {
    if (locks_.empty()) throw std::invalid_argument("holdfast: a " + noun + " needs at least one lock; `locks` is empty");
    // One key, whichever Lock object or client names it: the same server, database and name.
    using Key = std::tuple<std::string, int, std::string>;
    std::map<Key, std::size_t> seen;
    for (std::size_t i = 0; i < locks_.size(); ++i) {
        const Lock& lock = locks_[i];
        const Config& config = detail::LockAccess::client(lock).config();
        const auto [it, fresh] = seen.try_emplace(Key{config.server_name(), config.database, lock.name()}, i);
        if (!fresh)
            throw std::invalid_argument("holdfast: a " + noun + " takes each lock once, but locks[" +
                                        std::to_string(it->second) + "] and locks[" + std::to_string(i) +
                                        "] are both '" + lock.name() + "' on " + config.server_name() + " db " +
                                        std::to_string(config.database));
    }
}

LockGroup::~LockGroup() = default;

LockGroup::Owners LockGroup::current_owners() const {
    Owners owners;
    for (const Lock& lock : locks_) owners.push_back(detail::LockAccess::client(lock).current_owner());
    return owners;
}

LockGroup::Owners LockGroup::same_owner(const std::string& owner) const {
    detail::check_owner([this] { return description_; }, owner);
    return Owners(locks_.size(), owner);
}

void LockGroup::check(std::optional<Duration> wait, std::optional<Duration> lease) const {
    const auto subject = [this] { return description_; };
    detail::check_lease(subject, lease);
    if (wait) detail::check_wait(subject, *wait);
}

// Blocking on any member's loop thread would wait for that very thread.
detail::Transport& LockGroup::blocking_transport() const {
    for (const Lock& lock : locks_) detail::refuse_loop_thread(detail::LockAccess::core(lock).transport);
    return detail::LockAccess::core(locks_.front()).transport;
}

bool LockGroup::acquire_blocking(std::optional<Duration> wait, std::optional<Duration> lease, std::stop_token stop) {
    check(wait, lease);
    return detail::block<bool>(blocking_transport(), [&](Acquired done) {
        acquire(current_owners(), wait, lease, std::move(stop), std::move(done));
    });
}

void LockGroup::lock() { acquire_blocking(std::nullopt, std::nullopt); }

void LockGroup::lock(Duration lease) { acquire_blocking(std::nullopt, lease); }

bool LockGroup::lock(std::stop_token stop) { return acquire_blocking(std::nullopt, std::nullopt, std::move(stop)); }

bool LockGroup::try_lock() { return acquire_blocking(Duration::zero(), std::nullopt); }

bool LockGroup::try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop) {
    return acquire_blocking(wait, lease, std::move(stop));
}

void LockGroup::unlock() {
    // The members' releases report their own failures.
    detail::block<bool>(blocking_transport(), [&](auto done) {
        start_release(current_owners(), [done = std::move(done)](std::exception_ptr) { done(nullptr, true); });
    });
}

void LockGroup::release() {
    detail::block<bool>(blocking_transport(), [&](auto done) {
        start_release(current_owners(), [done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

std::stop_token LockGroup::lease_lost_token() const { return lost(current_owners()); }

std::stop_token LockGroup::lease_lost_token(const std::string& owner) const { return lost(same_owner(owner)); }

void LockGroup::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease, std::stop_token stop,
                               Completion<bool> done) {
    check(wait, lease);
    acquire(same_owner(owner), wait, lease, std::move(stop), contained(locks_, description_, std::move(done)));
}

void LockGroup::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop,
                           Completion<bool> done) {
    check(std::nullopt, lease);
    acquire(same_owner(owner), std::nullopt, lease, std::move(stop), contained(locks_, description_, std::move(done)));
}

void LockGroup::async_release(std::string owner, Completion<> done) {
    start_release(same_owner(owner), contained(locks_, description_, std::move(done)));
}


// Each lock's hold count for its owner, all asked at once. Held once enough
// say so; not held once too many say not (or cannot answer) for the rest to
// make it; otherwise the first error, since the answers cannot decide.
void LockGroup::ask_held(Owners owners, Completion<bool> done) const {
    struct Answer {
        std::exception_ptr error;
        bool held = false;
    };
    const std::size_t n = locks_.size(), needed = holds_needed();
    const auto held = [](const Answer& a) { return !a.error && a.held; };
    detail::fan_out<Answer>(
        n, detail::every_member(n),
        [this, owners = std::move(owners)](std::size_t i, std::function<void(Answer)> report) {
            locks_[i].get().async_hold_count(owners[i], [report](std::exception_ptr error, std::int64_t count) {
                report({std::move(error), count > 0});
            });
        },
        [n, needed, held](const detail::Tally<Answer>& tally) {
            return tally.count(held) >= needed || n - tally.count([&](const Answer& a) { return !held(a); }) < needed;
        },
        [needed, held, done = std::move(done)](detail::Tally<Answer> tally) {
            const std::size_t yes = tally.count(held), no = tally.count([](const Answer& a) { return !a.error && !a.held; });
            if (yes >= needed) return done(nullptr, true);
            if (tally.outcomes.size() - no < needed) return done(nullptr, false);
            for (const auto& answer : tally.outcomes)
                if (answer && answer->error) return done(answer->error, false);
            done(nullptr, false);
        });
}

void LockGroup::async_is_held_by(std::string owner, Completion<bool> done) const {
    ask_held(same_owner(owner), contained(locks_, description_, std::move(done)));
}

std::future<bool> LockGroup::async_is_held_by(std::string owner) const {
    return detail::future_of<bool>([&](Completion<bool> done) { async_is_held_by(std::move(owner), std::move(done)); });
}

bool LockGroup::is_held_by(const std::string& owner) const {
    return detail::block<bool>(blocking_transport(), [&](Completion<bool> done) { async_is_held_by(owner, std::move(done)); });
}

bool LockGroup::is_held_by_current_thread() const {
    return detail::block<bool>(blocking_transport(), [&](Completion<bool> done) {
        ask_held(current_owners(), contained(locks_, description_, std::move(done)));
    });
}

std::future<bool> LockGroup::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease,
                                            std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_lock(std::move(owner), wait, lease, std::move(stop), std::move(done)); });
}

std::future<bool> LockGroup::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_lock(std::move(owner), lease, std::move(stop), std::move(done)); });
}

std::future<void> LockGroup::async_release(std::string owner) {
    return detail::future_of<void>([&](Completion<> done) { async_release(std::move(owner), std::move(done)); });
}

}  // namespace holdfast
