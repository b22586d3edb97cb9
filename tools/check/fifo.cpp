// First come, first served (FairLock): a waiter seen in the queue is never
// passed over by one whose acquire call began after that. RELIABILITY.md
// ("The checkers") gives the rule and why it is sound.
#include "checker.hpp"

namespace holdfast::check {
namespace {

// Why `hold` may have had a place in the queue from before its acquire call,
// or lost the one it had: an earlier acquire of its worker on the lock that
// ended without the lock (leaving the queue may have failed, or the outcome
// is unknown), or a release of unknown outcome or refused (the hold then
// stays, and the worker's next acquire re-enters it), while a fault disturbed
// the server, the connections or the worker's rights.
std::optional<std::string> old_place(const RunFacts& facts, const Model& m, const Hold& hold) {
    for (const Attempt& a : m.attempts[hold.lock])
        if (a.worker == hold.worker && a.invoke < hold.invoke && a.outcome != Phase::ok)
            if (auto why = excuse(facts, m, a.window(), Excusable::by_queue_loss)) return why;
    for (const Hold& h : m.holds[hold.lock])
        if (h.worker == hold.worker && h.invoke < hold.invoke && (h.release == Phase::unknown || h.release == Phase::fail))
            if (auto why = excuse(facts, m, {h.worker, h.end, h.released}, Excusable::by_queue_loss)) return why;
    return std::nullopt;
}

}  // namespace

void check_fifo(const RunFacts& facts, const Model& m, RunResult& r) {
    for (const auto& holds : m.holds)  // by ack, which is grant order while no two overlap
        for (std::size_t j = 0; j < holds.size(); ++j)
            for (std::size_t i = j + 1; i < holds.size(); ++i) {
                const Hold& granted = holds[j];
                const Hold& passed = holds[i];  // granted later, though queued before `granted` was even asked for
                if (passed.queued == 0 || passed.queued >= granted.invoke) continue;
                auto why = excuse(facts, m, {passed.worker, passed.invoke, passed.ack}, Excusable::by_queue_loss);
                if (!why) why = old_place(facts, m, passed);
                if (!why) why = old_place(facts, m, granted);
                if (why) {
                    ++r.fifo.expected;
                    continue;
                }
                ++r.fifo.violations;
                add_finding(r, "fifo", lock_name(granted.lock) + ": " + describe(facts, granted) +
                                           " was granted first, though its acquire began " +
                                           std::to_string((granted.invoke - passed.queued) / 1'000'000) +
                                           " ms after " + describe(facts, passed) + " was seen in the queue");
            }
}

}  // namespace holdfast::check
