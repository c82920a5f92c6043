// skip_under_tsan.h — GS_SKIP_UNDER_TSAN() for tests that need a real SIGSEGV to be caught.
#ifndef GPUSTALL_AGENT_PYTHON_TESTS_SKIP_UNDER_TSAN_H_
#define GPUSTALL_AGENT_PYTHON_TESTS_SKIP_UNDER_TSAN_H_

#include <gtest/gtest.h>

// ThreadSanitizer interposes signal handlers and does not survive a handler that siglongjmps
// out of a synchronous SIGSEGV more than once; the guard is best-effort in such builds.
#if defined(__SANITIZE_THREAD__)
#define GS_SKIP_UNDER_TSAN() GTEST_SKIP() << "fault guard not supported under ThreadSanitizer"
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GS_SKIP_UNDER_TSAN() GTEST_SKIP() << "fault guard not supported under ThreadSanitizer"
#endif
#endif
#ifndef GS_SKIP_UNDER_TSAN
#define GS_SKIP_UNDER_TSAN() \
  do {                       \
  } while (0)
#endif

#endif  // GPUSTALL_AGENT_PYTHON_TESTS_SKIP_UNDER_TSAN_H_
