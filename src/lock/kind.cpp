#include "lock/kind.hpp"


#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/reply_errors.hpp"
#include "common/quoted.hpp"
#include "primitive/names.hpp"

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

std::vector<Lock::Holder> LockKind::holders_in(const std::vector<Reply>& hgetall, std::string_view server,
                                               const std::string& name) const {
    std::vector<Lock::Holder> result;
    for (LockField& field : lock_fields(hgetall, shares_key()))
        if (field.role == holds_as())
            result.push_back({std::move(field.owner), hold_count_of(server, name, field.name, field.value)});
    return result;
}

AcquireRequest ReentrantLockKind::acquire(ClientCore& core, const std::string& name, const std::string& owner,
                                          std::chrono::milliseconds lease, bool) const {
    AcquireRequest request;
    request.channel = lock_channel(name);
    request.attempt = [&core, name, owner, lease_ms = std::to_string(lease.count()), channel = request.channel,
                       announces = announces_](auto report) {
        // The channel and publish command: the release's rights, checked first.
        attempt_script(core.transport, scripts::lock_acquire, {name},
                       {lease_ms, owner, channel, announces ? core.transport.publish_command(name, channel) : ""}, name,
                       "lock", std::move(report));
    };
    return request;
}

void ReentrantLockKind::release(ClientCore& core, const std::string& name, const std::string& owner,
                                const std::string& lease_ms, ReplyHandler done) const {
    const std::string channel = lock_channel(name);
    eval_reporting(core.transport, scripts::lock_release, {name},
                   {unlock_message, lease_ms, owner, announces_ ? core.transport.publish_command(name, channel) : "",
                    channel},
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
