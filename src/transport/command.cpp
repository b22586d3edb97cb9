#include "transport/command.hpp"

#include <hiredis/hiredis.h>

#include <new>

namespace holdfast::detail {

std::string encode_command(const std::vector<std::string_view>& args) {
    // Lock commands have a handful of arguments: keep their pointers on the stack.
    constexpr std::size_t small = 16;
    const char* argv_small[small];
    size_t argvlen_small[small];
    std::vector<const char*> argv_large;
    std::vector<size_t> argvlen_large;
    const char** argv = argv_small;
    size_t* argvlen = argvlen_small;
    if (args.size() > small) {
        argv_large.resize(args.size());
        argvlen_large.resize(args.size());
        argv = argv_large.data();
        argvlen = argvlen_large.data();
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
        argv[i] = args[i].data();
        argvlen[i] = args[i].size();
    }
    char* out = nullptr;
    int len = redisFormatCommandArgv(&out, static_cast<int>(args.size()), argv, argvlen);
    if (len < 0) throw std::bad_alloc();
    std::string encoded(out, static_cast<std::size_t>(len));
    redisFreeCommand(out);
    return encoded;
}

std::string encode_command(std::initializer_list<std::string_view> args) {
    return encode_command(std::vector<std::string_view>(args));
}

}  // namespace holdfast::detail
