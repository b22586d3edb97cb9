// holdfast status, list and unlock on a multi-value lock's group.
#include <nlohmann/json.hpp>

#include <regex>

#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using CliGroup = CliTest;

TEST_F(CliGroup, StatusListsEachValueAndListCountsThem) {
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A", "12B"});
    seats.lock();
    const auto status = holdfast({"status", "flight"});
    ASSERT_EQ(status.status, 0) << status.err;
    EXPECT_TRUE(status.out.starts_with("flight: 2 values held (multi-value lock: Redisson's getMultiLock(group, "
                                       "values))\n  ttl: "))
        << status.out;
    for (const std::string& field : seats.fields())
        EXPECT_NE(status.out.find("  value " + field + ": " + client.current_owner() + " (hold count 1, expires in "),
                  std::string::npos)
            << status.out;

    const auto json = nlohmann::json::parse(holdfast({"status", "--json", "flight"}).out);
    EXPECT_EQ(json["kind"], "multi_value_lock");
    ASSERT_EQ(json["values"].size(), 2u);
    EXPECT_EQ(json["values"][0]["owner"], client.current_owner());
    EXPECT_EQ(json["values"][0]["hold_count"], 1);
    EXPECT_TRUE(json["values"][0]["expires_ms"].is_number_integer());

    const auto table = holdfast({"list"});
    ASSERT_EQ(table.status, 0) << table.err;
    EXPECT_TRUE(std::regex_search(table.out, std::regex("flight +multi_value_lock +[^ ]+ +" + client.current_owner() +
                                                        " x1 of a value \\+1 more +- +2 values")))
        << table.out;
    seats.unlock();
}

TEST_F(CliGroup, ForceUnlockSaysWhyItCannotAndChangesNothing) {
    Client client(config());
    MultiValueLock seats(client, "flight", {"12A"});
    seats.lock();
    const auto result = holdfast({"unlock", "--force", "flight"});
    EXPECT_EQ(result.status, 1);
    EXPECT_NE(result.err.find("multi-value lock"), std::string::npos) << result.err;
    EXPECT_TRUE(seats.is_held_by_current_thread());
    seats.unlock();
}

}  // namespace
}  // namespace holdfast::testing
