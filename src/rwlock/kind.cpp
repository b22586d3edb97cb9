#include "rwlock/kind.hpp"


#include "core/client_core.hpp"
#include "holdfast/errors.hpp"
#include "holdfast_scripts.hpp"
#include "primitive/names.hpp"

namespace holdfast::detail {

namespace {

// write_acquire.lua's reply when the caller holds a read lock.
constexpr std::string_view read_held = "read-held";

// Each side deletes the lock only while it is in its own mode, as Redisson's do.
void force_unlock_in_mode(ClientCore& core, const std::string& name, std::string_view mode, std::string_view message,
                          ReplyHandler done) {
    eval_reporting(core.transport, scripts::rwlock_force_unlock, {name},
                   {std::string(mode), std::string(message), std::string(core.transport.publish_command(name, rwlock_channel(name))),
                    rwlock_channel(name)},
                   name, "force-unlock", std::move(done));
}

class ReadLockKind final : public LockKind {
public:
    std::string_view noun() const override { return "read lock"; }
    // A read hold's own key, {name}:<owner>:rwlock_timeout:<n>, beside the hash.
    std::vector<std::string> keys(const std::string& name) const override {
        return {name, rwlock_timeout_key(name, "owner", 1)};
    }

    AcquireRequest acquire(ClientCore& core, const std::string& name, const std::string&,
                           std::chrono::milliseconds lease, bool) const override {
        AcquireRequest request;
        request.channel = rwlock_channel(name);
        request.attempt = [&core, lease_ms = std::to_string(lease.count())](const HoldId& hold, auto report) {
            const std::string& name = hold.key;
            const std::string& owner = hold.owner;
            attempt_script(core.transport, scripts::rwlock_read_acquire, {name},
                           {lease_ms, owner, writer_field(owner), rwlock_channel(name),
                            std::string(core.transport.publish_command(name, rwlock_channel(name)))},
                           name, "read lock", std::move(report));
        };
        return request;
    }

    // Each read hold has its own lease (its timeout key), so `lease_ms` has no use here.
    void release(ClientCore& core, const std::string& name, const std::string& owner, const std::string&,
                 ReplyHandler done) const override {
        eval_reporting(core.transport, scripts::rwlock_read_release, {name},
                       {std::string(unlock_message), owner,
                        std::string(core.transport.publish_command(name, rwlock_channel(name))), rwlock_channel(name)},
                       name, "read unlock", std::move(done));
    }

    void force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const override {
        force_unlock_in_mode(core, name, "read", unlock_message, std::move(done));
    }

    const Script& renew() const override { return scripts::rwlock_read_renew; }

    bool shares_key() const override { return true; }
};

class WriteLockKind final : public LockKind {
public:
    std::string_view noun() const override { return "write lock"; }
    // A downgraded writer's read holds have keys of their own.
    std::vector<std::string> keys(const std::string& name) const override {
        return {name, rwlock_timeout_key(name, "owner", 1)};
    }

    AcquireRequest acquire(ClientCore& core, const std::string& name, const std::string&,
                           std::chrono::milliseconds lease, bool) const override {
        AcquireRequest request;
        request.channel = rwlock_channel(name);
        request.attempt = [&core, lease_ms = std::to_string(lease.count())](const HoldId& hold, auto report) {
            const std::string& name = hold.key;
            const std::string& owner = hold.owner;
            eval_reporting(core.transport, scripts::rwlock_write_acquire, {name},
                           {lease_ms, writer_field(owner), owner, rwlock_channel(name),
                            std::string(core.transport.publish_command(name, rwlock_channel(name)))},
                           name,
                           "write lock", [&name, &owner, report = std::move(report)](Failure error, Reply reply) {
                               if (error) return report(Attempt::failed(std::move(error)));
                               if (reply.is_nil()) return report(Attempt::acquired());
                               if (reply.is_integer()) return report(Attempt::refused(reply.integer));
                               report(Attempt::failed(
                                   {errc::deadlock, "holdfast: cannot take write lock '" + name + "' for owner " +
                                                        owner +
                                                        ": it holds a read lock on it, and a read lock cannot be "
                                                        "upgraded (the write lock would wait for its own reader); "
                                                        "release the read lock first"}));
                           });
        };
        return request;
    }

    void release(ClientCore& core, const std::string& name, const std::string& owner, const std::string& lease_ms,
                 ReplyHandler done) const override {
        eval_reporting(core.transport, scripts::rwlock_write_release, {name},
                       {std::string(unlock_all_message), lease_ms, writer_field(owner),
                        std::string(core.transport.publish_command(name, rwlock_channel(name))), rwlock_channel(name)},
                       name, "write unlock", std::move(done));
    }

    void force_unlock(ClientCore& core, const std::string& name, ReplyHandler done) const override {
        force_unlock_in_mode(core, name, "write", unlock_all_message, std::move(done));
    }

    // The RLock's renewal: the writer's field is present, so the hash gets the lease.
    const Script& renew() const override { return scripts::lock_renew; }

    std::string hold_field(const std::string& owner) const override { return writer_field(owner); }
    bool field_is_owner() const override { return false; }

    LockField::Role holds_as() const override { return LockField::Role::writer; }

    bool shares_key() const override { return true; }
};

}  // namespace

const LockKind& read_lock_kind() {
    static const ReadLockKind kind;
    return kind;
}

const LockKind& write_lock_kind() {
    static const WriteLockKind kind;
    return kind;
}

}  // namespace holdfast::detail
