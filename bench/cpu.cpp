#include "cpu.hpp"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "sync_redis.hpp"

namespace holdfast::bench {

double server_cpu_seconds(const Config& config) {
    support::SyncRedis raw(config.port);
    const std::string info = raw.string({"INFO", "cpu"});
    double total = 0;
    for (const char* field : {"used_cpu_sys:", "used_cpu_user:"})
        if (const auto at = info.find(field); at != std::string::npos)
            total += std::strtod(info.c_str() + at + std::strlen(field), nullptr);
    return total;
}

double own_cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace holdfast::bench
