#include "holdfast/fair_lock.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/client_core.hpp"
#include "fair_lock/kind.hpp"
#include "holdfast_scripts.hpp"
#include "non_reentrant_lock/reentry.hpp"
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

// `reentrant` false: the non-reentrant fair lock, whose acquire refuses a
// second hold (non_reentrant_lock/fair_acquire.lua).
class FairLockKind final : public detail::LockKind {
public:
    FairLockKind(Lock::Duration dead_waiter_timeout, bool reentrant)
        : timeout_ms_(std::to_string(dead_waiter_timeout.count())), timeout_(dead_waiter_timeout),
          reentrant_(reentrant) {}

    std::string_view noun() const override { return reentrant_ ? "fair lock" : "non-reentrant fair lock"; }
    bool reentrant() const override { return reentrant_; }
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
                           mode = try_once ? "try" : "wait", refresh, budget_ms,
                           script = reentrant_ ? &scripts::fair_lock_acquire
                                               : &scripts::non_reentrant_lock_fair_acquire](
                              const detail::HoldId& hold, auto report) {
            const std::string& name = hold.key;
            const std::string& owner = hold.owner;
            const FairNames n(name);
            detail::attempt_script(core.transport, *script,
                                   {n.hash, n.queue, n.deadlines, n.liveness},
                                   {lease_ms, owner, budget_ms, epoch_ms(), mode,
                                    core.transport.publish_command(name, n.channel), timeout_ms, n.channel},
                                   name, "fair lock", [report, refresh](detail::Attempt attempt) {
                                       if (attempt.outcome == detail::Attempt::Outcome::refused)
                                           attempt.ttl = attempt.ttl < 0 ? refresh : std::min(attempt.ttl, refresh);
                                       report(std::move(attempt));
                                   });
        };
        if (!reentrant_) detail::report_reentry_as_deadlock(core, request);
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
    bool reentrant_;
};

}  // namespace

namespace detail {

// Kinds live as long as the program: a lock's pending operations may outlive
// the FairLock object. One per distinct timeout and reentrancy.
const LockKind& fair_lock_kind(Lock::Duration dead_waiter_timeout, bool reentrant) {
    if (dead_waiter_timeout <= Lock::Duration::zero())
        throw std::invalid_argument("holdfast: a fair lock's dead-waiter timeout must be > 0 ms, got " +
                                    std::to_string(dead_waiter_timeout.count()) + " ms");
    static std::mutex mutex;
    static std::map<std::pair<Lock::Duration::rep, bool>, std::unique_ptr<FairLockKind>> kinds;
    std::lock_guard guard(mutex);
    auto& kind = kinds[{dead_waiter_timeout.count(), reentrant}];
    if (!kind) kind = std::make_unique<FairLockKind>(dead_waiter_timeout, reentrant);
    return *kind;
}

}  // namespace detail

FairLock::FairLock(Client& client, std::string name, Duration dead_waiter_timeout)
    : FairLock(client, std::move(name), dead_waiter_timeout, detail::fair_lock_kind(dead_waiter_timeout)) {}

FairLock::FairLock(Client& client, std::string name, Duration dead_waiter_timeout, const detail::LockKind& kind)
    : Lock(client, std::move(name), kind), dead_waiter_timeout_(dead_waiter_timeout) {}

}  // namespace holdfast
