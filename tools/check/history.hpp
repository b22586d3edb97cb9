// Histories: every worker appends one line per operation step to its own
// file; the coordinator appends the faults it caused to another. The checker
// reads them all back and merges them on CLOCK_MONOTONIC time.
#pragma once

#include <cstdint>
#include <string>
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
/// it: the fields of a lock's hash (owner ids; a writer's with `:write`) on
/// one node that said it was a master. The read ran between `time`, taken
/// before it was sent (whatever had returned to its caller by then had run
/// before it), and `answered`, taken when its reply had come (whatever was
/// called after that ran after it).
struct Sample {
    Nanos time = 0;
    Nanos answered = 0;
    int port = 0;
    int lock = -1;
    std::vector<std::string> fields;
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

std::string op_name(Op op);
std::string phase_name(Phase phase);
std::string access_name(Access access);

}  // namespace holdfast::check
