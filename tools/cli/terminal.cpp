#include "cli/terminal.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace holdfast::cli {
namespace {

struct Stat {
    pid_t parent = 0, group = 0;
};

// The parent and process group /proc/<pid>/stat shows (after the command
// name, which may hold spaces and parentheses); zeros if it is gone.
Stat stat_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return {};
    std::istringstream fields(text.substr(close + 1));
    char state;
    Stat stat;
    fields >> state >> stat.parent >> stat.group;
    return fields ? stat : Stat{};
}

// Whether every other process in holdfast's process group is an ancestor of
// holdfast. Without /proc, yes: the common case (holdfast alone in its job).
bool only_ancestors_share_the_group() {
    std::set<pid_t> ancestors;
    for (pid_t p = ::getppid(); p > 1 && ancestors.insert(p).second;) p = stat_of(p).parent;
    DIR* dir = ::opendir("/proc");
    if (!dir) return true;
    bool only_ancestors = true;
    while (const dirent* entry = ::readdir(dir)) {
        const pid_t pid = std::atoi(entry->d_name);
        if (pid <= 0 || pid == ::getpid() || ancestors.contains(pid)) continue;
        if (stat_of(pid).group == ::getpgrp()) {
            only_ancestors = false;
            break;
        }
    }
    ::closedir(dir);
    return only_ancestors;
}

}  // namespace

int terminal_for_command() {
    for (int fd : {0, 1, 2})
        if (::isatty(fd) && ::tcgetpgrp(fd) == ::getpgrp()) return only_ancestors_share_the_group() ? fd : -1;
    return -1;
}

}  // namespace holdfast::cli
