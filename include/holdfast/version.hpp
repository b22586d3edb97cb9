// holdfast's version, written here and nowhere else: CMakeLists.txt reads the
// three numbers for project(VERSION), the CMake package and holdfast.pc. A
// plain header, so compiling against the source tree needs only -I include.
#pragma once

#define HOLDFAST_VERSION_MAJOR 0
#define HOLDFAST_VERSION_MINOR 1
#define HOLDFAST_VERSION_PATCH 0

#define HOLDFAST_VERSION_TEXT_(x) #x
#define HOLDFAST_VERSION_TEXT(x) HOLDFAST_VERSION_TEXT_(x)
/// "0.1.0"
#define HOLDFAST_VERSION_STRING                                                             \
    HOLDFAST_VERSION_TEXT(HOLDFAST_VERSION_MAJOR) "." HOLDFAST_VERSION_TEXT(HOLDFAST_VERSION_MINOR) "." \
        HOLDFAST_VERSION_TEXT(HOLDFAST_VERSION_PATCH)

namespace holdfast {
inline constexpr const char* version = HOLDFAST_VERSION_STRING;
}
