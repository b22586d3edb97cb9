// The client configuration the global options describe: where the URL comes
// from (--url, --url-file, HOLDFAST_URL, REDIS_URL), TLS, timeouts, -v.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "cli/cli.hpp"
#include "common/quoted.hpp"
#include "holdfast/holdfast.hpp"

namespace holdfast::cli {
namespace {

// The first line of `path`, without trailing blanks (a newline, a CR).
std::string url_from_file(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in) throw UsageError("cannot read --url-file " + detail::quoted(path) + ": " + std::strerror(errno));
    std::getline(in, line);
    line.erase(line.find_last_not_of(" \t\r\n") + 1);
    if (line.empty())
        throw UsageError("--url-file " + detail::quoted(path) + " has no URL on its first line");
    return line;
}

// --url, else --url-file, else the environment: the first one given.
std::string url_of(const GlobalOptions& options) {
    if (options.url) return *options.url;
    if (!options.url_file.empty()) return url_from_file(options.url_file);
    for (const char* name : {"HOLDFAST_URL", "REDIS_URL"})
        if (const char* value = std::getenv(name); value && *value) return value;
    return "redis://127.0.0.1:6379";
}

// A password where others can read it: said on stderr, as redis-cli warns of
// -a and ssh of a key file others can read (ssh refuses it; holdfast goes on).
void warn_of_exposed_password(const GlobalOptions& options, const Config& config) {
    if (config.password.empty() && config.sentinel_password.empty()) return;
    if (options.url) {
        warn("warning: the password in --url shows in ps to every user of this machine for as long as holdfast "
             "runs; give the URL in HOLDFAST_URL or in a file only you can read (--url-file)");
        return;
    }
    struct stat file {};
    if (options.url_file.empty() || ::stat(options.url_file.c_str(), &file) != 0 || (file.st_mode & S_IROTH) == 0)
        return;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(file.st_mode & 07777));
    warn("warning: --url-file " + detail::quoted(options.url_file) + " holds a password and every user of this "
         "machine can read it (mode " + mode + "); make it readable by its owner only: chmod 600 " +
         detail::quoted(options.url_file));
}

}  // namespace

Config make_config(const GlobalOptions& options) {
    Config config;
    try {
        config = Config::from_uri(url_of(options));
    } catch (const std::invalid_argument& e) {
        throw UsageError(describe(e));
    }
    warn_of_exposed_password(options, config);
    if (options.watchdog_timeout) config.lock_watchdog_timeout = *options.watchdog_timeout;
    if (options.fair_lock_wait_timeout) config.fair_lock_wait_timeout = *options.fair_lock_wait_timeout;
    if (options.timeout) config.connect_timeout = config.timeout = *options.timeout;
    const bool tls_files = !options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_key.empty();
    if ((tls_files || !options.tls_server_name.empty()) && !config.tls.enabled)
        throw UsageError("--tls-ca, --tls-cert, --tls-key and --tls-server-name are for TLS: give a rediss:// URL");
    if (options.tls_cert.empty() != options.tls_key.empty())
        throw UsageError("give --tls-cert and --tls-key together (a client certificate and its key)");
    if (tls_files) {
        config.tls.ca_file = options.tls_ca;
        config.tls.cert_file = options.tls_cert;
        config.tls.key_file = options.tls_key;
    }
    if (!options.tls_server_name.empty()) config.tls.server_name = options.tls_server_name;
    if (options.verbose) config.on_event = event_logger();  // holdfast/log.hpp: levels and timestamps, on stderr
    return config;
}

}  // namespace holdfast::cli
