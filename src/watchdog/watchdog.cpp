#include "watchdog/watchdog.hpp"

#include <vector>

#include "primitive/replica_sync.hpp"
#include "telemetry/telemetry.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

Watchdog::Watchdog(Transport& transport, const Telemetry& telemetry, std::chrono::milliseconds lease,
                   std::size_t batch_size)
    : transport_(transport), telemetry_(telemetry), lease_(lease), timer_(transport.loop()), book_(lease, batch_size) {}

Watchdog::~Watchdog() = default;

void Watchdog::track(const Script* renew, std::string_view kind, const std::string& key, const std::string& owner,
                     Clock::time_point sent, std::chrono::milliseconds ttl) {
    std::lock_guard lock(mutex_);
    if (book_.track(renew, kind, key, owner, sent, ttl, Clock::now())) transport_.run_on_loop([this] { arm(); });
}

void Watchdog::extend(const std::string& key, const std::string& owner, Clock::time_point sent,
                      std::chrono::milliseconds ttl) {
    std::lock_guard lock(mutex_);
    book_.extend(key, owner, sent, ttl);
}

void Watchdog::untrack(const std::string& key, const std::string& owner, bool tell_lost) {
    std::optional<std::stop_source> lost;
    {
        std::lock_guard lock(mutex_);
        lost = book_.untrack(key, owner);
    }
    // Outside the mutex: stop callbacks are user code.
    if (tell_lost && lost) lost->request_stop();
}

std::stop_token Watchdog::lease_lost(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    return book_.lease_lost(key, owner);
}

std::optional<std::chrono::milliseconds> Watchdog::lost_for(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    return book_.lost_for(key, owner, Clock::now());
}

bool Watchdog::renews(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    return book_.renews(key, owner);
}

std::size_t Watchdog::tracked() const {
    std::lock_guard lock(mutex_);
    return book_.tracked();
}

void Watchdog::taken(const std::string& key, const std::string& owner) {
    std::lock_guard lock(mutex_);
    book_.taken(key, owner, Clock::now());
}

std::int64_t Watchdog::known(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    return book_.known(key, owner);
}

std::optional<Watchdog::Clock::duration> Watchdog::given_back(const std::string& key, const std::string& owner,
                                                              bool all) {
    std::lock_guard lock(mutex_);
    return book_.given_back(key, owner, all, Clock::now());
}

std::size_t Watchdog::counted() const {
    std::lock_guard lock(mutex_);
    return book_.counted();
}

void Watchdog::arm() {
    std::optional<Clock::time_point> wake;
    {
        std::lock_guard lock(mutex_);
        wake = book_.next_wake();
    }
    if (!wake) return;  // nothing to do; the next track() arms again
    timer_.expires_at(*wake);
    timer_.async_wait([this](asio::error_code ec) {
        if (!ec) on_timer();
    });
}

void Watchdog::on_timer() {
    const auto now = Clock::now();
    std::vector<LeaseBook::Loss> lost;
    bool renewal_due;
    {
        std::lock_guard lock(mutex_);
        lost = book_.expire(now);
        renewal_due = book_.renewal_due(now);
    }
    tell_lost(lost);
    if (renewal_due) renew_all(now);
    arm();
}

void Watchdog::tell_lost(std::vector<LeaseBook::Loss>& lost) {
    // Outside the mutex: stop callbacks are user code, and so is the event handler.
    for (auto& loss : lost) {
        loss.source.request_stop();
        if (!telemetry_.listening()) continue;
        Event event;
        event.kind = Event::Kind::lease_lost;
        event.primitive = Telemetry::label(loss.kind);
        event.name = loss.id.first;
        event.owner = loss.id.second;
        event.server = transport_.config().server_name();
        event.detail = std::move(loss.why);
        telemetry_.tell(event);
    }
}

void Watchdog::renewal_failed(const std::vector<Sent>& batch, const std::string& why) {
    if (!telemetry_.listening()) return;
    std::vector<std::string_view> kinds;
    {
        std::lock_guard lock(mutex_);
        kinds = book_.kinds_of(batch);
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (kinds[i].empty()) continue;  // unlocked meanwhile
        Event event;
        event.kind = Event::Kind::renewal_failed;
        event.primitive = Telemetry::label(kinds[i]);
        event.name = batch[i].id.first;
        event.owner = batch[i].id.second;
        event.server = transport_.config().server_name();
        event.detail = why + "; retried at the next renewal, lost if none is confirmed within the lease";
        telemetry_.tell(event);
    }
}

// The renewed holds by renew script and shard, up to batch_size keys per call.
void Watchdog::renew_all(Clock::time_point now) {
    std::vector<LeaseBook::Batch> batches;
    {
        std::lock_guard lock(mutex_);
        batches = book_.renewals(now, [this](const std::string& key) { return transport_.shard_of(key); });
    }
    for (auto& batch : batches)
        send_renewal(*batch.renew, std::make_shared<std::vector<Sent>>(std::move(batch.holds)), now);
}

void Watchdog::send_renewal(const Script& renew, std::shared_ptr<std::vector<Sent>> batch, Clock::time_point now) {
    const std::string lease = std::to_string(lease_.count());
    std::vector<std::string_view> keys, args{lease};
    for (const auto& sent : *batch) {
        keys.push_back(sent.id.first);
        args.push_back(sent.id.second);
    }
    transport_.eval(renew, keys, args, [this, batch, now](Failure error, Reply reply) {
        // A transport or server error changes nothing: the next tick
        // retries, and the local deadline ends a hold never confirmed.
        if (error || !reply.is_array())
            return renewal_failed(*batch, error ? error.message() : "the server refused the renewal: " + reply.str);
        // Replica sync, as after an acquire: a renewal only the master has
        // is lost in a failover, and the promoted replica ends the lease
        // early. The WAIT goes on the connection that renewed, after it.
        const std::string& key = batch->front().id.first;
        if (!transport_.syncs_replicas(key)) return on_renewed(*batch, reply, now);
        transport_.sync_replicas(key, [this, batch, now, reply = std::move(reply)](Failure error,
                                                                                   Transport::ReplicaAck ack) {
            const auto why = unsynced(transport_, error, ack);
            if (why && transport_.config().replica_sync == ReplicaSync::required)
                return renewal_failed(*batch, "renewed on master " + ack.master + " but " + *why +
                                                  " (replica_sync = required)");
            on_renewed(*batch, reply, now);
        });
    });
}

void Watchdog::on_renewed(const std::vector<Sent>& batch, const Reply& reply, Clock::time_point sent) {
    LeaseBook::Renewed result;
    {
        std::lock_guard lock(mutex_);
        result = book_.renewed(batch, reply, sent);
    }
    for (std::string_view kind : result.kinds) telemetry_.renewed(kind);
    tell_lost(result.lost);
}

}  // namespace holdfast::detail
