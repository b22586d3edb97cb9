// A Lua script embedded at build time (see cmake/EmbedScripts.cmake).
#pragma once

namespace holdfast::detail {

struct Script {
    const char* name;  // <folder>_<file>, e.g. lock_acquire
    const char* body;
    const char* sha1;  // lowercase hex, as SCRIPT LOAD returns it
    // The same script without its release-rights checks, for a connection
    // whose user the server lets run everything (Transport::eval picks it);
    // nullptr for a script that checks none.
    const Script* trusted = nullptr;
};

}  // namespace holdfast::detail
