#include "lock/kind.hpp"

#include <charconv>

#include "client/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/errors.hpp"
#include "common/quoted.hpp"
#include "primitive/names.hpp"

namespace holdfast::detail {

namespace {

std::vector<std::string_view> views(const std::vector<std::string>& strings) {
    return {strings.begin(), strings.end()};
}


constexpr std::string_view unlock_message = "0";

}  // namespace

std::int64_t hold_count_of(std::string_view server, const std::string& name, const std::string& field,
                           const std::string& value) {
    std::int64_t count = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
    if (ec != std::errc() || end != value.data() + value.size())
        throw WrongTypeError("holdfast: " + quoted(name) + (server.empty() ? "" : " on " + std::string(server)) +
                             " is a hash but not a lock: field " + quoted(field) + " holds " + quoted(value) +
                             ", not a hold count; pick another name or delete the key");
    return count;
}

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

void eval_reporting(ClientCore& core, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, const std::string& name, std::string what, ReplyHandler done,
                    std::string_view kind) {
    core.transport.eval(script, views(keys), views(args),
                        [&core, name, what = std::move(what), kind = std::string(kind), done = std::move(done)](
                            std::exception_ptr error, Reply reply) {
                            if (error || !reply.is_error()) return done(std::move(error), std::move(reply));
                            reply_error(
                                core.transport, name, what, reply,
                                [done](std::exception_ptr e) { done(std::move(e), Reply{}); }, kind);
                        });
}

void attempt_script(ClientCore& core, const Script& script, std::vector<std::string> keys,
                    std::vector<std::string> args, const std::string& name, std::string_view noun,
                    std::function<void(Attempt)> report) {
    eval_reporting(core, script, std::move(keys), std::move(args), name, std::string(noun),
                   [report = std::move(report)](std::exception_ptr error, Reply reply) {
                       if (error) return report(Attempt::failed(std::move(error)));
                       if (reply.is_nil()) return report(Attempt::acquired());
                       report(Attempt::refused(reply.integer));
                   });
}

AcquireRequest ReentrantLockKind::acquire(ClientCore& core, const std::string& name, const std::string& owner,
                                          std::chrono::milliseconds lease, bool) const {
    AcquireRequest request;
    request.channel = lock_channel(name);
    request.attempt = [&core, name, owner, lease_ms = std::to_string(lease.count())](auto report) {
        attempt_script(core, scripts::lock_acquire, {name}, {lease_ms, owner}, name, "lock", std::move(report));
    };
    return request;
}

void ReentrantLockKind::release(ClientCore& core, const std::string& name, const std::string& owner,
                                const std::string& lease_ms, ReplyHandler done) const {
    std::vector<std::string> keys{name};
    if (announces_) keys.push_back(lock_channel(name));
    eval_reporting(core, scripts::lock_release, std::move(keys),
                   {std::string(unlock_message), lease_ms, owner, std::string(announces_ ? core.transport.publish_command() : "")},
                   name, "unlock", std::move(done));
}

void ReentrantLockKind::force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const {
    std::vector<std::string> keys{name};
    if (announces_) keys.push_back(lock_channel(name));
    eval_reporting(core, scripts::lock_force_unlock, std::move(keys),
                   {std::string(unlock_message), std::string(announces_ ? core.transport.publish_command() : "")}, name,
                   "force-unlock", std::move(done));
}

const Script& ReentrantLockKind::renew() const { return scripts::lock_renew; }

const LockKind& reentrant_lock_kind() {
    static const ReentrantLockKind kind;
    return kind;
}

}  // namespace holdfast::detail
