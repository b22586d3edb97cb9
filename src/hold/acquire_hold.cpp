// The acquire half of the hold pipeline (hold/hold.hpp).
#include <memory>

#include "common/is_error.hpp"
#include "common/message_of.hpp"
#include "common/quoted.hpp"
#include "core/client_core.hpp"
#include "hold/contained.hpp"
#include "hold/hold.hpp"
#include "holdfast/errors.hpp"
#include "primitive/replica_sync.hpp"
#include "telemetry/telemetry.hpp"

namespace holdfast::detail {

std::string HoldId::subject() const { return std::string(kind) + " " + quoted(key); }

namespace {

using Clock = std::chrono::steady_clock;

// What the steps after the acquire need, shared by their closures.
struct Acquiring {
    HoldId hold;
    Keeping keeping;
    bool writes;
    bool gives_back_unknown;
    std::string taken;
    std::function<void(std::function<void()>)> give_back;
    AcquireHandler done;
    Clock::time_point started = Clock::now();
    Clock::time_point sent;  // of the attempt that took it: its lease runs from then at the latest
};

// No reply came: the command may have run. A refused AUTH or TLS handshake
// means nothing was sent.
bool outcome_unknown(const std::exception_ptr& error) {
    return is<ConnectionError>(error) && !is<AuthError>(error) && !is<TlsError>(error);
}

void finish(ClientCore& core, Acquiring& a, std::exception_ptr error, bool acquired, std::int64_t token) {
    const HoldId& hold = a.hold;
    // Recorded before the caller learns it holds it, so renewal never lags.
    if (!error && acquired) {
        if (a.keeping.ledger) core.holds.taken(hold.key, hold.field);
        if (a.keeping.watched)
            core.watchdog.track(a.keeping.renew, hold.kind, hold.key, hold.field, a.sent, a.keeping.ttl);
    }
    // Given back as Redisson does, instead of left held until its lease ends.
    // With other holds known, the release verdict gives the extra one back.
    if (error && a.gives_back_unknown && a.give_back && outcome_unknown(error) &&
        !(a.keeping.ledger && core.holds.known(hold.key, hold.field) > 0))
        a.give_back([] {});
    // Counted once confirmed: an acquire replicas refused is a failure.
    const auto outcome = error ? Telemetry::Outcome::failed
                         : acquired ? Telemetry::Outcome::acquired
                                    : Telemetry::Outcome::gave_up;
    core.telemetry->acquire_ended(hold.kind, hold.key, outcome, Clock::now() - a.started);
    auto done = std::move(a.done);
    done(std::move(error), acquired, token);
}

}  // namespace

void acquire_hold(ClientCore& core, AcquireSpec spec, AcquireHandler done) {
    auto a = std::make_shared<Acquiring>(Acquiring{spec.hold, spec.keeping, spec.writes, spec.gives_back_unknown,
                                                   spec.taken.empty() ? spec.hold.subject() : std::move(spec.taken),
                                                   spec.request.give_back, std::move(done)});
    AcquireRequest& request = spec.request;
    request.meter = {core.telemetry.get(), a->hold.kind};
    if (a->keeping.watched)
        request.attempt = [a, attempt = std::move(request.attempt)](std::function<void(Attempt)> report) {
            a->sent = Clock::now();
            attempt(std::move(report));
        };
    detail::acquire(core.transport, std::move(request),
                    [&core, a](std::exception_ptr error, bool acquired, std::int64_t token) {
                        if (error || !acquired || !a->writes || !core.transport.syncs_replicas(a->hold.key))
                            return finish(core, *a, std::move(error), acquired, token);
                        // Replica sync (docs/deployments.md) before the caller learns it holds it.
                        sync_acquire(core.transport, a->hold.key, a->taken, a->give_back,
                                     [&core, a, token](std::exception_ptr e) { finish(core, *a, e, !e, e ? 0 : token); });
                    });
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
