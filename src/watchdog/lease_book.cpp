#include "watchdog/lease_book.hpp"

#include <algorithm>
#include <map>

#include "watchdog/lease.hpp"

namespace holdfast::detail {

LeaseBook::LeaseBook(std::chrono::milliseconds lease, std::size_t batch_size)
    : lease_(lease), batch_size_(std::max<std::size_t>(1, batch_size)) {}

LeaseBook::Entry* LeaseBook::find(std::string_view key, std::string_view owner) {
    return const_cast<Entry*>(std::as_const(*this).find(key, owner));
}

const LeaseBook::Entry* LeaseBook::find(std::string_view key, std::string_view owner) const {
    const auto holds = owners_.find(owner);
    if (holds == owners_.end()) return nullptr;
    const auto it = holds->second.holds.find(key);
    return it == holds->second.holds.end() ? nullptr : &it->second;
}

const LeaseBook::Entry* LeaseBook::watched(std::string_view key, std::string_view owner) const {
    const Entry* entry = find(key, owner);
    return entry && entry->watched ? entry : nullptr;
}

LeaseBook::Entry& LeaseBook::emplace(const std::string& key, const std::string& owner) {
    return owners_.try_emplace(owner).first->second.holds.try_emplace(key).first->second;
}

void LeaseBook::drop_if_unused(std::string_view key, std::string_view owner) {
    const auto holds = owners_.find(owner);
    if (holds == owners_.end()) return;
    const auto it = holds->second.holds.find(key);
    if (it == holds->second.holds.end() || it->second.watched || it->second.count > 0) return;
    holds->second.holds.erase(it);
    if (holds->second.holds.empty()) keep_or_drop(holds);
}

// An owner that holds nothing now is kept while one of the last few to empty:
// a thread that takes a lock again soon (the common case) then finds its
// record, instead of allocating the owner's name and table again.
void LeaseBook::keep_or_drop(Owners::iterator owner) {
    if (owner->second.kept) return;
    if (kept_empty_.size() == kept_empty_max) {
        const auto oldest = owners_.find(kept_empty_.front());
        kept_empty_.pop_front();
        oldest->second.kept = false;
        if (oldest->second.holds.empty()) owners_.erase(oldest);
    }
    owner->second.kept = true;
    kept_empty_.push_back(owner->first);
}

void LeaseBook::unwatch(std::string_view key, std::string_view owner) {
    Entry* entry = find(key, owner);
    if (!entry || !entry->watched) return;
    entry->watched = false;
    entry->lost = std::stop_source(std::nostopstate);
    --tracked_;
    drop_if_unused(key, owner);
}

void LeaseBook::taken(const std::string& key, const std::string& owner, Clock::time_point now) {
    Entry& entry = emplace(key, owner);
    if (entry.count++ > 0) return;
    entry.since = now;
    ++counted_;
}

std::int64_t LeaseBook::known(const std::string& key, const std::string& owner) const {
    const Entry* entry = find(key, owner);
    return entry ? entry->count : 0;
}

std::optional<LeaseBook::Clock::duration> LeaseBook::given_back(const std::string& key, const std::string& owner,
                                                                bool all, Clock::time_point now) {
    Entry* entry = find(key, owner);
    if (!entry || entry->count == 0) return std::nullopt;
    const Clock::duration held_for = now - entry->since;
    if (all || --entry->count == 0) {
        entry->count = 0;
        --counted_;
        drop_if_unused(key, owner);
    }
    return held_for;
}

std::optional<LeaseBook::Clock::time_point> LeaseBook::track(const Script* renew, std::string_view kind,
                                                             const std::string& key, const std::string& owner,
                                                             Clock::time_point sent, std::chrono::milliseconds ttl,
                                                             Clock::time_point now) {
    Entry& entry = emplace(key, owner);
    if (!entry.watched || entry.expired) {
        // A hold lost locally and taken again starts afresh: the old token stays stopped.
        if (!entry.watched) ++tracked_;
        entry.watched = true;
        entry.expired = false;
        entry.renew = nullptr;
        entry.lost = std::stop_source(std::nostopstate);
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
    Entry* entry = find(key, owner);
    if (!entry || !entry->watched || entry->expired) return;
    // The timer, armed for the old deadline, finds the new one when it fires:
    // an extension of an explicit lease moves it, not the timer.
    entry->deadline = sent + ttl - lease_margin(ttl);
}

std::optional<std::stop_source> LeaseBook::untrack(const std::string& key, const std::string& owner) {
    Entry* entry = find(key, owner);
    if (!entry || !entry->watched) return std::nullopt;
    std::stop_source lost = std::move(entry->lost);
    unwatch(key, owner);
    return lost;
}

std::stop_token LeaseBook::lease_lost(const std::string& key, const std::string& owner) const {
    const Entry* entry = watched(key, owner);
    if (!entry) return {};
    if (!entry->lost.stop_possible()) {
        entry->lost = std::stop_source();
        // Asked for once the hold is lost: stopped already. No callback is registered yet.
        if (entry->expired) entry->lost.request_stop();
    }
    return entry->lost.get_token();
}

std::optional<std::chrono::milliseconds> LeaseBook::lost_for(const std::string& key, const std::string& owner,
                                                             Clock::time_point now) const {
    const Entry* entry = watched(key, owner);
    if (!entry || !entry->expired) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - entry->deadline);
}

bool LeaseBook::renews(const std::string& key, const std::string& owner) const {
    const Entry* entry = watched(key, owner);
    return entry && entry->renew && !entry->expired;
}

std::optional<LeaseBook::Clock::time_point> LeaseBook::next_wake() {
    std::optional<Clock::time_point> wake;
    bool renewing = false;
    for (const auto& [owner, record] : owners_)
        for (const auto& [key, entry] : record.holds) {
            if (!entry.watched || entry.expired) continue;
            renewing = renewing || entry.renew;
            if (!wake || entry.deadline < *wake) wake = entry.deadline;
        }
    if (!renewing) next_renewal_.reset();
    if (next_renewal_ && (!wake || *next_renewal_ < *wake)) wake = next_renewal_;
    armed_for_ = wake;
    return wake;
}

LeaseBook::Loss LeaseBook::lose(std::string_view key, std::string_view owner, Entry& entry, std::string why) {
    entry.expired = true;
    return {entry.lost, entry.kind, Id{key, owner}, std::move(why)};
}

std::vector<LeaseBook::Loss> LeaseBook::expire(Clock::time_point now) {
    std::vector<Loss> lost;
    for (auto& [owner, record] : owners_)
        for (auto& [key, entry] : record.holds)
            if (entry.watched && !entry.expired && entry.deadline <= now)
                lost.push_back(lose(key, owner, entry,
                                    "no renewal confirmed for a whole lease (the server unreachable, paused or "
                                    "refusing)"));
    return lost;
}

std::vector<LeaseBook::Batch> LeaseBook::renewals(Clock::time_point now,
                                                  const std::function<std::size_t(const std::string&)>& shard_of) {
    std::map<std::pair<const Script*, std::size_t>, std::vector<Sent>> groups;
    for (const auto& [owner, record] : owners_)
        for (const auto& [key, entry] : record.holds)
            if (entry.watched && entry.renew && !entry.expired)
                groups[{entry.renew, shard_of(key)}].push_back({{key, owner}, entry.generation});
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
        const auto& [key, owner] = batch[i].id;
        Entry* entry = find(key, owner);
        // Unlocked (and maybe re-taken) meanwhile, or already lost locally.
        if (!entry || !entry->watched || entry->generation != batch[i].generation || entry->expired) continue;
        if (reply.elements[i].integer == 1) {
            entry->deadline = sent + lease_ - lease_margin(lease_);
            result.kinds.push_back(entry->kind);
            continue;
        }
        result.lost.push_back(
            lose(key, owner, *entry, "the server no longer holds it for this owner (expired, deleted or taken)"));
        unwatch(key, owner);
    }
    return result;
}

std::vector<std::string_view> LeaseBook::kinds_of(const std::vector<Sent>& batch) const {
    std::vector<std::string_view> kinds;
    for (const Sent& sent : batch) {
        const Entry* entry = watched(sent.id.first, sent.id.second);
        kinds.push_back(entry ? entry->kind : std::string_view{});
    }
    return kinds;
}

}  // namespace holdfast::detail
