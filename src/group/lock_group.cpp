#include "holdfast/lock_group.hpp"

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

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

void LockGroup::async_unlock(std::string owner, Completion<> done) {
    start_release(same_owner(owner), contained(locks_, description_, std::move(done)));
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

std::future<void> LockGroup::async_unlock(std::string owner) {
    return detail::future_of<void>([&](Completion<> done) { async_unlock(std::move(owner), std::move(done)); });
}

}  // namespace holdfast
