#include "lock/kind.hpp"


#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/errors.hpp"
#include "common/quoted.hpp"
#include "primitive/names.hpp"

namespace holdfast::detail {

namespace {

constexpr std::string_view unlock_message = "0";

}  // namespace

bool LockKind::is_locked(const Query& query, const std::string& name) const {
    if (shares_key()) return !holders(query, name).empty();
    return query({"EXISTS", name}).integer == 1;
}

std::int64_t LockKind::hold_count(const Query& query, const std::string& name, const std::string& owner) const {
    const std::string field = hold_field(owner);
    Reply reply = query({"HGET", name, field});
    return reply.is_nil() ? 0 : hold_count_of(query.server, name, field, reply.str);
}

std::vector<Lock::Holder> LockKind::holders(const Query& query, const std::string& name) const {
    Reply reply = query({"HGETALL", name});
    std::vector<Lock::Holder> result;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
        const std::string& field = reply.elements[i].str;
        if (auto owner = holder_of(field))
            result.push_back({std::move(*owner), hold_count_of(query.server, name, field, reply.elements[i + 1].str)});
    }
    return result;
}

AcquireRequest ReentrantLockKind::acquire(ClientCore& core, const std::string& name, const std::string& owner,
                                          std::chrono::milliseconds lease, bool) const {
    AcquireRequest request;
    request.channel = lock_channel(name);
    request.attempt = [&core, name, owner, lease_ms = std::to_string(lease.count()), announces = announces_](auto report) {
        // The channel and publish command: the release's rights, checked first.
        attempt_script(core.transport, scripts::lock_acquire, {name},
                       {lease_ms, owner, lock_channel(name),
                        std::string(announces ? core.transport.publish_command(name, lock_channel(name)) : "")},
                       name, "lock", std::move(report));
    };
    return request;
}

void ReentrantLockKind::release(ClientCore& core, const std::string& name, const std::string& owner,
                                const std::string& lease_ms, ReplyHandler done) const {
    eval_reporting(core.transport, scripts::lock_release, {name},
                   {std::string(unlock_message), lease_ms, owner,
                    std::string(announces_ ? core.transport.publish_command(name, lock_channel(name)) : ""),
                    lock_channel(name)},
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
