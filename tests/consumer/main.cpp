// A program outside holdfast's build, built against an installed holdfast
// (tests/consumer/run.sh): takes and releases a lock on the server given.
#include <holdfast/holdfast.hpp>

#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s redis://127.0.0.1:PORT\n", argv[0]);
        return 2;
    }
    holdfast::Client client(argv[1]);
    holdfast::Lock lock(client, "consumer:lock");
    {
        std::lock_guard guard(lock);
        if (!lock.is_held_by_current_thread() || lock.hold_count() != 1) {
            std::fprintf(stderr, "consumer: lock not held after lock()\n");
            return 1;
        }
    }
    if (lock.is_locked()) {
        std::fprintf(stderr, "consumer: lock still held after unlock()\n");
        return 1;
    }
    // An error thrown inside the library is caught here by its public type.
    try {
        lock.release();
        std::fprintf(stderr, "consumer: release of a free lock did not throw\n");
        return 1;
    } catch (const holdfast::NotOwnerError&) {
    }
    std::printf("consumer: holdfast %s: took and released %s on %s\n", holdfast::version, lock.name().c_str(),
                argv[1]);
    return 0;
}
