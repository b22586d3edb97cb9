// The release half of the hold pipeline (hold/hold.hpp): send, confirm, judge
// (primitive/release_verdict.hpp), then untrack and report.
#include <asio.hpp>

#include <algorithm>
#include <memory>
#include <optional>

#include "common/quoted.hpp"
#include "core/client_core.hpp"
#include "hold/contained.hpp"
#include "hold/hold.hpp"
#include "primitive/replica_sync.hpp"
#include "telemetry/telemetry.hpp"

namespace holdfast::detail {

ReleaseReply lock_release_reply(const Reply& reply) {
    if (reply.is_nil()) return ReleaseReply::not_held;
    return reply.is_integer() && reply.integer == 0 ? ReleaseReply::still_held : ReleaseReply::released;
}

namespace {

struct Releasing {
    ReleaseSpec spec;
    std::function<void(ReleaseOutcome)> done;
    std::string unconfirmed;  // why replica sync found the release unacknowledged; empty when it did not
    std::optional<asio::steady_timer> retry;
    std::chrono::steady_clock::time_point retry_until;
    Resends::Id resend = 0;     // its re-send's, when sent again
    bool between_rounds = false;  // its re-send waits for `retry` (loop thread)
};

// What the checked forms throw for a release that did not release.
Failure failure(ClientCore& core, const HoldId& hold, ReleaseVerdict verdict, const Failure& error,
                std::optional<std::chrono::milliseconds> lost_for, bool server_held,
                const std::string& why_unconfirmed, bool sent_again) {
    if (verdict == ReleaseVerdict::released) return nullptr;  // the common case makes no text
    const std::string on = " on " + core.transport.config().server_name();
    const std::string by = hold.owner.empty() ? "this caller" : "owner " + quoted(hold.owner);
    const std::string unlock = hold.owner.empty() ? "release" : "unlock";
    const std::string unrenewed =
        ". It is no longer renewed, so the server frees it when its lease runs out; watch lease_lost_token() "
        "to stop work when a hold is lost";
    switch (verdict) {
        case ReleaseVerdict::released: return nullptr;
        case ReleaseVerdict::not_held:
            return {errc::not_owner,
                    "holdfast: cannot " + unlock + " " + hold.subject() + on + ": " + by +
                        " does not hold it (never locked, already unlocked, or its lease ran out); unlock only what "
                        "this owner locked, and watch lease_lost_token() to learn when a hold is lost"};
        case ReleaseVerdict::lost:
            return {errc::lease_lost,
                    "holdfast: " + hold.subject() + on + " was lost by " + by + " " +
                        std::to_string(lost_for ? lost_for->count() : 0) +
                        " ms before this unlock: no renewal was confirmed for a whole lease (the server unreachable, "
                        "paused or refusing), so another owner may have held it since; " +
                        (server_held ? "the unlock was carried out" : "the server no longer counted this hold") +
                        ". Watch lease_lost_token() to stop work when this happens, and fence writes (FencedLock) "
                        "where a late write must be refused"};
        case ReleaseVerdict::refused:
            return error.adding(" (" + unlock + " of " + hold.subject() + " by " + by + " refused, nothing changed" +
                                unrenewed + ")");
        case ReleaseVerdict::unknown:
            return error.adding(" (" + unlock + " of " + hold.subject() + " by " + by +
                                ": no reply, so whether it ran is unknown" +
                                (sent_again ? "; holdfast sends it again once the server answers, within its lease"
                                            : "") +
                                unrenewed + ")");
        case ReleaseVerdict::unconfirmed:
            return {errc::replicas_unconfirmed,
                    "holdfast: " + hold.subject() + " was released by " + by + " " + why_unconfirmed +
                        ", so a failover could bring the hold back until its lease ends; holdfast sends the release "
                        "again, to whichever master it reaches, until a replica confirms it or the lease is over "
                        "(replica_sync)"};
    }
    return nullptr;
}

void report(ClientCore& core, const HoldId& hold, const ReleaseOutcome& outcome) {
    if (!core.telemetry->listening()) return;
    Event event;
    event.kind = Event::Kind::release_failed;
    event.primitive = Telemetry::label(hold.kind);
    event.name = hold.key;
    event.owner = hold.owner;
    event.server = core.transport.config().server_name();
    event.detail = std::string(to_string(outcome.verdict)) + ": " + outcome.error.message();
    core.telemetry->tell(event);
}

// Releases, one at a time, the holds the server still counts for the owner
// that no caller was told of; then `then`. A failure leaves them to the lease.
void give_back_rest(std::shared_ptr<Releasing> r, std::function<void()> then) {
    r->spec.send(r->spec.hold, "0", [r, then = std::move(then)](Failure error, Reply reply) mutable {
        if (!error && r->spec.decode(reply) == ReleaseReply::still_held) return give_back_rest(r, std::move(then));
        then();
    });
}

void resend(ClientCore& core, const std::shared_ptr<Releasing>& r);

// Between the rounds of a re-send while the client closes.
constexpr std::chrono::milliseconds closing_pause{100};

// The next re-send of a release no replica confirmed, `after` from now.
void release_again(ClientCore& core, std::shared_ptr<Releasing> r, std::chrono::milliseconds after) {
    r->between_rounds = true;
    r->retry.emplace(core.transport.loop(), after);
    r->retry->async_wait([&core, r](asio::error_code ec) {
        if (ec) return;
        r->between_rounds = false;
        resend(core, r);
    });
}

// The client is closing: the re-send's next round now (one under way goes on).
std::function<void()> hurry(ClientCore& core, const std::shared_ptr<Releasing>& r) {
    return [&core, weak = std::weak_ptr<Releasing>(r)] {
        asio::post(core.transport.loop(), [&core, weak] {
            if (auto r = weak.lock(); r && r->between_rounds) release_again(core, r, {});
        });
    };
}

// What a re-send found: sent again until a replica confirms it. A hold
// still held is one a failover brought back beside another the owner had
// not been told of: it goes too, at once. Posted by the reply's handler, so
// on the loop and outside the registry's lock (a reply may fail at once,
// inside the turn).
void resent(ClientCore& core, std::shared_ptr<Releasing> r, Failure error, Reply reply) {
    // The client closing waits for it (ClientCore's destructor): sooner then.
    const auto period = core.resends.hurried() ? std::min(core.transport.config().replica_sync_timeout, closing_pause)
                                               : core.transport.config().replica_sync_timeout;
    if (error) return release_again(core, std::move(r), period);
    if (r->spec.decode(reply) == ReleaseReply::still_held) return release_again(core, std::move(r), {});
    const std::string& key = r->spec.hold.key;
    core.transport.sync_replicas(key, [&core, r, period](Failure error, Transport::ReplicaAck ack) {
        if (unsynced(core.transport, error, ack)) return release_again(core, r, period);
        core.resends.finished(r->spec.hold.key, r->spec.hold.counted_as(), r->resend);
    });
}

// A release no replica confirmed, or of a last hold that got no reply: sent
// again (to whichever master the transport now reaches) every
// replica_sync_timeout until it is answered and a replica, if any, confirms
// it, or the hold's lease is over. Never over a hold the owner took since
// (hold/resends.hpp): an acquire of the hold under way pauses it, one that
// took the hold ends it, and one that starts later goes behind it.
void resend(ClientCore& core, const std::shared_ptr<Releasing>& r) {
    const HoldId& hold = r->spec.hold;
    if (std::chrono::steady_clock::now() >= r->retry_until)
        return core.resends.finished(hold.key, hold.counted_as(), r->resend);
    const auto turn = core.resends.send(hold.key, hold.counted_as(), r->resend, [&core, &r, &hold] {
        // Its place on the connection is its place on the server.
        Transport::InOrder in_order;
        r->spec.send(hold, "0", [&core, r](Failure error, Reply reply) {
            asio::post(core.transport.loop(), [&core, r, error = std::move(error), reply = std::move(reply)]() mutable {
                resent(core, std::move(r), std::move(error), std::move(reply));
            });
        });
    });
    if (turn == Resends::Turn::paused) release_again(core, r, core.transport.config().replica_sync_timeout);
}

void conclude(ClientCore& core, std::shared_ptr<Releasing> r, ReleaseReply said, const Failure& error) {
    const HoldId& hold = r->spec.hold;
    // Read before the watchdog forgets the hold: a hold lost locally is told as such.
    const auto lost_for = core.watchdog.lost_for(hold.key, hold.counted_as());
    const std::int64_t known = r->spec.ledger ? core.holds.known(hold.key, hold.counted_as()) : 1;
    const ReleaseDecision decision = judge({said, known, lost_for.has_value(), !r->unconfirmed.empty()});
    const auto held_for =
        core.holds.given_back(hold.key, hold.counted_as(), decision.ledger == ReleaseDecision::Ledger::forget);
    if (decision.count_hold_time && held_for) core.telemetry->held(hold.kind, *held_for);
    // Sent again: a release replicas did not confirm, and one of the owner's
    // last hold that got no reply (a connection lost, a failover's switch;
    // not a partial one, which could take a hold the owner still believes in).
    const bool again = decision.verdict == ReleaseVerdict::unconfirmed ||
                       (decision.verdict == ReleaseVerdict::unknown && known == 1 && is_connection(error.code()));
    ReleaseOutcome outcome{decision.verdict, failure(core, hold, decision.verdict, error, lost_for,
                                                     said != ReleaseReply::not_held, r->unconfirmed, again)};
    if (outcome.error) report(core, hold, outcome);
    if (again) {
        // Registered before the caller is told, so the owner's next acquire pauses it.
        r->retry_until = std::chrono::steady_clock::now() + core.watchdog.lease();
        r->resend = core.resends.add(hold.key, hold.counted_as(), hurry(core, r));
        release_again(core, r, core.transport.config().replica_sync_timeout);
    }
    auto finish = [&core, r, decision, outcome = std::move(outcome)] {
        const HoldId& hold = r->spec.hold;
        if (decision.end_renewal) core.watchdog.untrack(hold.key, hold.counted_as(), decision.tell_lost);
        auto done = std::move(r->done);
        // Contained here: a caller's async completion needs no wrapper of its own.
        call_contained(core, hold.kind, hold.key, done, outcome);
    };
    if (decision.give_back_rest) return give_back_rest(r, std::move(finish));
    finish();
}

}  // namespace

void release_hold(ClientCore& core, ReleaseSpec spec, std::function<void(ReleaseOutcome)> done) {
    if (!spec.decode) spec.decode = lock_release_reply;
    auto r = std::make_shared<Releasing>(Releasing{std::move(spec), std::move(done), {}, std::nullopt, {}, 0, false});
    const HoldId& hold = r->spec.hold;
    // A watchdog hold still held after this release gets a fresh lease; an
    // explicit lease keeps its deadline.
    const std::string lease_ms =
        core.watchdog.renews(hold.key, hold.counted_as()) ? std::to_string(core.watchdog.lease().count()) : "0";
    r->spec.send(r->spec.hold, lease_ms, [&core, r](Failure error, Reply reply) {
        // Every script checks and writes last, so an error reply changed nothing.
        const ReleaseReply said = !error                        ? r->spec.decode(reply)
                                  : is_unanswered(error.code()) ? ReleaseReply::no_reply
                                                                : ReleaseReply::refused;
        if (error || !core.transport.syncs_replicas(r->spec.hold.key)) return conclude(core, r, said, error);
        // Replica sync: the caller learns of the release once replicas have it, or that none did.
        core.transport.sync_replicas(r->spec.hold.key, [&core, r, said](Failure error, Transport::ReplicaAck ack) {
            if (auto why = unsynced(core.transport, error, ack)) r->unconfirmed = "on master " + ack.master + ", but " + *why;
            conclude(core, r, said, nullptr);
        });
    });
}

}  // namespace holdfast::detail
