#include "scheduler/watchdog.hpp"

#include <vector>

#include "transport/transport.hpp"

namespace holdfast::detail {

Watchdog::Watchdog(Transport& transport, std::chrono::milliseconds lease, std::size_t batch_size)
    : transport_(transport), lease_(lease), batch_size_(std::max<std::size_t>(1, batch_size)), timer_(transport.loop()) {}

Watchdog::~Watchdog() = default;

void Watchdog::track(const Script& renew, const std::string& key, const std::string& owner) {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = entries_.try_emplace({key, owner});
    if (inserted) it->second.generation = ++next_generation_;
    it->second.renew = &renew;
    if (!armed_) {
        armed_ = true;
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

bool Watchdog::tracks(const std::string& key, const std::string& owner) const {
    std::lock_guard lock(mutex_);
    return entries_.contains({key, owner});
}

std::size_t Watchdog::tracked() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

void Watchdog::arm() {
    timer_.expires_after(lease_ / 3);
    timer_.async_wait([this](asio::error_code ec) {
        if (!ec) tick();
    });
}

// Groups the holds by renew script and shard, up to batch_size_ keys per call.
void Watchdog::tick() {
    std::map<std::pair<const Script*, std::size_t>, std::vector<Sent>> groups;
    {
        std::lock_guard lock(mutex_);
        if (entries_.empty()) {
            armed_ = false;  // the next track() re-arms
            return;
        }
        for (const auto& [id, entry] : entries_) groups[{entry.renew, transport_.shard_of(id.first)}].push_back({id, entry.generation});
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
            transport_.eval(*group.first, keys, args, [this, batch](std::exception_ptr error, Reply reply) {
                // A transport or server error keeps the holds: the next tick retries.
                if (!error && reply.is_array()) on_renewed(*batch, reply);
            });
        }
    }
    arm();
}

void Watchdog::on_renewed(const std::vector<Sent>& batch, const Reply& reply) {
    std::vector<std::stop_source> lost;
    {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < batch.size() && i < reply.elements.size(); ++i) {
            if (reply.elements[i].integer == 1) continue;
            auto it = entries_.find(batch[i].id);
            if (it == entries_.end() || it->second.generation != batch[i].generation) continue;  // unlocked meanwhile
            lost.push_back(it->second.lost);
            entries_.erase(it);
        }
    }
    // Outside the mutex: stop callbacks are user code.
    for (auto& source : lost) source.request_stop();
}

}  // namespace holdfast::detail
