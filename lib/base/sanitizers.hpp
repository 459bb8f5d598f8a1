// Which sanitizer a build runs under, for g++ and clang alike: TESSERA_ASAN and
// TESSERA_TSAN are 1 under AddressSanitizer and ThreadSanitizer, else 0. g++ says
// so with __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang 15 only through
// __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ASAN 1
#endif
#endif
#ifndef TESSERA_ASAN
#define TESSERA_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define TESSERA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TESSERA_TSAN 1
#endif
#endif
#ifndef TESSERA_TSAN
#define TESSERA_TSAN 0
#endif
