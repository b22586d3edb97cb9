#include "scheduler/watchdog.hpp"

#include <vector>

#include "common/message_of.hpp"
#include "primitive/replica_sync.hpp"
#include "scheduler/lease.hpp"
#include "telemetry/telemetry.hpp"
#include "transport/transport.hpp"

namespace holdfast::detail {

Watchdog::Watchdog(Transport& transport, const Telemetry& telemetry, std::chrono::milliseconds lease,
                   std::size_t batch_size)
    : transport_(transport), telemetry_(telemetry), lease_(lease), batch_size_(std::max<std::size_t>(1, batch_size)), timer_(transport.loop()) {}

Watchdog::~Watchdog() = default;

void Watchdog::track(const Script* renew, std::string_view kind, const std::string& key, const std::string& owner,
                     Clock::time_point sent, std::chrono::milliseconds ttl) {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = entries_.try_emplace({key, owner});
    Entry& entry = it->second;
    if (inserted || entry.expired) {
        // A hold lost locally and taken again starts afresh: the old token stays stopped.
        entry = Entry{};
        entry.generation = ++next_generation_;
    }
    if (renew) entry.renew = renew;
    entry.kind = kind;
    // This command set the TTL last (commands on one key keep their order).
    entry.deadline = sent + ttl - lease_margin(ttl);
    if (entry.renew && !next_renewal_) next_renewal_ = Clock::now() + lease_ / 3;
    const auto wake = entry.renew ? std::min(entry.deadline, *next_renewal_) : entry.deadline;
    if (!armed_for_ || wake < *armed_for_) {
        armed_for_ = wake;
        transport_.run_on_loop([this] { arm(); });
    }
}

void Watchdog::untrack(const std::string& key, const std::string& owner) {
    std::lock_guard lock(mutex_);
    entries_.erase({key, owner});
}

std::stop_token Watchdog::lease_lost(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    auto it = entries_.find({key, owner});
    return it == entries_.end() ? std::stop_token{} : it->second.lost.get_token();
}

std::optional<std::chrono::milliseconds> Watchdog::lost_for(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    auto it = entries_.find({key, owner});
    if (it == entries_.end() || !it->second.expired) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - it->second.deadline);
}

bool Watchdog::renews(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    auto it = entries_.find({key, owner});
    return it != entries_.end() && it->second.renew && !it->second.expired;
}

std::size_t Watchdog::tracked() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void Watchdog::arm() {
    std::optional<Clock::time_point> wake;
    {
        std::lock_guard lock(mutex_);
        bool renewing = false;
        for (const auto& [id, entry] : entries_) {
            if (entry.expired) continue;
            renewing = renewing || entry.renew;
            if (!wake || entry.deadline < *wake) wake = entry.deadline;
        }
        if (!renewing) next_renewal_.reset();
        if (next_renewal_ && (!wake || *next_renewal_ < *wake)) wake = next_renewal_;
        armed_for_ = wake;
    }
    if (!wake) return;  // nothing to do; the next track() arms again
    timer_.expires_at(*wake);
    timer_.async_wait([this](asio::error_code ec) {
        if (!ec) on_timer();
    });
}

void Watchdog::on_timer() {
    const auto now = Clock::now();
    std::vector<Loss> lost;
    bool renewal_due;
    {
        std::lock_guard lock(mutex_);
        for (auto& [id, entry] : entries_)
            if (!entry.expired && entry.deadline <= now)
                lose(id, entry, "no renewal confirmed for a whole lease (the server unreachable, paused or refusing)",
                     lost);
        renewal_due = next_renewal_ && *next_renewal_ <= now;
    }
    tell_lost(lost);
    if (renewal_due) renew_all(now);
    arm();
}

void Watchdog::lose(const Id& id, Entry& entry, std::string why, std::vector<Loss>& lost) {
    entry.expired = true;
    lost.push_back({entry.lost, entry.kind, id, std::move(why)});
}

void Watchdog::tell_lost(std::vector<Loss>& lost) {
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
        for (const Sent& sent : batch) {
            auto it = entries_.find(sent.id);
            kinds.push_back(it == entries_.end() ? std::string_view{} : it->second.kind);
        }
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

// Groups the renewed holds by renew script and shard, up to batch_size_ keys per call.
void Watchdog::renew_all(Clock::time_point now) {
    std::map<std::pair<const Script*, std::size_t>, std::vector<Sent>> groups;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, entry] : entries_)
            if (entry.renew && !entry.expired)
                groups[{entry.renew, transport_.shard_of(id.first)}].push_back({id, entry.generation});
        next_renewal_ = now + lease_ / 3;
    }
    const std::string lease = std::to_string(lease_.count());
    for (auto& [group, ids] : groups) {
        for (std::size_t start = 0; start < ids.size(); start += batch_size_) {
            auto batch = std::make_shared<std::vector<Sent>>(
                ids.begin() + static_cast<std::ptrdiff_t>(start),
                ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), start + batch_size_)));
            std::vector<std::string_view> keys, args{lease};
            for (const auto& sent : *batch) {
                keys.push_back(sent.id.first);
                args.push_back(sent.id.second);
            }
            transport_.eval(*group.first, keys, args, [this, batch, now](std::exception_ptr error, Reply reply) {
                // A transport or server error changes nothing: the next tick
                // retries, and the local deadline ends a hold never confirmed.
                if (error || !reply.is_array())
                    return renewal_failed(*batch, error ? message_of(error) : "the server refused the renewal: " + reply.str);
                // Replica sync, as after an acquire: a renewal only the master has
                // is lost in a failover, and the promoted replica ends the lease
                // early. The WAIT goes on the connection that renewed, after it.
                const std::string& key = batch->front().id.first;
                if (!transport_.syncs_replicas(key)) return on_renewed(*batch, reply, now);
                transport_.sync_replicas(key, [this, batch, now, reply = std::move(reply)](
                                                  std::exception_ptr error, Transport::ReplicaAck ack) {
                    const auto why = unsynced(transport_, error, ack);
                    if (why && transport_.config().replica_sync == ReplicaSync::required)
                        return renewal_failed(*batch, "renewed on master " + ack.master + " but " + *why +
                                                          " (replica_sync = required)");
                    on_renewed(*batch, reply, now);
                });
            });
        }
    }
}

void Watchdog::on_renewed(const std::vector<Sent>& batch, const Reply& reply, Clock::time_point sent) {
    std::vector<Loss> lost;
    std::vector<std::string_view> renewed;
    {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < batch.size() && i < reply.elements.size(); ++i) {
            auto it = entries_.find(batch[i].id);
            // Unlocked (and maybe re-taken) meanwhile, or already lost locally.
            if (it == entries_.end() || it->second.generation != batch[i].generation || it->second.expired) continue;
            if (reply.elements[i].integer == 1) {
                it->second.deadline = sent + lease_ - lease_margin(lease_);
                renewed.push_back(it->second.kind);
                continue;
            }
            lose(it->first, it->second, "the server no longer holds it for this owner (expired, deleted or taken)", lost);
            entries_.erase(it);
        }
    }
    for (std::string_view kind : renewed) telemetry_.renewed(kind);
    tell_lost(lost);
}

}  // namespace holdfast::detail
