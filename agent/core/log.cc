#include "agent/core/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

namespace gs {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

bool LogEnabled(LogLevel level) {
  return level != LogLevel::kQuiet &&
         static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void Log(LogLevel level, const char* format, ...) {
  if (!LogEnabled(level)) return;
  const int saved_errno = errno;
  char line[1024];
  static constexpr char kPrefix[] = "gpustall: ";
  size_t used = sizeof(kPrefix) - 1;
  __builtin_memcpy(line, kPrefix, used);
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(line + used, sizeof(line) - used - 1, format, args);
  va_end(args);
  if (n > 0) used += static_cast<size_t>(n) < sizeof(line) - used - 1 ? static_cast<size_t>(n)
                                                                       : sizeof(line) - used - 2;
  line[used++] = '\n';
  // One write: a line from us is never split by another of ours. A short write to a pipe of
  // this size does not happen (PIPE_BUF is 4096); anything else we cannot fix, so ignore it.
  ssize_t ignored = write(STDERR_FILENO, line, used);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace gs
