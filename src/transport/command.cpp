#include "transport/command.hpp"

#include <hiredis/hiredis.h>

#include <new>

namespace holdfast::detail {

std::string encode_command(const std::vector<std::string_view>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> argvlen;
    argv.reserve(args.size());
    argvlen.reserve(args.size());
    for (auto a : args) {
        argv.push_back(a.data());
        argvlen.push_back(a.size());
    }
    char* out = nullptr;
    int len = redisFormatCommandArgv(&out, static_cast<int>(args.size()), argv.data(), argvlen.data());
    if (len < 0) throw std::bad_alloc();
    std::string encoded(out, static_cast<std::size_t>(len));
    redisFreeCommand(out);
    return encoded;
}

std::string encode_command(std::initializer_list<std::string_view> args) {
    return encode_command(std::vector<std::string_view>(args));
}

}  // namespace holdfast::detail
