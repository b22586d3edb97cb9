// What every public header needs first: C++20, and HOLDFAST_EXPORT, which
// marks the public API. The library is built with -fvisibility=hidden, so a
// shared libholdfast exports these and nothing else.
#pragma once

// Without C++20 the first error would be deep in a header ("'years' is not a
// member of 'std::chrono'"); say what is wrong instead. MSVC reports its
// standard in _MSVC_LANG unless /Zc:__cplusplus is given.
#if defined(_MSVC_LANG) ? _MSVC_LANG < 202002L : __cplusplus < 202002L
#error "holdfast needs C++20: compile with -std=c++20 (CMake: target_compile_features(<target> PRIVATE cxx_std_20), which linking holdfast::holdfast adds)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define HOLDFAST_EXPORT __attribute__((visibility("default")))
#else
#define HOLDFAST_EXPORT
#endif
