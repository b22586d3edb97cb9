// Capacity: what one Client's memory holds per held lock and per waiter, and
// how fast a crowd of waiters drains. Memory is the heap in use (glibc's
// mallinfo2: every arena plus mmapped blocks, chunk overhead included) before
// and after, with the bench's own objects (Lock handles, owner strings) made
// before the first reading, so the difference is what the library keeps.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "holdfast/config.hpp"

namespace holdfast::bench {

/// async_lock calls in flight at once while taking the held locks: enough to
/// keep the connections' batches full, few enough that queued requests do not
/// count as held memory.
inline constexpr std::size_t held_locks_in_flight = 2000;
/// Waiters asked for and not yet counted waiting, at most: a million async_lock
/// calls at once queue a million attempts, whose replies then come later than
/// Config::timeout on a busy machine (the connection is dropped as dead, and
/// the holders' renewals are late enough for their leases to be lost).
inline constexpr std::int64_t waiters_not_yet_waiting = 5000;

/// Whether this build's allocator reports the heap in use (glibc's does; a
/// sanitizer's mallinfo2 reports zeros).
bool heap_measurable();

struct HeldLocks {
    std::size_t locks = 0;
    double handle_bytes_per_lock = 0;  // the bench's Lock objects and names: not the library's
    double library_bytes_per_lock = 0;  // heap held while the locks are held, per lock
    double left_bytes_per_lock = 0;     // heap still held after every release, per lock
    double acquire_seconds = 0;         // to take them all, a bounded window of async_lock in flight
    long long keys_while_held = 0;      // DBSIZE of the run's database while held: must be `locks`
    long long keys_after = 0;           // DBSIZE after every release: must be 0
    std::size_t failed = 0;             // acquires not granted and releases that failed
    std::map<std::string, long long> events;  // what the Client told (Config::on_event), by kind
};

/// One Client, one owner, takes `locks` locks with async_lock (no lease: the
/// watchdog renews them), reads the heap, releases them all. Uses `config`'s
/// database, which must be empty.
HeldLocks run_held_locks(const Config& config, std::size_t locks);

struct Waiters {
    std::size_t waiters = 0, locks = 0;
    double library_bytes_per_waiter = 0;  // heap held while every waiter waits, per waiter
    double queue_seconds = 0;             // from the first async_lock to every waiter counted waiting
    double listing_seconds = 0;           // from then to every waiter listed on the server (its second attempt answered)
    long long listed = 0;                 // waiters listed when the drain began (all, unless listing timed out)
    double drain_seconds = 0;             // from the holders' releases to the last waiter's grant
    double handoffs_per_s = 0;            // waiters ÷ drain_seconds: one owner change per waiter
    double server_us_per_change = 0;      // the server's CPU time over the drain, per owner change
    double client_us_per_change = 0;      // this process's CPU time over the drain (all threads), per owner change
    std::size_t granted = 0;              // waiters granted exactly once
    std::size_t granted_twice = 0;        // must be 0
    std::size_t never_granted = 0;        // must be 0 (a timeout, a false or an error)
    long long keys_after = 0;             // DBSIZE after the drain: must be 0
    std::map<std::string, long long> events;  // what the Client told (Config::on_event), by kind
    std::string first_error;  // what the first waiter that ended with an error was told
    std::string failure;  // set when the waiters could not all be made to wait: nothing else is measured
};

/// One Client: one owner holds `locks` locks, `waiters` other owners (waiter i
/// on lock i % locks) call async_lock on them and wait, at most a few thousand
/// not yet counted waiting at a time; once the Client counts them all waiting
/// and the server lists them all (the drain then times handoffs, not the
/// queue's last attempts), the heap is read, the holders release, and every waiter
/// releases as soon as it is granted, handing the lock to the next. Uses
/// `config`'s database, which must be empty. Gives up on the drain after
/// `drain_limit`, counting the waiters still waiting as never granted.
Waiters run_waiters(const Config& config, std::size_t waiters, std::size_t locks, std::chrono::seconds drain_limit);

}  // namespace holdfast::bench
