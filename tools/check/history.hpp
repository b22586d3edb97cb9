// Histories: every worker appends one line per operation step to its own
// file; the coordinator appends the faults it caused to another. The checker
// reads them all back and merges them on CLOCK_MONOTONIC time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"

namespace holdfast::check {

/// queued: a FairLock waiter, during its acquire call, saw itself in the queue.
/// lost: the hold's lease_lost_token() fired (the library told the holder).
/// renewed: the hold was still renewed by the watchdog after its release was
/// tried (whatever the release's outcome), which the library promises never happens.
enum class Op { acquire, read, write, release, queued, lost, renewed };
/// ok and fail are definite; unknown means the call failed in a way that
/// leaves open whether it took effect (a dropped connection, a timeout).
enum class Phase { invoke, ok, fail, unknown };
/// The side of a lock an acquisition asks for: shared only for a
/// ReadWriteLock's read side (several holders at once); exclusive otherwise.
enum class Access { exclusive, shared };

struct Event {
    Nanos time = 0;
    int worker = 0;
    Op op = Op::acquire;
    Phase phase = Phase::invoke;
    int lock = -1;
    long hold = 0;            // the worker's acquisition number; one hold = acquire..release
    Access access = Access::exclusive;
    std::int64_t token = -1;  // fencing token, -1 without one
    /// acquire invoke: the lease deadline (invoke + lease; renewals may extend it);
    /// read ok: the value read; write invoke/ok: the value written;
    /// release ok: hold count the lock still has for this worker (0 unless it leaked).
    std::int64_t value = -1;
    std::string message;  // the error, for fail and unknown; acquire invoke: the owner id the hold takes
};

/// Where a group lock's acquire invoke notes the values it asks for, after
/// the owner id in its message: "<owner> values=ab".
inline constexpr std::string_view values_note = " values=";

/// How the message of a release that failed with ReplicaSyncError begins: it
/// released the hold on the master, but no replica confirmed it.
inline constexpr const char* unconfirmed_release = "unconfirmed: ";

/// One fault as the coordinator applied it.
struct Fault {
    Nanos start = 0;
    Nanos end = 0;  // == start for instantaneous faults
    Nemesis kind = Nemesis::none;
    int worker = -1;  // kill-holder, pause-holder: the worker hit
    int lock = -1;    // kill-holder, pause-holder: the lock it held
    std::string detail;
};

/// What a lock server held at one moment, as the coordinator's witness read
/// it: a lock's key on one node that said it was a master, in one script
/// (tools/check/witness_read.lua). The read ran between `time`, taken
/// before it was sent (whatever had returned to its caller by then had run
/// before it), and `answered`, taken when its reply had come (whatever was
/// called after that ran after it).
struct Sample {
    Nanos time = 0;
    Nanos answered = 0;
    int port = 0;
    int lock = -1;
    std::string type = "none";  // of the lock's key: hash (a lock), string (a semaphore's count), none
    std::int64_t pttl = -2;     // its PTTL: -1 no expiry, -2 no key
    std::int64_t free = -1;     // a semaphore's free permits (-1: no count)
    std::int64_t held = 0;      // a permit-expirable semaphore's permits held (its ids, expired or not)
    std::vector<std::string> fields;  // a lock hash's fields: owner ids (a writer's with `:write`); a group
                                      // lock's: its holds, "<owner>=<value>" (group_holds())
};

/// One message published on a lock's channel, as the coordinator's unlock
/// listener heard it on the master (unlocks.log).
struct Heard {
    Nanos time = 0;  // when the listener read it: after the script that published it ran
    int port = 0;
    int lock = -1;
    std::string channel;
    std::string payload;
};

/// One key on a master after the run, as the sweep read it (sweep.log): the
/// workers gone, the nemesis done.
struct SweptKey {
    int port = 0;
    std::string key;
    std::string type;
    std::int64_t pttl = -2;   // -1: no expiry
    std::string value = "-";  // a string's
    std::int64_t members = 0;   // a zset's or list's length
    std::int64_t unleased = 0;  // a zset's members scored "never ends" (a permit without a lease)
    std::vector<std::string> fields;  // a hash's fields but `mode`; a group lock's: its holds (group_holds())
};

/// Appends lines to a history file with one write(2) each, so a SIGKILL
/// never leaves half a line and loses nothing already logged.
class HistoryWriter {
public:
    explicit HistoryWriter(const std::string& path);
    ~HistoryWriter();
    HistoryWriter(const HistoryWriter&) = delete;
    HistoryWriter& operator=(const HistoryWriter&) = delete;

    void write(const Event& event);
    void write(const Fault& fault);
    void write(const Sample& sample);
    void write(const Heard& heard);
    void write(const SweptKey& key);

private:
    void append(const std::string& line);
    std::string path_;
    int fd_ = -1;
};

/// Every event of every worker-*.log in `dir`, ordered by time. Throws
/// std::runtime_error naming the file and line of anything malformed.
std::vector<Event> read_events(const std::string& dir);
/// The faults in `dir`/nemesis.log, ordered by start.
std::vector<Fault> read_faults(const std::string& dir);
/// The witness's samples in `dir`/witness.log (none if there is no such
/// file), ordered by time.
std::vector<Sample> read_samples(const std::string& dir);

/// The messages in `dir`/unlocks.log (none if there is no such file), by time.
std::vector<Heard> read_heard(const std::string& dir);
/// The keys in `dir`/sweep.log (none if there is no such file).
std::vector<SweptKey> read_swept(const std::string& dir);
/// The lock of the run a channel belongs to ("redisson_lock__channel:{check:lock:3}" -> 3), or -1.
int lock_of_channel(const std::string& channel);

std::string op_name(Op op);
std::string phase_name(Phase phase);
std::string access_name(Access access);

}  // namespace holdfast::check
