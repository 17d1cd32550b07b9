#pragma once
// Whether this build runs under AddressSanitizer (GCC defines __SANITIZE_ADDRESS__, clang answers
// __has_feature), and marking memory ASan cannot see being handed out: memory the runtime carves from a
// mapping of its own is unknown to ASan, which then reports nothing read past a block or after its release.
#if defined(__SANITIZE_ADDRESS__)
#define XLITE_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XLITE_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef XLITE_ADDRESS_SANITIZER
#define XLITE_ADDRESS_SANITIZER 0
#endif

#if XLITE_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#define XLITE_POISON(addr, size) ASAN_POISON_MEMORY_REGION(addr, size)
#define XLITE_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#else
#define XLITE_POISON(addr, size) ((void)(addr), (void)(size))
#define XLITE_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif
