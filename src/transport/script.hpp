// A Lua script embedded at build time (see cmake/EmbedScripts.cmake).
#pragma once

namespace holdfast::detail {

struct Script {
    const char* name;  // <folder>_<file>, e.g. lock_acquire
    const char* body;
    const char* sha1;  // lowercase hex, as SCRIPT LOAD returns it
};

}  // namespace holdfast::detail
