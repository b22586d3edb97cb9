#include "holdfast/multi_lock.hpp"

#include "group/fan_out.hpp"
#include "group/members.hpp"
#include "lock/access.hpp"
#include "multi_lock/lost_watches.hpp"
#include "primitive/arguments.hpp"

namespace holdfast {

namespace {

using Clock = std::chrono::steady_clock;
using Duration = LockGroup::Duration;
using detail::LockAccess;
using detail::Tally;
using detail::Took;

// Waits for every reply: a round is judged as a whole.
template <class Outcome>
bool when_all_in(const Tally<Outcome>&) {
    return false;
}

// One acquisition of a MultiLock, on whichever loop threads its locks reply.
// A round tries every lock (but the one just waited for) once, all at once; if
// one refuses, the round's gains are released and the operation waits for that
// lock alone, then starts another round holding it.
class MultiAcquire : public std::enable_shared_from_this<MultiAcquire> {
public:
    MultiAcquire(std::vector<Lock*> locks, std::vector<std::string> owners, std::optional<Duration> wait,
                 std::optional<Duration> lease, std::stop_token stop, std::function<void(std::exception_ptr, bool)> done)
        : locks_(std::move(locks)),
          owners_(std::move(owners)),
          lease_(lease),
          deadline_(detail::deadline_after(wait)),
          stop_(std::move(stop)),
          done_(std::move(done)) {}

    void start() { round(std::nullopt); }

private:
    void round(std::optional<std::size_t> held) {
        std::vector<std::size_t> members;
        for (std::size_t i = 0; i < locks_.size(); ++i)
            if (i != held) members.push_back(i);
        auto self = shared_from_this();
        detail::fan_out<Took>(
            locks_.size(), members,
            [self](std::size_t i, std::function<void(Took)> report) {
                LockAccess::acquire(*self->locks_[i], self->owners_[i], Duration::zero(), self->lease_,
                                    [report = std::move(report)](detail::Failure error, bool acquired, std::int64_t) {
                                        report({std::move(error), acquired});
                                    });
            },
            when_all_in<Took>, [self, held](Tally<Took> tally) { self->settle(held, tally); });
    }

    void settle(std::optional<std::size_t> held, const Tally<Took>& tally) {
        std::vector<std::size_t> taken;
        if (held) taken.push_back(*held);
        detail::Failure error;
        std::optional<std::size_t> refused;
        for (std::size_t i = 0; i < tally.outcomes.size(); ++i) {
            const auto& outcome = tally.outcomes[i];
            if (!outcome) continue;
            if (outcome->error) {
                if (!error) error = outcome->error;
            } else if (outcome->acquired) {
                taken.push_back(i);
            } else if (!refused) {
                refused = i;
            }
        }
        // A stop gives back even a full round: the caller no longer waits for it.
        if (!error && !refused && !stop_.stop_requested()) return done_(nullptr, true);
        release(std::move(taken), [self = shared_from_this(), error, refused] {
            if (error) return self->done_(error, false);
            if (!refused || self->stop_.stop_requested() || (self->deadline_ && *self->deadline_ <= Clock::now()))
                return self->done_(nullptr, false);
            self->wait_for(*refused);
        });
    }

    // Holding nothing, waits for lock `i` as long as the caller may.
    void wait_for(std::size_t i) {
        std::optional<Duration> wait;
        if (deadline_) wait = std::max(Duration::zero(), std::chrono::ceil<Duration>(*deadline_ - Clock::now()));
        LockAccess::acquire(
            *locks_[i], owners_[i], wait, lease_,
            [self = shared_from_this(), i](detail::Failure error, bool acquired, std::int64_t) {
                if (error || !acquired) return self->done_(std::move(error), false);
                self->round(i);
            },
            LockAccess::Watch::watchdog, stop_);
    }

    // Gives back what a failed round took. A failed release is left to its
    // lease (Lock::release has stopped renewing it): nothing else can be done.
    void release(std::vector<std::size_t> taken, std::function<void()> then) {
        auto self = shared_from_this();
        detail::fan_out<detail::Failure>(
            locks_.size(), taken,
            [self](std::size_t i, std::function<void(detail::Failure)> report) {
                LockAccess::release(*self->locks_[i], self->owners_[i], std::move(report));
            },
            when_all_in<detail::Failure>, [then = std::move(then)](const Tally<detail::Failure>&) { then(); });
    }

    const std::vector<Lock*> locks_;
    const std::vector<std::string> owners_;
    const std::optional<Duration> lease_;
    const std::optional<Clock::time_point> deadline_;
    const std::stop_token stop_;
    std::function<void(std::exception_ptr, bool)> done_;
};

std::vector<std::stop_token> member_tokens(const std::vector<Lock*>& locks, const std::vector<std::string>& owners) {
    std::vector<std::stop_token> tokens;
    for (std::size_t i = 0; i < locks.size(); ++i) tokens.push_back(locks[i]->lease_lost_token(owners[i]));
    return tokens;
}

}  // namespace

MultiLock::MultiLock(std::vector<std::reference_wrapper<Lock>> locks)
    : LockGroup(std::move(locks), "multi-lock"), watches_(std::make_shared<detail::LostWatches>()) {}

MultiLock::~MultiLock() = default;

void MultiLock::acquire(Owners owners, std::optional<Duration> wait, std::optional<Duration> lease,
                        std::stop_token stop, Acquired done) {
    std::make_shared<MultiAcquire>(detail::members_of(locks()), std::move(owners), wait, lease, std::move(stop),
                                   std::move(done))
        ->start();
}

void MultiLock::start_release(Owners owners, Released done) {
    auto members = detail::members_of(locks());
    detail::fan_out<detail::Failure>(
        members.size(), detail::every_member(members.size()),
        [&members, &owners](std::size_t i, std::function<void(detail::Failure)> report) {
            LockAccess::release(*members[i], owners[i], std::move(report));
        },
        when_all_in<detail::Failure>,
        [watches = watches_, members, owners, done = std::move(done)](const Tally<detail::Failure>& tally) {
            watches->forget(detail::owners_key(owners), member_tokens(members, owners));
            for (const auto& outcome : tally.outcomes)
                if (*outcome) return done(*outcome);
            done(nullptr);
        });
}

std::stop_token MultiLock::lost(const Owners& owners) const {
    return watches_->token(detail::owners_key(owners), member_tokens(detail::members_of(locks()), owners));
}

}  // namespace holdfast
