// The command line's usage errors, without a server: each bad argument exits
// 2 with one "holdfast: " line naming what was wrong, before anything is
// contacted. The URL given is a closed port, so a case that got as far as
// connecting would exit 69 instead; a command it was given never runs.
#include "bad_inputs/bad_inputs.hpp"
#include "cli/cli_process.hpp"

namespace holdfast::testing {
namespace {

using Args = std::vector<std::string>;

class CliWithoutServer : public ::testing::Test {
protected:
    void TearDown() override { fs::remove_all(dir); }

    /// holdfast args..., "{ran}" in them replaced by a file only a command run would make.
    Finished holdfast(Args args, bool with_url = true) {
        for (auto& arg : args)
            if (arg == "{ran}") arg = ran();
        if (with_url) args.insert(args.begin(), {"--url", "redis://127.0.0.1:" + std::to_string(closed.port())});
        return Cli(args, dir, {}).wait();
    }
    std::string ran() const { return (dir / "ran").string(); }

    support::ClosedPort closed;
    fs::path dir = make_test_dir();
};

struct Misuse {
    const char* case_name;
    Args args;
    std::vector<std::string> says;  // what stderr must mention
    bool with_url = true;           // --url <closed port> first
};

void PrintTo(const Misuse& m, std::ostream* os) { *os << ::testing::PrintToString(m.args); }

class CliMisuse : public CliWithoutServer, public ::testing::WithParamInterface<Misuse> {};

TEST_P(CliMisuse, Exits2NamingWhatIsWrong) {
    const auto result = holdfast(GetParam().args, GetParam().with_url);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_TRUE(result.err.starts_with("holdfast: ")) << result.err;
    EXPECT_TRUE(mentions(result.err, GetParam().says));
    EXPECT_EQ(result.out, "");
    EXPECT_FALSE(fs::exists(ran())) << "the command ran";
}

INSTANTIATE_TEST_SUITE_P(
    Usage, CliMisuse,
    ::testing::Values(
        // Missing arguments.
        Misuse{"no_subcommand", {}, {"A subcommand is required", "--help"}},
        Misuse{"run_without_name", {"run"}, {"NAME is required", "--help"}},
        Misuse{"status_without_name", {"status"}, {"NAME is required"}},
        Misuse{"unlock_without_name", {"unlock", "--force"}, {"NAME is required"}},
        Misuse{"command_option_without_its_string", {"run", "job", "-c"}, {"--command"}},
        Misuse{"wait_without_its_duration", {"run", "--wait"}, {"--wait"}},
        // Unknown subcommands and options.
        Misuse{"unknown_subcommand", {"frobnicate", "job"},
               {"unknown command 'frobnicate'", "the commands are run, status, list and unlock"}},
        Misuse{"unknown_option_of_run", {"run", "--nope", "job", "--", "touch", "{ran}"},
               {"--nope", "put -- before it: holdfast run NAME -- COMMAND ARGS..."}},
        Misuse{"option_of_another_subcommand", {"status", "--force", "job"}, {"--force"}},
        Misuse{"list_takes_one_pattern", {"list", "a", "b"}, {"not expected: b"}},
        Misuse{"command_without_dashes_and_command_string", {"run", "job", "touch", "{ran}", "-c", "true"},
               {"COMMAND excludes --command", "put -- before it"}},
        // Empty names.
        Misuse{"run_empty_name", {"run", "", "--", "touch", "{ran}"}, {"NAME: a lock name must not be empty"}},
        Misuse{"status_empty_name", {"status", ""}, {"a lock name must not be empty"}},
        Misuse{"unlock_empty_name", {"unlock", "--force", ""}, {"a lock name must not be empty"}},
        // Durations.
        Misuse{"wait_unknown_unit", {"run", "--wait", "1.5q", "job", "--", "touch", "{ran}"},
               {"--wait: bad duration '1.5q'", "unknown unit 'q'", "expected e.g. 500ms"}},
        Misuse{"wait_negative", {"run", "--wait", "-1s", "job", "--", "touch", "{ran}"},
               {"bad duration '-1s'", "does not start with a number"}},
        Misuse{"wait_word", {"run", "--wait", "abc", "job", "--", "touch", "{ran}"}, {"bad duration 'abc'"}},
        Misuse{"wait_empty", {"run", "--wait", "", "job", "--", "touch", "{ran}"}, {"bad duration ''"}},
        Misuse{"wait_two_points", {"run", "--wait", "1..2s", "job", "--", "touch", "{ran}"},
               {"bad duration '1..2s'", "malformed number"}},
        Misuse{"wait_exponent", {"run", "--wait", "1e3", "job", "--", "touch", "{ran}"},
               {"bad duration '1e3'", "unknown unit 'e3'"}},
        Misuse{"wait_too_long", {"run", "--wait", "99999999999h", "job", "--", "touch", "{ran}"},
               {"bad duration '99999999999h'", "too long"}},
        Misuse{"lease_zero", {"run", "--lease", "0", "job", "--", "touch", "{ran}"},
               {"--lease: '0' is not a lease", "greater than 0"}},
        Misuse{"lease_zero_ms", {"run", "--lease", "0ms", "job", "--", "touch", "{ran}"}, {"'0ms' is not a lease"}},
        Misuse{"lease_too_long", {"run", "--lease", "999999999999999999999999s", "job", "--", "touch", "{ran}"},
               {"--lease", "too long"}},
        Misuse{"watchdog_below_3ms", {"--watchdog-timeout", "2ms", "status", "job"},
               {"--watchdog-timeout: '2ms' is below the minimum of 3ms"}},
        Misuse{"watchdog_too_long", {"--watchdog-timeout", "100000000h", "status", "job"},
               {"--watchdog-timeout", "too long"}},
        Misuse{"timeout_zero", {"--timeout", "0", "status", "job"}, {"--timeout: '0' is not a timeout"}},
        Misuse{"fair_lock_wait_timeout_zero", {"--fair-lock-wait-timeout", "0", "status", "job"},
               {"--fair-lock-wait-timeout: '0' must be greater than 0"}},
        Misuse{"kill_after_word", {"run", "--kill-after", "soon", "job", "--", "touch", "{ran}"},
               {"--kill-after: bad duration 'soon'"}},
        // Signals and exit codes.
        Misuse{"signal_unknown", {"run", "--signal", "NOPE", "job", "--", "touch", "{ran}"},
               {"--signal: 'NOPE' is no signal", "TERM, INT, KILL, 9"}},
        Misuse{"signal_zero", {"run", "--signal", "0", "job", "--", "touch", "{ran}"}, {"'0' is no signal"}},
        Misuse{"signal_past_the_last", {"run", "--signal", "65", "job", "--", "touch", "{ran}"},
               {"'65' is no signal"}},
        Misuse{"conflict_exit_code_past_255", {"run", "-E", "300", "job", "--", "touch", "{ran}"},
               {"--conflict-exit-code", "300 not in range 0 to 255"}},
        // Lock kinds exclude each other, and --wait and -n.
        Misuse{"fair_and_spin", {"run", "--fair", "--spin", "job", "--", "touch", "{ran}"}, {"--fair excludes --spin"}},
        Misuse{"fenced_and_fair", {"run", "--fenced", "--fair", "job", "--", "touch", "{ran}"},
               {"--fair excludes --fenced"}},
        Misuse{"shared_and_exclusive", {"run", "--shared", "--exclusive", "job", "--", "touch", "{ran}"},
               {"--shared excludes --exclusive"}},
        Misuse{"semaphore_and_fair", {"run", "--semaphore", "2", "--fair", "job", "--", "touch", "{ran}"},
               {"--fair excludes --semaphore"}},
        Misuse{"wait_and_nonblock", {"run", "-n", "--wait", "1s", "job", "--", "touch", "{ran}"},
               {"--wait excludes --nonblock"}},
        // Semaphore counts: 1 to INT64_MAX, decimal.
        Misuse{"semaphore_zero", {"run", "--semaphore", "0", "pool", "--", "touch", "{ran}"},
               {"--semaphore: '0' is not a count of permits", "from 1 to 9223372036854775807"}},
        Misuse{"semaphore_negative", {"run", "--semaphore", "-1", "pool", "--", "touch", "{ran}"},
               {"'-1' is not a count"}},
        Misuse{"semaphore_hex", {"run", "--semaphore", "0x10", "pool", "--", "touch", "{ran}"},
               {"'0x10' is not a count"}},
        Misuse{"semaphore_exponent", {"run", "--semaphore", "1e3", "pool", "--", "touch", "{ran}"},
               {"'1e3' is not a count"}},
        Misuse{"semaphore_empty", {"run", "--semaphore", "", "pool", "--", "touch", "{ran}"},
               {"'' is not a count"}},
        Misuse{"semaphore_past_int64", {"run", "--semaphore", "9223372036854775808", "pool", "--", "touch", "{ran}"},
               {"--semaphore: '9223372036854775808' is beyond the largest count", "9223372036854775807"}},
        Misuse{"semaphore_far_past_int64", {"run", "--semaphore", "99999999999999999999", "pool", "--", "touch", "{ran}"},
               {"beyond the largest count"}},
        Misuse{"permits_negative", {"unlock", "--force", "--permits", "-1", "pool"},
               {"--permits: '-1' is not a count of permits", "from 0 to"}},
        // unlock without --force refuses, saying why and what --force does.
        Misuse{"unlock_without_force", {"unlock", "job"},
               {"refusing to unlock 'job'", "holdfast unlock --force job"}},
        // URLs.
        Misuse{"url_unknown_scheme", {"--url", "nope://x", "status", "job"}, {"bad Redis URI 'nope://x'", "unknown scheme"},
               false},
        Misuse{"url_port_out_of_range", {"--url", "redis://h:99999", "status", "job"}, {"'redis://h:99999'", "out of range"},
               false},
        Misuse{"url_empty", {"--url", "", "status", "job"}, {"bad Redis URI ''"}, false},
        Misuse{"tls_files_without_tls", {"--tls-ca", "/dev/null", "status", "job"}, {"give a rediss:// URL"}},
        Misuse{"url_and_url_file", {"--url-file", "/dev/null", "status", "job"}, {"--url excludes --url-file"}},
        Misuse{"url_file_missing", {"--url-file", "/nonexistent/holdfast-url", "status", "job"},
               {"--url-file", "/nonexistent/holdfast-url"}, false},
        Misuse{"url_file_without_a_url", {"--url-file", "/dev/null", "status", "job"}, {"has no URL on its first line"},
               false}),
    [](const auto& info) { return std::string(info.param.case_name); });

// A URL file's URL is checked as --url's is.
TEST_F(CliWithoutServer, ABadUrlInAUrlFileExits2) {
    const fs::path file = dir / "url";
    std::ofstream(file) << "redis://:s3cret@h:notaport\n";
    const auto result = holdfast({"--url-file", file.string(), "status", "job"}, false);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_TRUE(mentions(result.err, {"bad Redis URI", "'notaport' is not a number"}));
    EXPECT_EQ(result.err.find("s3cret"), std::string::npos) << result.err;
}

// With --json a usage error is also one JSON object on stdout.
TEST_F(CliWithoutServer, JsonUsageErrorsAreJsonOnStdout) {
    const auto result = holdfast({"status", "--json"});
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_EQ(result.out, "{\"error\":{\"exit_code\":2,\"message\":\"NAME is required\"}}\n");
}

struct Help {
    const char* case_name;
    Args args;
    std::string says;  // on stdout
};

void PrintTo(const Help& h, std::ostream* os) { *os << ::testing::PrintToString(h.args); }

class CliHelp : public CliWithoutServer, public ::testing::WithParamInterface<Help> {};

TEST_P(CliHelp, Exits0PrintingIt) {
    const auto result = holdfast(GetParam().args);
    EXPECT_EQ(result.status, 0) << result.err;
    EXPECT_TRUE(mentions(result.out, {GetParam().says}));
    EXPECT_EQ(result.err, "");
}

INSTANTIATE_TEST_SUITE_P(
    Usage, CliHelp,
    ::testing::Values(Help{"top", {"--help"}, "Usage: holdfast [OPTIONS] SUBCOMMAND"},
                      Help{"run", {"run", "--help"}, "Usage: holdfast run [OPTIONS] NAME [COMMAND...]"},
                      Help{"status", {"status", "--help"}, "Usage: holdfast status"},
                      Help{"list", {"list", "--help"}, "Usage: holdfast list"},
                      Help{"unlock", {"unlock", "--help"}, "Usage: holdfast unlock [OPTIONS] NAME"},
                      Help{"version", {"--version"}, "holdfast "}),
    [](const auto& info) { return std::string(info.param.case_name); });

}  // namespace
}  // namespace holdfast::testing
