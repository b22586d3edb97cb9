#include "scheduler/lease_book.hpp"

#include <algorithm>

#include "scheduler/lease.hpp"

namespace holdfast::detail {

LeaseBook::LeaseBook(std::chrono::milliseconds lease, std::size_t batch_size)
    : lease_(lease), batch_size_(std::max<std::size_t>(1, batch_size)) {}

std::optional<LeaseBook::Clock::time_point> LeaseBook::track(const Script* renew, std::string_view kind,
                                                             const std::string& key, const std::string& owner,
                                                             Clock::time_point sent, std::chrono::milliseconds ttl,
                                                             Clock::time_point now) {
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
    if (entry.renew && !next_renewal_) next_renewal_ = now + lease_ / 3;
    const auto wake = entry.renew ? std::min(entry.deadline, *next_renewal_) : entry.deadline;
    if (armed_for_ && *armed_for_ <= wake) return std::nullopt;
    armed_for_ = wake;
    return wake;
}

void LeaseBook::extend(const std::string& key, const std::string& owner, Clock::time_point sent,
                       std::chrono::milliseconds ttl) {
    auto it = entries_.find({key, owner});
    if (it == entries_.end() || it->second.expired) return;
    // The timer, armed for the old deadline, finds the new one when it fires:
    // an extension of an explicit lease moves it, not the timer.
    it->second.deadline = sent + ttl - lease_margin(ttl);
}

std::optional<std::stop_source> LeaseBook::untrack(const std::string& key, const std::string& owner) {
    auto it = entries_.find({key, owner});
    if (it == entries_.end()) return std::nullopt;
    std::stop_source lost = std::move(it->second.lost);
    entries_.erase(it);
    return lost;
}

std::stop_token LeaseBook::lease_lost(const std::string& key, const std::string& owner) const {
    auto it = entries_.find({key, owner});
    return it == entries_.end() ? std::stop_token{} : it->second.lost.get_token();
}

std::optional<std::chrono::milliseconds> LeaseBook::lost_for(const std::string& key, const std::string& owner,
                                                             Clock::time_point now) const {
    auto it = entries_.find({key, owner});
    if (it == entries_.end() || !it->second.expired) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.deadline);
}

bool LeaseBook::renews(const std::string& key, const std::string& owner) const {
    auto it = entries_.find({key, owner});
    return it != entries_.end() && it->second.renew && !it->second.expired;
}

std::optional<LeaseBook::Clock::time_point> LeaseBook::next_wake() {
    std::optional<Clock::time_point> wake;
    bool renewing = false;
    for (const auto& [id, entry] : entries_) {
        if (entry.expired) continue;
        renewing = renewing || entry.renew;
        if (!wake || entry.deadline < *wake) wake = entry.deadline;
    }
    if (!renewing) next_renewal_.reset();
    if (next_renewal_ && (!wake || *next_renewal_ < *wake)) wake = next_renewal_;
    armed_for_ = wake;
    return wake;
}

LeaseBook::Loss LeaseBook::lose(const Id& id, Entry& entry, std::string why) {
    entry.expired = true;
    return {entry.lost, entry.kind, id, std::move(why)};
}

std::vector<LeaseBook::Loss> LeaseBook::expire(Clock::time_point now) {
    std::vector<Loss> lost;
    for (auto& [id, entry] : entries_)
        if (!entry.expired && entry.deadline <= now)
            lost.push_back(lose(id, entry,
                                "no renewal confirmed for a whole lease (the server unreachable, paused or refusing)"));
    return lost;
}

std::vector<LeaseBook::Batch> LeaseBook::renewals(Clock::time_point now,
                                                  const std::function<std::size_t(const std::string&)>& shard_of) {
    std::map<std::pair<const Script*, std::size_t>, std::vector<Sent>> groups;
    for (const auto& [id, entry] : entries_)
        if (entry.renew && !entry.expired) groups[{entry.renew, shard_of(id.first)}].push_back({id, entry.generation});
    next_renewal_ = now + lease_ / 3;
    std::vector<Batch> batches;
    for (auto& [group, holds] : groups)
        for (std::size_t start = 0; start < holds.size(); start += batch_size_) {
            const auto first = holds.begin() + static_cast<std::ptrdiff_t>(start);
            const auto last = holds.begin() + static_cast<std::ptrdiff_t>(std::min(holds.size(), start + batch_size_));
            batches.push_back({group.first, std::vector<Sent>(std::make_move_iterator(first), std::make_move_iterator(last))});
        }
    return batches;
}

LeaseBook::Renewed LeaseBook::renewed(const std::vector<Sent>& batch, const Reply& reply, Clock::time_point sent) {
    Renewed result;
    for (std::size_t i = 0; i < batch.size() && i < reply.elements.size(); ++i) {
        auto it = entries_.find(batch[i].id);
        // Unlocked (and maybe re-taken) meanwhile, or already lost locally.
        if (it == entries_.end() || it->second.generation != batch[i].generation || it->second.expired) continue;
        if (reply.elements[i].integer == 1) {
            it->second.deadline = sent + lease_ - lease_margin(lease_);
            result.kinds.push_back(it->second.kind);
            continue;
        }
        result.lost.push_back(
            lose(it->first, it->second, "the server no longer holds it for this owner (expired, deleted or taken)"));
        entries_.erase(it);
    }
    return result;
}

std::vector<std::string_view> LeaseBook::kinds_of(const std::vector<Sent>& batch) const {
    std::vector<std::string_view> kinds;
    for (const Sent& sent : batch) {
        auto it = entries_.find(sent.id);
        kinds.push_back(it == entries_.end() ? std::string_view{} : it->second.kind);
    }
    return kinds;
}

}  // namespace holdfast::detail
