#include "holdfast/multi_value_lock.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/quoted.hpp"
#include "core/client_core.hpp"
#include "hold/contained.hpp"
#include "hold/hold.hpp"
#include "holdfast_scripts.hpp"
#include "multi_value_lock/field.hpp"
#include "primitive/arguments.hpp"
#include "primitive/call.hpp"
#include "primitive/names.hpp"
#include "primitive/one_slot.hpp"
#include "primitive/script_call.hpp"

namespace holdfast {

namespace {

using detail::Attempt;
using detail::Failure;
using detail::Reply;

constexpr std::string_view noun = "multi-value lock";

// The group's channel and the command that publishes on it, built by each
// step from the hold it is given: an operation keeps no copy of its own.
struct Channel {
    Channel(detail::ClientCore& core, const std::string& group)
        : name(detail::lock_channel(group)), publish(core.transport.publish_command(group, name)) {}
    std::string name;
    std::string_view publish;
};

// The scripts' reply to an attempt: nil taken, else ms until the values'
// other holders' leases end. A refusal says nothing of waiters for other
// sets, so a wake-up that led to it goes on to them (pass_on).
void send_attempt(detail::ClientCore& core, const detail::HoldId& hold, const std::string& lease_ms,
             std::function<void(Attempt)> report) {
    const Channel channel(core, hold.key);
    detail::eval_reporting(
        core.transport, scripts::multi_value_lock_acquire, {hold.key}, {lease_ms, hold.field, channel.publish, channel.name},
        hold.key, "lock", [report = std::move(report)](Failure error, Reply reply) {
            if (error) return report(Attempt::failed(std::move(error)));
            if (reply.is_nil()) return report(Attempt::acquired());
            report(Attempt::refused(reply.integer, /*pass_on=*/true));
        },
        noun);
}

// The fields a hold's name `<fields>:<owner>` lists.
std::vector<std::string_view> fields_in(std::string_view hold, std::size_t owner_size) {
    std::vector<std::string_view> fields;
    for (std::size_t at = 0; at + 22 + 1 + owner_size <= hold.size(); at += 22) fields.push_back(hold.substr(at, 22));
    return fields;
}

// The owner's sets of `group` the ledger still counts, with their counts.
std::vector<std::pair<std::string, std::int64_t>> sets_of(detail::ClientCore& core, const std::string& group,
                                                          const std::string& owner) {
    return core.group_sets.of(group, owner,
                              [&core, &group](const std::string& name) { return core.holds.known(group, name); });
}

// What release.lua keeps of the owner's holds, as its callers know them: of
// this set (after this release, when `releases_known` it gives back one the
// ledger counts), and per value of the set, in all the owner's sets of the
// group. The server's holds beyond these (a set whose release was refused,
// re-entered by another set; an acquire whose reply was lost) go with this
// release, as a Lock's last release gives back the rest.
std::vector<std::string> kept_counts(detail::ClientCore& core, const detail::HoldId& hold, bool releases_known) {
    const std::int64_t known = core.holds.known(hold.key, hold.counted_as());
    const std::int64_t own = releases_known ? std::max<std::int64_t>(known - 1, 0) : known;
    const auto fields = fields_in(hold.field, hold.owner.size());
    std::vector<std::int64_t> kept(fields.size(), own);
    for (const auto& [name, count] : sets_of(core, hold.key, hold.owner)) {
        if (name == hold.field) continue;
        const auto theirs = fields_in(name, hold.owner.size());
        for (std::size_t i = 0; i < fields.size(); ++i)
            if (std::find(theirs.begin(), theirs.end(), fields[i]) != theirs.end()) kept[i] += count;
    }
    std::vector<std::string> counts{std::to_string(own)};
    for (const std::int64_t count : kept) counts.push_back(std::to_string(count));
    return counts;
}

void send_release(detail::ClientCore& core, const detail::HoldId& hold, const std::string& lease_ms,
                  bool releases_known, detail::ReplyHandler done) {
    const Channel channel(core, hold.key);
    std::vector<std::string> args{std::string(detail::unlock_all_message), lease_ms, hold.field,
                                  std::string(channel.publish), channel.name};
    for (std::string& count : kept_counts(core, hold, releases_known)) args.push_back(std::move(count));
    const std::string_view key = hold.key;
    detail::eval_reporting(core.transport, scripts::multi_value_lock_release, std::span(&key, 1),
                           detail::views_of(args), hold.key, "unlock", std::move(done), noun);
}

}  // namespace

std::string MultiValueLock::field_of(std::string_view value) { return detail::value_field(value); }

MultiValueLock::MultiValueLock(Client& client, std::string group, const std::vector<std::string>& values)
    : client_(&client), group_(std::move(group)) {
    if (group_.empty()) throw std::invalid_argument("holdfast: a multi-value lock's group must not be empty");
    if (values.empty())
        throw std::invalid_argument("holdfast: multi-value lock " + detail::quoted(group_) +
                                    " needs at least one value to hold");
    group_ = detail::mapped_name(client.config().key_prefix, std::move(group_));
    fields_ = detail::value_fields(values);
    detail::check_one_slot(client.config(), noun, group_, {group_, detail::lock_channel(group_)});
}

std::string MultiValueLock::hold_name(const std::string& owner) const {
    std::string name;
    name.reserve(fields_.size() * 22 + 1 + owner.size());
    for (const std::string& field : fields_) name += field;
    return name + ':' + owner;
}

void MultiValueLock::acquire(std::string owner, std::optional<Duration> wait, std::optional<Duration> lease,
                             std::stop_token stop, Completion<bool> done) {
    const auto subject = [this] { return std::string(noun) + " " + detail::quoted(group_); };
    detail::check_owner(subject, owner);
    detail::check_lease(subject, lease);
    if (wait) detail::check_wait(subject, *wait);
    auto& core = detail::core_of(*client_);
    const Duration ttl = lease.value_or(core.watchdog.lease());
    detail::AcquireSpec spec;
    spec.hold = {noun, group_, hold_name(owner), std::move(owner)};
    spec.request.channel = detail::lock_channel(group_);
    spec.request.attempt = [&core, lease_ms = std::to_string(ttl.count())](const detail::HoldId& hold,
                                                                          std::function<void(Attempt)> report) {
        send_attempt(core, hold, lease_ms, std::move(report));
    };
    spec.request.deadline = detail::deadline_after(wait);
    spec.request.stop = std::move(stop);
    spec.request.give_back = [&core](const detail::HoldId& hold, std::function<void()> then) {
        send_release(core, hold, "0", /*releases_known=*/false, [then = std::move(then)](Failure, Reply) { then(); });
    };
    spec.keeping = {true, true, lease ? nullptr : &scripts::multi_value_lock_renew, ttl};
    spec.gives_back_unknown = true;
    // Indexed for the owner's releases of other sets of the group (kept_counts).
    auto indexed = [&core, group = group_, name = spec.hold.field, owner = spec.hold.owner,
                    done = std::move(done)](Failure error, bool acquired, std::int64_t) {
        if (acquired) core.group_sets.taken(group, owner, name);
        done(error, acquired);
    };
    detail::acquire_hold(core, std::move(spec), std::move(indexed));
}

bool MultiValueLock::acquire_blocking(std::optional<Duration> wait, std::optional<Duration> lease,
                                      std::stop_token stop) {
    return detail::block<bool>(detail::core_of(*client_).transport, [&](Completion<bool> done) {
        acquire(client_->current_owner(), wait, lease, std::move(stop), std::move(done));
    });
}

void MultiValueLock::lock() { acquire_blocking(std::nullopt, std::nullopt, {}); }

void MultiValueLock::lock(Duration lease) { acquire_blocking(std::nullopt, lease, {}); }

bool MultiValueLock::lock(std::stop_token stop) { return acquire_blocking(std::nullopt, std::nullopt, std::move(stop)); }

bool MultiValueLock::lock_ms(Duration lease, std::stop_token stop) {
    return acquire_blocking(std::nullopt, lease, std::move(stop));
}

bool MultiValueLock::try_lock() { return acquire_blocking(Duration::zero(), std::nullopt, {}); }

bool MultiValueLock::try_lock_for_ms(Duration wait, std::optional<Duration> lease, std::stop_token stop) {
    return acquire_blocking(wait, lease, std::move(stop));
}

void MultiValueLock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease,
                                    std::stop_token stop, Completion<bool> done) {
    acquire(std::move(owner), wait, lease, std::move(stop), std::move(done));
}

void MultiValueLock::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop,
                                Completion<bool> done) {
    acquire(std::move(owner), std::nullopt, lease, std::move(stop), std::move(done));
}

void MultiValueLock::async_release(std::string owner, Completion<> done) {
    detail::check_owner([this] { return std::string(noun) + " " + detail::quoted(group_); }, owner);
    auto& core = detail::core_of(*client_);
    detail::ReleaseSpec spec;
    spec.hold = {noun, group_, hold_name(owner), std::move(owner)};
    spec.send = [&core](const detail::HoldId& hold, const std::string& lease_ms, detail::ReplyHandler sent) {
        send_release(core, hold, lease_ms, /*releases_known=*/true, std::move(sent));
    };
    // The index forgets the sets the ledger no longer counts (this one, when it ended).
    auto unindexed = [&core, group = group_, owner = spec.hold.owner,
                      done = std::move(done)](detail::ReleaseOutcome outcome) {
        sets_of(core, group, owner);
        done(outcome.error);
    };
    detail::release_hold(core, std::move(spec), std::move(unindexed));
}

void MultiValueLock::unlock() {
    // Reported by the pipeline already (event, metric, lease-lost token).
    detail::block<bool>(detail::core_of(*client_).transport, [&](Completion<bool> done) {
        async_release(client_->current_owner(), [done = std::move(done)](std::exception_ptr) { done(nullptr, true); });
    });
}

void MultiValueLock::release() {
    detail::block<bool>(detail::core_of(*client_).transport, [&](Completion<bool> done) {
        async_release(client_->current_owner(),
                     [done = std::move(done)](std::exception_ptr error) { done(std::move(error), true); });
    });
}

void MultiValueLock::async_force_unlock(Completion<bool> done) {
    auto& core = detail::core_of(*client_);
    const Channel channel(core, group_);
    detail::eval_reporting(core.transport, scripts::multi_value_lock_force_unlock, {group_},
                           {detail::unlock_all_message, channel.publish, channel.name, hold_name("")}, group_,
                           "force-unlock",
                           [done = detail::contained(core, noun, group_, std::move(done))](Failure error, Reply reply) {
                               done(error, !error && reply.integer == 1);
                           },
                           noun);
}

// One read-only script: {locked, holds of `owner`} (multi_value_lock/query.lua).
void MultiValueLock::async_is_locked(Completion<bool> done) const {
    auto& core = detail::core_of(*client_);
    detail::eval_reporting(core.transport, scripts::multi_value_lock_query, {group_}, {hold_name("")}, group_, "query",
                           [done = detail::contained(core, noun, group_, std::move(done))](Failure error, Reply reply) {
                               done(error, !error && reply.elements.size() == 2 && reply.elements[0].integer == 1);
                           },
                           noun);
}

void MultiValueLock::async_hold_count(std::string owner, Completion<std::int64_t> done) const {
    auto& core = detail::core_of(*client_);
    detail::eval_reporting(
        core.transport, scripts::multi_value_lock_query, {group_}, {hold_name(owner)}, group_, "query",
        [done = detail::contained(core, noun, group_, std::move(done))](Failure error, Reply reply) {
            done(error, !error && reply.elements.size() == 2 ? reply.elements[1].integer : 0);
        },
        noun);
}

bool MultiValueLock::force_unlock() {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { async_force_unlock(std::move(done)); });
}

bool MultiValueLock::is_locked() const {
    return detail::block<bool>(detail::core_of(*client_).transport,
                               [&](Completion<bool> done) { async_is_locked(std::move(done)); });
}

bool MultiValueLock::is_held_by_current_thread() const { return hold_count() > 0; }

bool MultiValueLock::is_held_by(const std::string& owner) const { return hold_count(owner) > 0; }

std::int64_t MultiValueLock::hold_count() const { return hold_count(client_->current_owner()); }

std::int64_t MultiValueLock::hold_count(const std::string& owner) const {
    return detail::block<std::int64_t>(detail::core_of(*client_).transport, [&](Completion<std::int64_t> done) {
        async_hold_count(owner, std::move(done));
    });
}

std::stop_token MultiValueLock::lease_lost_token() const { return lease_lost_token(client_->current_owner()); }

std::stop_token MultiValueLock::lease_lost_token(const std::string& owner) const {
    return detail::core_of(*client_).watchdog.lease_lost(group_, hold_name(owner));
}

std::future<bool> MultiValueLock::async_try_lock(std::string owner, Duration wait, std::optional<Duration> lease,
                                                 std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_try_lock(std::move(owner), wait, lease, std::move(stop), std::move(done)); });
}

std::future<bool> MultiValueLock::async_lock(std::string owner, std::optional<Duration> lease, std::stop_token stop) {
    return detail::future_of<bool>(
        [&](Completion<bool> done) { async_lock(std::move(owner), lease, std::move(stop), std::move(done)); });
}

std::future<void> MultiValueLock::async_release(std::string owner) {
    return detail::future_of<void>([&](Completion<> done) { async_release(std::move(owner), std::move(done)); });
}

std::future<bool> MultiValueLock::async_force_unlock() {
    return detail::future_of<bool>([&](Completion<bool> done) { async_force_unlock(std::move(done)); });
}

std::future<bool> MultiValueLock::async_is_locked() const {
    return detail::future_of<bool>([&](Completion<bool> done) { async_is_locked(std::move(done)); });
}

std::future<std::int64_t> MultiValueLock::async_hold_count(std::string owner) const {
    return detail::future_of<std::int64_t>(
        [&](Completion<std::int64_t> done) { async_hold_count(std::move(owner), std::move(done)); });
}

}  // namespace holdfast
