#include "lock/kind.hpp"

#include <array>
#include <charconv>
#include <cstddef>
#include <memory_resource>
#include <utility>

#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/reply_errors.hpp"
#include "common/quoted.hpp"
#include "primitive/names.hpp"
#include "primitive/one_slot.hpp"

namespace holdfast::detail {

LockKind::Question<bool> LockKind::is_locked(const std::string& name, const std::string& server) const {
    if (!shares_key()) return {{"EXISTS", name}, [](const Reply& reply) { return reply.integer == 1; }};
    auto read = holders(name, server);
    return {std::move(read.command), [read = std::move(read.answer)](const Reply& reply) { return !read(reply).empty(); }};
}

LockKind::Question<std::int64_t> LockKind::hold_count(const std::string& name, const std::string& owner,
                                                      const std::string& server) const {
    std::string field = hold_field(owner);
    return {{"HGET", name, field}, [name, field, server](const Reply& reply) -> std::int64_t {
                return reply.is_nil() ? 0 : hold_count_of(server, name, field, reply.str);
            }};
}

LockKind::Question<std::vector<Lock::Holder>> LockKind::holders(const std::string& name,
                                                               const std::string& server) const {
    return {{"HGETALL", name},
            [this, name, server](const Reply& reply) { return holders_in(reply.elements, server, name); }};
}

HoldId LockKind::hold_id(const std::string& name, std::string owner) const {
    HoldId id{noun(), name, {}, std::move(owner)};
    if (!field_is_owner()) id.field = hold_field(id.owner);
    return id;
}

std::vector<Lock::Holder> LockKind::holders_in(const std::vector<Reply>& hgetall, std::string_view server,
                                               const std::string& name) const {
    std::vector<Lock::Holder> result;
    for (LockField& field : lock_fields(hgetall, shares_key()))
        if (field.role == holds_as())
            result.push_back({std::move(field.owner), hold_count_of(server, name, field.name, field.value)});
    return result;
}

namespace {

// How long a release promises the free lock to the waiter it names
// (lock/handoff.lua.part): the time that waiter has to come and take it.
constexpr std::string_view promise_ms = "100";

// The lock's names: its channel and, for targeted wake-ups, its two side
// keys, or none: on a cluster, a name whose hash tag cannot hold them in its
// slot ('{}', 'a{b') keeps Redisson's wake-ups. Built on the stack by each
// step that needs them: in the step's own frame for a name of up to about 60
// characters, in one allocation for a longer one.
class LockNames {
public:
    LockNames(const ClientCore& core, std::string_view name, bool announces) {
        text_.reserve(4 * name.size() + lock_channel_prefix.size() + lock_waiters_prefix.size() +
                      lock_handoff_prefix.size() + 10);
        text_.append(name);
        append_prefixed_name(text_, lock_channel_prefix, name);
        const std::size_t channel_end = text_.size();
        std::size_t waiters_end = channel_end;
        if (announces) {
            append_lock_side_key(text_, lock_waiters_prefix, name);
            waiters_end = text_.size();
            if (share_slot(core.transport.config(), name, view(channel_end, waiters_end)))
                append_lock_side_key(text_, lock_handoff_prefix, name);
            else
                text_.resize(waiters_end = channel_end);
        }
        if (core.transport.config().topology == Topology::cluster) slot_moves_ = "1";
        name_ = view(0, name.size());
        channel_ = view(name.size(), channel_end);
        waiters_ = view(channel_end, waiters_end);
        handoff_ = view(waiters_end, text_.size());
    }
    LockNames(const LockNames&) = delete;
    LockNames& operator=(const LockNames&) = delete;

    std::string_view name() const { return name_; }
    std::string_view channel() const { return channel_; }
    std::string_view waiters() const { return waiters_; }  // both empty, or both set
    std::string_view handoff() const { return handoff_; }
    bool targeted() const { return !handoff_.empty(); }
    /// "1" on a cluster, where the lock's slot may migrate (lock/handoff.lua.part).
    std::string_view slot_moves() const { return slot_moves_; }

private:
    std::string_view view(std::size_t from, std::size_t to) const { return {text_.data() + from, to - from}; }
    std::array<std::byte, 320> frame_;
    std::pmr::monotonic_buffer_resource memory_{frame_.data(), frame_.size()};  // then the heap
    std::pmr::string text_{&memory_};  // name, channel, waiters, handoff; never reallocated after the constructor
    std::string_view name_, channel_, waiters_, handoff_, slot_moves_;
};

// A waiter id as the scripts take it ("" for 0: not listed), without allocating.
struct WaiterText {
    explicit WaiterText(std::uint64_t id) {
        if (id != 0) size = static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, id).ptr - digits);
    }
    std::string_view view() const { return {digits, size}; }
    char digits[20];
    std::size_t size = 0;
};

// Unlists `waiter` from lock `name`, passing on a promise of the free lock made to it.
void leave_list(ClientCore& core, std::string_view name, std::uint64_t waiter, std::function<void()> done) {
    const LockNames n(core, name, true);
    eval_reporting(core.transport, scripts::lock_leave, {n.name()},
                   {WaiterText(waiter).view(), core.transport.publish_command(n.name(), n.channel()), n.channel(),
                    promise_ms, n.waiters(), n.handoff(), n.slot_moves()},
                   n.name(), "stop waiting for", [done = std::move(done)](Failure, Reply) {
                       if (done) done();
                   });
}

}  // namespace

// Every step builds the lock's names on its own stack (as a release does),
// from the hold it is given: a waiter keeps no copy of the name or owner.
AcquireRequest ReentrantLockKind::acquire(ClientCore& core, const std::string& name, const std::string&,
                                          std::chrono::milliseconds lease, bool try_once) const {
    AcquireRequest request;
    const LockNames names(core, name, announces_);
    request.channel = names.channel();
    // A caller that will not wait is not listed, but keeps off a promised lock too.
    if (names.targeted() && lists_waiters_ && !try_once) request.waiter_id = core.new_waiter_id();
    // `tried`: the first attempt lists no waiter (its refusal is followed by
    // the subscription and an attempt that does), so the common path, taken
    // at once, carries no id to unlist. Attempts run one after another.
    request.attempt = [&core, lease_ms = std::to_string(lease.count()), announces = announces_,
                       script = acquire_script_ ? acquire_script_ : &scripts::lock_acquire,
                       waiter = request.waiter_id, tried = false](const HoldId& hold, auto report) mutable {
        const LockNames n(core, hold.key, announces);
        // The channel and publish command: the release's rights, checked first.
        attempt_script(core.transport, *script, {n.name()},
                       {lease_ms, hold.owner, n.channel(),
                        announces ? core.transport.publish_command(n.name(), n.channel()) : "",
                        WaiterText(std::exchange(tried, true) ? waiter : 0).view(), n.waiters(), n.handoff(),
                        n.slot_moves()},
                       hold.key, "lock", std::move(report));
    };
    if (request.waiter_id == 0) return request;
    request.give_up = [&core, waiter = request.waiter_id](const HoldId& hold, std::function<void()> done) {
        leave_list(core, hold.key, waiter, std::move(done));
    };
    request.unclaimed_name = [&core](const std::string& key, std::uint64_t waiter) {
        if (core.gave_out(waiter)) leave_list(core, key, waiter, nullptr);
    };
    return request;
}

void ReentrantLockKind::release(ClientCore& core, const std::string& name, const std::string& owner,
                                const std::string& lease_ms, ReplyHandler done) const {
    const LockNames n(core, name, announces_);
    eval_reporting(core.transport, scripts::lock_release, {name},
                   {unlock_message, lease_ms, owner,
                    announces_ ? core.transport.publish_command(name, n.channel()) : "", n.channel(), promise_ms,
                    n.waiters(), n.handoff(), n.slot_moves()},
                   name, "unlock", std::move(done));
}

void ReentrantLockKind::force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const {
    eval_reporting(core.transport, scripts::lock_force_unlock, {name},
                   {std::string(unlock_message),
                    std::string(announces_ ? core.transport.publish_command(name, lock_channel(name)) : ""),
                    lock_channel(name)},
                   name, "force-unlock", std::move(done));
}

const Script& ReentrantLockKind::renew() const { return scripts::lock_renew; }

const LockKind& reentrant_lock_kind() {
    static const ReentrantLockKind kind;
    return kind;
}

}  // namespace holdfast::detail
