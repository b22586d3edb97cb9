// Bad-input catalog, counts: a semaphore count cannot leave the 64-bit range
// Redis counts in. Every way past it is refused, naming the semaphore, the
// server and the limit, and changes nothing; none saturates silently.
#include <limits>

#include "bad_inputs/bad_inputs.hpp"

namespace holdfast::testing {
namespace {

using Counts = BadInputs;
constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t least = std::numeric_limits<std::int64_t>::min();

TEST_F(Counts, AddingPastInt64IsRefusedAndChangesNothing) {
    Client client(config());
    Semaphore slots(client, "slots");
    ASSERT_TRUE(slots.try_set_permits(most));
    // Told by a code of its own (the script's OVERFLOW), not by Redis's text.
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.add_permits(1); }, errc::count_overflow),
                         {"'slots'", server_name(), "would overflow", "past 9223372036854775807", "not changed"}));
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.release(2); }), {"'slots'", "past 9223372036854775807"}));
    EXPECT_EQ(slots.available_permits(), most);

    slots.add_permits(-most);  // down to 0, then to INT64_MIN + 1
    slots.add_permits(least + 1);
    EXPECT_TRUE(mentions(error_of<ServerError>([&] { slots.add_permits(-2); }),
                         {"'slots'", "past -9223372036854775808", "not changed"}));
    EXPECT_EQ(slots.available_permits(), least + 1);
    EXPECT_EQ(raw->string({"GET", "slots"}), std::to_string(least + 1));
}

// A count beyond INT64 written by someone else is refused by every call, not
// read as INT64_MAX.
TEST_F(Counts, AStoredCountBeyondInt64IsRefused) {
    raw->command({"SET", "slots", "99999999999999999999"});
    Client client(config());
    Semaphore slots(client, "slots");
    EXPECT_TRUE(mentions(error_of<WrongTypeError>([&] { slots.available_permits(); }),
                         {"'slots'", "99999999999999999999"}));
    EXPECT_THROW(slots.try_acquire(), ServerError);
    EXPECT_TRUE(mentions(error_of<WrongTypeError>([&] { slots.add_permits(1); }), {"'slots'", "not a semaphore"}));
    EXPECT_THROW(slots.add_permits(-1), WrongTypeError) << "not an overflow the other way";
    EXPECT_FALSE(slots.try_set_permits(1));
    EXPECT_EQ(raw->string({"GET", "slots"}), "99999999999999999999");
}

}  // namespace
}  // namespace holdfast::testing
