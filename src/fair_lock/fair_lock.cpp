#include "holdfast/fair_lock.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/client_core.hpp"
#include "holdfast_scripts.hpp"
#include "lock/kind.hpp"
#include "primitive/names.hpp"

namespace holdfast {

namespace {

std::string epoch_ms() {
    using namespace std::chrono;
    return std::to_string(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

// A fair lock's names. Its scripts take `hash, queue, deadlines, liveness` as
// keys, and the channel prefix (no key) as their last argument.
struct FairNames {
    explicit FairNames(const std::string& name)
        : hash(name),
          queue(detail::fair_queue_key(name)),
          deadlines(detail::fair_timeout_key(name)),
          liveness(detail::fair_alive_key(name)),
          channel(detail::lock_channel(name)) {}
    const std::string& hash;
    const std::string queue, deadlines, liveness, channel;
};

class FairLockKind final : public detail::LockKind {
public:
    explicit FairLockKind(Lock::Duration dead_waiter_timeout)
        : timeout_ms_(std::to_string(dead_waiter_timeout.count())), timeout_(dead_waiter_timeout) {}

    std::string_view noun() const override { return "fair lock"; }
    std::vector<std::string> keys(const std::string& name) const override {
        const FairNames n(name);
        return {n.hash, n.queue, n.deadlines, n.liveness};
    }

    detail::AcquireRequest acquire(detail::ClientCore& core, const std::string& name, const std::string& owner,
                                   std::chrono::milliseconds lease, bool try_once) const override {
        detail::AcquireRequest request;
        request.channel = detail::lock_channel(name) + ':' + owner;
        // Config::fair_lock_wait_timeout: Redisson's fairLockWaitTimeout, one for every client of the queue.
        const std::string budget_ms = std::to_string(core.transport.config().fair_lock_wait_timeout.count());
        // Retries at least every quarter timeout: each retry is its sign of life.
        const long long refresh = std::max<long long>(1, timeout_.count() / 4);
        request.attempt = [&core, lease_ms = std::to_string(lease.count()), timeout_ms = timeout_ms_,
                           mode = try_once ? "try" : "wait", refresh, budget_ms](const detail::HoldId& hold,
                                                                                  auto report) {
            const std::string& name = hold.key;
            const std::string& owner = hold.owner;
            const FairNames n(name);
            detail::attempt_script(core.transport, scripts::fair_lock_acquire,
                                   {n.hash, n.queue, n.deadlines, n.liveness},
                                   {lease_ms, owner, budget_ms, epoch_ms(), mode,
                                    core.transport.publish_command(name, n.channel), timeout_ms, n.channel},
                                   name, "fair lock", [report, refresh](detail::Attempt attempt) {
                                       if (attempt.outcome == detail::Attempt::Outcome::refused)
                                           attempt.ttl = attempt.ttl < 0 ? refresh : std::min(attempt.ttl, refresh);
                                       report(std::move(attempt));
                                   });
        };
        if (!try_once)
            request.give_up = [&core, budget_ms](const detail::HoldId& hold, std::function<void()> done) {
                const std::string& name = hold.key;
                const std::string& owner = hold.owner;
                const FairNames n(name);
                detail::eval_reporting(core.transport, scripts::fair_lock_give_up,
                                       {n.hash, n.queue, n.deadlines, n.liveness},
                                       {owner, budget_ms, core.transport.publish_command(name, n.channel), n.channel},
                                       name, "leave the queue of", [done](detail::Failure, detail::Reply) { done(); });
            };
        return request;
    }

    void release(detail::ClientCore& core, const std::string& name, const std::string& owner,
                 const std::string& lease_ms, detail::ReplyHandler done) const override {
        const FairNames n(name);
        detail::eval_reporting(core.transport, scripts::fair_lock_release, {n.hash, n.queue, n.deadlines, n.liveness},
                               {detail::unlock_message, lease_ms, owner, epoch_ms(),
                                core.transport.publish_command(name, n.channel), n.channel},
                               name, "unlock fair lock", std::move(done));
    }

    void force_unlock(detail::ClientCore& core, const std::string& name, detail::ReplyHandler done) const override {
        const FairNames n(name);
        detail::eval_reporting(core.transport, scripts::fair_lock_force_unlock,
                               {n.hash, n.queue, n.deadlines, n.liveness},
                               {detail::unlock_message, core.transport.publish_command(name, n.channel), epoch_ms(),
                                n.channel},
                               name, "force-unlock fair lock", std::move(done));
    }

    const detail::Script& renew() const override { return scripts::lock_renew; }

private:
    std::string timeout_ms_;
    Lock::Duration timeout_;
};

// Kinds live as long as the program: a lock's pending operations may outlive
// the FairLock object. One per distinct timeout.
const detail::LockKind& kind_for(Lock::Duration dead_waiter_timeout) {
    if (dead_waiter_timeout <= Lock::Duration::zero())
        throw std::invalid_argument("holdfast: a fair lock's dead-waiter timeout must be > 0 ms, got " +
                                    std::to_string(dead_waiter_timeout.count()) + " ms");
    static std::mutex mutex;
    static std::map<Lock::Duration::rep, std::unique_ptr<FairLockKind>> kinds;
    std::lock_guard guard(mutex);
    auto& kind = kinds[dead_waiter_timeout.count()];
    if (!kind) kind = std::make_unique<FairLockKind>(dead_waiter_timeout);
    return *kind;
}

}  // namespace

FairLock::FairLock(Client& client, std::string name, Duration dead_waiter_timeout)
    : Lock(client, std::move(name), kind_for(dead_waiter_timeout)), dead_waiter_timeout_(dead_waiter_timeout) {}

}  // namespace holdfast
