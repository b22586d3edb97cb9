// The acquire half of the hold pipeline (hold/hold.hpp).
#include <asio.hpp>

#include <memory>
#include <optional>
#include <utility>

#include "common/message_of.hpp"
#include "common/quoted.hpp"
#include "core/client_core.hpp"
#include "hold/contained.hpp"
#include "hold/hold.hpp"
#include "hold/replica_retry.hpp"
#include "primitive/acquire_operation.hpp"
#include "primitive/replica_sync.hpp"
#include "telemetry/telemetry.hpp"
#include "transport/channel_listener.hpp"

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
    std::string taken;       // empty: hold.subject(), made only if replica sync needs it
    AcquireRequest request;  // as prepared: run again after a refusal by replica sync
    AcquireHandler done;
    Clock::time_point started = Clock::now();
    // When the attempt that took it was sent: its lease runs from then at the latest.
    Clock::time_point sent;
    // Made only for replica sync's retry: an inline timer would cost every waiter.
    std::unique_ptr<asio::steady_timer> pause;
    // The owner's re-send of an unconfirmed release of this hold, paused while this runs.
    Resends::Id paused_resend = 0;
};

// One waiter, one allocation: the record and the operation that runs its request.
class Acquiring final : public AcquireRecord, public AcquireOperation {
public:
    Acquiring(ClientCore& core, AcquireRecord record)
        : AcquireRecord(std::move(record)), AcquireOperation(core.transport, core.wait_queues, hold, request),
          core_(core) {}

    std::shared_ptr<Acquiring> self() { return std::static_pointer_cast<Acquiring>(shared_from_this()); }

private:
    void ended(Failure error, bool acquired, std::int64_t token) override;

    ClientCore& core_;
};

// No reply came: the command may have run. A refused AUTH or TLS handshake
// means nothing was sent.
bool outcome_unknown(const Failure& error) {
    return is_unanswered(error.code()) && !error.is(errc::auth_refused) && !error.is(errc::tls_failed);
}

void finish(ClientCore& core, Acquiring& a, Failure error, bool acquired, std::int64_t token) {
    const HoldId& hold = a.hold;
    // Recorded before the caller learns it holds it, so renewal never lags.
    if (!error && acquired) {
        if (a.keeping.ledger) core.holds.taken(hold.key, hold.counted_as());
        if (a.keeping.watched)
            core.watchdog.track(a.keeping.renew, hold.kind, hold.key, hold.counted_as(), a.sent, a.keeping.ttl);
    }
    core.resends.acquire_ended(hold.key, hold.counted_as(), std::exchange(a.paused_resend, 0), !error && acquired);
    // Given back as Redisson does, instead of left held until its lease ends,
    // in the background: sent before the caller is told, so the owner's next
    // acquire goes behind it. With other holds known, the release verdict
    // gives the extra one back.
    if (error && a.gives_back_unknown && a.request.give_back && outcome_unknown(error) &&
        !(a.keeping.ledger && core.holds.known(hold.key, hold.counted_as()) > 0)) {
        Transport::InOrder in_order;
        a.request.give_back(hold, [] {});
    }
    // Counted once confirmed: an acquire replicas refused is a failure.
    const auto outcome = error ? Telemetry::Outcome::failed
                         : acquired ? Telemetry::Outcome::acquired
                                    : Telemetry::Outcome::gave_up;
    core.telemetry->acquire_ended(hold.kind, hold.key, outcome, Clock::now() - a.started);
    a.pause.reset();
    auto done = std::move(a.done);
    // Contained here: a caller's async completion needs no wrapper of its own.
    call_contained(core, hold.kind, hold.key, done, std::move(error), acquired, token);
}

// The pause between two tries, ended by a shutdown: the caller is told
// "shutting down", as every waiter is.
class Pause : public ChannelListener {
public:
    Pause(ClientCore& core, std::shared_ptr<Acquiring> a) : core_(core), a_(std::move(a)) {}
    void on_subscribed() override {}
    void on_message(std::string_view) override {}
    void on_refused(const Failure&) override {}
    void on_closed() override {
        a_->pause->cancel();
        finish(core_, *a_, client_closed("; stopped waiting for " + a_->hold.subject()), false, 0);
    }

    WaiterList::Link listed;  // among the transport's waiters

private:
    ClientCore& core_;
    std::shared_ptr<Acquiring> a_;
};

// Replicas did not confirm what the attempt took (a failover under way, say),
// and it was given back. A wait with time left goes on, as after any other
// refusal; one without (a try, a deadline passed) fails with the error.
void refused_by_replicas(ClientCore& core, const std::shared_ptr<Acquiring>& a, Failure error) {
    switch (after_replica_refusal(a->request.deadline, a->request.stop.stop_requested(), Clock::now())) {
        case AfterReplicaRefusal::stopped: return finish(core, *a, nullptr, false, 0);
        case AfterReplicaRefusal::fail: return finish(core, *a, std::move(error), false, 0);
        case AfterReplicaRefusal::retry: break;
    }
    // Told if the client shuts down meanwhile, as a waiting acquire is.
    auto pause = std::make_shared<Pause>(core, a);
    if (!core.transport.add_waiter(pause->listed, pause)) return finish(core, *a, std::move(error), false, 0);
    a->pause = std::make_unique<asio::steady_timer>(core.transport.loop(), replica_retry_pause);
    a->pause->async_wait([&core, a, pause](asio::error_code ec) {
        core.transport.remove_waiter(pause->listed);
        if (!ec) a->start();
    });
}

void Acquiring::ended(Failure error, bool acquired, std::int64_t token) {
    if (error || !acquired || !writes || !core_.transport.syncs_replicas(hold.key))
        return finish(core_, *this, std::move(error), acquired, token);
    // Replica sync (docs/deployments.md) before the caller learns it holds it.
    sync_acquire(core_.transport, hold.key, taken.empty() ? hold.subject() : taken,
                 [a = self()](std::function<void()> then) {
                     Transport::InOrder in_order;  // ahead of the caller's next acquire on the server too
                     a->request.give_back(a->hold, std::move(then));
                 },
                 [a = self(), token](Failure e) {
                     if (e.is(errc::replicas_unconfirmed)) return refused_by_replicas(a->core_, a, e);
                     finish(a->core_, *a, e, !e, e ? 0 : token);
                 });
}

}  // namespace

void acquire_hold(ClientCore& core, AcquireSpec spec, AcquireHandler done) {
    auto a = std::make_shared<Acquiring>(
        core, AcquireRecord{std::move(spec.hold), spec.keeping, spec.writes, spec.gives_back_unknown,
                            std::move(spec.taken), std::move(spec.request), std::move(done), Clock::now(), {},
                            nullptr, 0});
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
