// One step (acquire, release, renew) sent to many locks at once, its outcomes
// judged as they arrive: the one fan-out MultiLock and RedLock share.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace holdfast::detail {

template <class Outcome>
struct Tally {
    /// By member index: nullopt while outstanding, or for members not started.
    std::vector<std::optional<Outcome>> outcomes;
    std::size_t outstanding = 0;

    template <class Pred>
    std::size_t count(Pred pred) const {
        std::size_t n = 0;
        for (const auto& outcome : outcomes)
            if (outcome && pred(*outcome)) ++n;
        return n;
    }
};

/// Runs `start(i, report)` for every i in `members` (indexes below `size`)
/// before judging anything, so every request is in flight at once: one round
/// trip per server, not one per lock. `report` may be called once, from any
/// thread. After all are started and after each later arrival, `decided(tally)`
/// runs under a mutex; the first time it says yes (at the latest when nothing
/// is outstanding), `done(tally)` runs once, outside the mutex, on the thread
/// that made it so. Arrivals after that are dropped.
template <class Outcome>
void fan_out(std::size_t size, const std::vector<std::size_t>& members,
             const std::function<void(std::size_t member, std::function<void(Outcome)> report)>& start,
             std::function<bool(const Tally<Outcome>&)> decided, std::function<void(Tally<Outcome>)> done) {
    struct State {
        std::mutex mutex;
        Tally<Outcome> tally;
        bool started = false;
        bool finished = false;
        std::function<bool(const Tally<Outcome>&)> decided;
        std::function<void(Tally<Outcome>)> done;

        // Called with the mutex held; returns the completion to run after unlocking.
        std::function<void()> judge() {
            if (!started || finished) return {};
            if (tally.outstanding > 0 && !decided(tally)) return {};
            finished = true;
            return [done = std::move(done), tally = tally] { done(tally); };
        }
    };
    auto state = std::make_shared<State>();
    state->tally.outcomes.resize(size);
    state->tally.outstanding = members.size();
    state->decided = std::move(decided);
    state->done = std::move(done);
    for (const std::size_t i : members)
        start(i, [state, i](Outcome outcome) {
            std::function<void()> then;
            {
                std::lock_guard lock(state->mutex);
                if (state->finished) return;
                state->tally.outcomes[i] = std::move(outcome);
                --state->tally.outstanding;
                then = state->judge();
            }
            if (then) then();
        });
    std::function<void()> then;
    {
        std::lock_guard lock(state->mutex);
        state->started = true;
        then = state->judge();
    }
    if (then) then();
}

}  // namespace holdfast::detail
