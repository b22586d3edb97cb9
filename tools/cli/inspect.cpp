// holdfast status and holdfast unlock --force: look at a lock, or break it.
#include <iostream>
#include <string_view>

#include "cli/cli.hpp"
#include "cli/duration.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {
namespace {

std::string describe_ttl(Duration ttl) {
    // remaining_ttl() reports a key without expiry (set by hand) as max().
    if (ttl == Duration::max()) return "none (the key never expires)";
    return format_duration(ttl);
}

void print_holders(const std::vector<Lock::Holder>& holders, std::string_view label) {
    for (const auto& holder : holders)
        std::cout << "  " << label << ": " << holder.owner << " (hold count " << holder.hold_count << ")\n";
}

}  // namespace

int status(const GlobalOptions& global, const std::string& name) {
    Client client(make_config(global));
    Lock lock(client, name);
    const auto holders = lock.holders();  // first: it refuses a key of another type
    const auto ttl = lock.remaining_ttl();
    if (holders.empty() || !ttl) {  // no ttl: released between the two queries
        std::cout << name << ": free\n";
        return exit_code::ok;
    }
    std::cout << name << ": locked\n" << "  ttl: " << describe_ttl(*ttl) << '\n';
    print_holders(holders, "holder");
    return exit_code::ok;
}

int unlock(const GlobalOptions& global, const UnlockOptions& options) {
    if (!options.force) {
        warn("refusing to unlock " + options.name +
             ": a lock belongs to the process that took it, and this command is not that process, so it "
             "cannot release one hold the way the owner would. `holdfast unlock --force " + options.name +
             "` deletes the lock whoever holds it; the holder is not stopped and may still act as if it held it.");
        return exit_code::usage;
    }
    Client client(make_config(global));
    Lock lock(client, options.name);
    // First, to print them: it also refuses a key that is not a lock, as force_unlock() does.
    const auto holders = lock.holders();
    if (!lock.force_unlock()) {
        std::cout << options.name << ": was not locked; nothing deleted\n";
        return exit_code::ok;
    }
    std::cout << options.name << ": force-unlocked (deleted the lock and woke its waiters)\n";
    print_holders(holders, "was held by");
    return exit_code::ok;
}

}  // namespace holdfast::cli
