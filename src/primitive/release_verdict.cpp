#include "primitive/release_verdict.hpp"

namespace holdfast::detail {

std::string_view to_string(ReleaseVerdict verdict) {
    switch (verdict) {
        case ReleaseVerdict::released: return "released";
        case ReleaseVerdict::not_held: return "not held";
        case ReleaseVerdict::lost: return "lost";
        case ReleaseVerdict::refused: return "refused";
        case ReleaseVerdict::unknown: return "unknown";
        case ReleaseVerdict::unconfirmed: return "unconfirmed";
    }
    return "unknown";
}

ReleaseDecision judge(const ReleaseFacts& facts) {
    using Ledger = ReleaseDecision::Ledger;
    ReleaseDecision d;
    const bool believed = facts.known > 0;  // the caller was told it holds the lock
    const ReleaseVerdict ours = facts.lost_locally ? ReleaseVerdict::lost : ReleaseVerdict::released;
    switch (facts.reply) {
        case ReleaseReply::released:
            // The server's last hold of the owner went. With none known, a lock
            // already gone answered 1 (the fair lock does, as RFairLock): not ours.
            d.ledger = Ledger::forget;
            if (!believed) {
                d.verdict = ReleaseVerdict::not_held;
                return d;
            }
            // Released here, but a failover could bring it back: said so, and sent again.
            d.verdict = facts.unconfirmed && !facts.lost_locally ? ReleaseVerdict::unconfirmed : ours;
            d.tell_lost = facts.known > 1;  // the server counted fewer holds than the caller believes in
            d.count_hold_time = true;
            return d;
        case ReleaseReply::still_held:
            if (facts.known > 1) {  // a partial unlock: the rest stay held and renewed
                d.verdict = ours;
                d.end_renewal = false;
                return d;
            }
            // The caller had no hold left to believe in: the server's others
            // came from acquires whose replies were lost, and go too.
            d.verdict = believed ? ours : ReleaseVerdict::not_held;
            d.ledger = Ledger::forget;
            d.give_back_rest = true;
            d.count_hold_time = believed;
            return d;
        case ReleaseReply::not_held:
            d.verdict = facts.lost_locally ? ReleaseVerdict::lost : ReleaseVerdict::not_held;
            d.ledger = Ledger::forget;
            d.tell_lost = believed;
            return d;
        case ReleaseReply::refused:
            d.verdict = ReleaseVerdict::refused;
            d.tell_lost = believed;  // unrenewed from now: its lease ends the hold
            return d;
        case ReleaseReply::no_reply:
            d.verdict = ReleaseVerdict::unknown;
            d.tell_lost = believed;
            return d;
    }
    return d;
}

}  // namespace holdfast::detail
