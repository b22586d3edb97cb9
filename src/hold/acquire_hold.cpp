// The acquire half of the hold pipeline (hold/hold.hpp).
#include <memory>
#include <utility>

#include "common/message_of.hpp"
#include "common/quoted.hpp"
#include "core/client_core.hpp"
#include "hold/contained.hpp"
#include "hold/hold.hpp"
#include "primitive/acquire_operation.hpp"
#include "primitive/replica_sync.hpp"
#include "telemetry/telemetry.hpp"

namespace holdfast::detail {

std::string HoldId::subject() const { return std::string(kind) + " " + quoted(key); }

namespace {

using Clock = std::chrono::steady_clock;

// What a hold's acquire keeps: made before the operation that reads it.
struct AcquireRecord {
    HoldId hold;
    Keeping keeping;
    bool writes;
    bool gives_back_unknown;
    std::string taken;  // empty: hold.subject(), made only if replica sync needs it
    AcquireRequest request;
    AcquireHandler done;
    Clock::time_point started = Clock::now();
    // When the attempt that took it was sent: its lease runs from then at the latest.
    Clock::time_point sent;
    // The owner's re-send of an unconfirmed release of this hold, paused while this runs.
    Resends::Id paused_resend = 0;
};

// One operation per hold, and one allocation per waiter: the record and the
// operation that runs its request, confirms and records what it takes.
class Acquiring final : public AcquireRecord, public AcquireOperation {
public:
    Acquiring(ClientCore& core, AcquireRecord record)
        : AcquireRecord(std::move(record)),
          AcquireOperation(core.transport, core.wait_queues, hold, request,
                           {.confirms = writes, .records = keeping.ledger || keeping.watched}),
          core_(core) {}

private:
    void confirm() override;
    void record() override;
    void ended(Failure error, bool acquired, std::int64_t token) override;

    ClientCore& core_;
};

// No reply came: the command may have run. A refused AUTH or TLS handshake
// means nothing was sent.
bool outcome_unknown(const Failure& error) {
    return is_unanswered(error.code()) && !error.is(errc::auth_refused) && !error.is(errc::tls_failed);
}

// Replica sync (docs/deployments.md) before the caller learns it holds it.
void Acquiring::confirm() {
    if (!core_.transport.syncs_replicas(hold.key)) return replicas_answered(nullptr, true);
    sync_acquire(core_.transport, hold.key, taken.empty() ? hold.subject() : taken,
                 [self = shared_from_this(), this](Failure refusal, bool answered) {
                     replicas_answered(std::move(refusal), answered);
                 });
}

// Recorded before the caller learns it holds it, so renewal never lags.
void Acquiring::record() {
    if (keeping.ledger) core_.holds.taken(hold.key, hold.counted_as());
    if (keeping.watched) core_.watchdog.track(keeping.renew, hold.kind, hold.key, hold.counted_as(), sent, keeping.ttl);
}

void Acquiring::ended(Failure error, bool acquired, std::int64_t token) {
    core_.resends.acquire_ended(hold.key, hold.counted_as(), std::exchange(paused_resend, 0), !error && acquired);
    // Given back as Redisson does, instead of left held until its lease ends,
    // in the background: sent before the caller is told, so the owner's next
    // acquire goes behind it. With other holds known, the release verdict
    // gives the extra one back.
    if (error && gives_back_unknown && request.give_back && outcome_unknown(error) &&
        !(keeping.ledger && core_.holds.known(hold.key, hold.counted_as()) > 0)) {
        Transport::InOrder in_order;
        request.give_back(hold, [] {});
    }
    // Counted once confirmed: an acquire replicas refused is a failure.
    const auto outcome = error ? Telemetry::Outcome::failed
                         : acquired ? Telemetry::Outcome::acquired
                                    : Telemetry::Outcome::gave_up;
    core_.telemetry->acquire_ended(hold.kind, hold.key, outcome, Clock::now() - started);
    auto handler = std::move(done);
    // Contained here: a caller's async completion needs no wrapper of its own.
    call_contained(core_, hold.kind, hold.key, handler, std::move(error), acquired, token);
}

}  // namespace

void acquire_hold(ClientCore& core, AcquireSpec spec, AcquireHandler done) {
    auto a = std::make_shared<Acquiring>(
        core, AcquireRecord{std::move(spec.hold), spec.keeping, spec.writes, spec.gives_back_unknown,
                            std::move(spec.taken), std::move(spec.request), std::move(done), Clock::now(), {}, 0});
    AcquireRequest& request = a->request;
    request.meter = {core.telemetry.get(), a->hold.kind};
    request.sharded = core.transport.shards_channel(a->hold.key, request.channel);
    if (a->keeping.watched) request.sent_at = &a->sent;
    // Before the first attempt is sent: a re-send of the owner's last release
    // must not reach a hold this acquire takes (hold/resends.hpp).
    a->paused_resend = core.resends.acquiring(a->hold.key, a->hold.counted_as());
    a->start();
}

void completion_threw(ClientCore& core, std::string_view kind, const std::string& name, std::exception_ptr error) {
    if (!core.telemetry->listening()) return;
    Event event;
    event.kind = Event::Kind::completion_threw;
    event.primitive = Telemetry::label(kind);
    event.name = name;
    event.detail = "a completion threw " + message_of(error) + "; holdfast swallowed it (docs/async.md)";
    core.telemetry->tell(event);
}

void confirm_write(ClientCore& core, const std::string& key, std::function<void()> done) {
    if (!core.transport.syncs_replicas(key)) return done();
    sync_release(core.transport, key, std::move(done));
}

}  // namespace holdfast::detail
