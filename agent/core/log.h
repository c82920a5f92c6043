// log.h — the agent's only way to talk to the user: single `gpustall: ...` lines on stderr.
//
// The agent runs inside somebody else's process, so a message is one write(2) of one line
// (never interleaved with another of ours, never buffered in stdio), errno is preserved, and
// nothing allocates. Verbosity comes from GS_LOG (Config::log); until the Config is read the
// level is kWarn.
//
// Thread safety: all functions may be called from any thread, concurrently.
#ifndef GPUSTALL_AGENT_CORE_LOG_H_
#define GPUSTALL_AGENT_CORE_LOG_H_

#include <atomic>

namespace gs {

enum class LogLevel : int { kQuiet = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// Sets the process-wide verbosity (called once at activation with Config::log).
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// printf-style; writes "gpustall: <message>\n" to fd 2 when `level` is enabled. Messages longer
// than 1 KiB are cut. Preserves errno.
void Log(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace gs

// Logs at most once per call site for the life of the process (a failing path that repeats
// says so once: "log once" from DESIGN.md).
#define GS_LOG_ONCE(level, ...)                                                   \
  do {                                                                            \
    static std::atomic<bool> gs_log_once_done_{false};                            \
    if (!gs_log_once_done_.exchange(true, std::memory_order_relaxed))             \
      ::gs::Log(level, __VA_ARGS__);                                              \
  } while (0)

#endif  // GPUSTALL_AGENT_CORE_LOG_H_
