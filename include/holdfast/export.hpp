// HOLDFAST_EXPORT marks the public API. The library is built with
// -fvisibility=hidden, so a shared libholdfast exports these and nothing else.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define HOLDFAST_EXPORT __attribute__((visibility("default")))
#else
#define HOLDFAST_EXPORT
#endif
