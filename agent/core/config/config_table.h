// config_table.h — THE list of GS_* settings. Everything else (the Config fields, parsing,
// validation messages, the README table printed by gs_config_doc, the settings written into the
// trace header) is generated from this one table.
//
// How to add a setting:
//   1. Add one X(...) row below (keep the rows sorted by importance, as the README shows them).
//   2. If it is an enum, declare the enum in config.h with values in the order of `choices`.
//   3. Use config.<field> where it matters; nothing else calls getenv.
//   4. Re-run gs_config_doc and paste its output into README.md.
//
// Columns:
//   field    member of gs::Config
//   type     C++ type of the member: std::string, bool, int, or an enum listed in config.h
//   kind     how the text is parsed: kText, kOutputPattern, kBool, kInt, kEnum
//   env      the environment variable
//   def      default, as text (parsed by the same code as a user's value; a unit test checks it)
//   lo, hi   accepted range for kInt (ignored otherwise)
//   choices  accepted words for kEnum, '|'-separated, in enum order (ignored otherwise)
//   doc      one sentence for the README
#ifndef GPUSTALL_AGENT_CORE_CONFIG_CONFIG_TABLE_H_
#define GPUSTALL_AGENT_CORE_CONFIG_CONFIG_TABLE_H_

#define GS_CONFIG_SETTINGS(X)                                                                    \
  X(output, std::string, kOutputPattern, GS_OUTPUT, "./gpustall-%h-%p.gstrace", 0, 0, "",         \
    "Trace file: a folder (ending in / or existing), or a file pattern with %p pid, %h host, "   \
    "%r rank, %t start time (UTC, YYYYMMDDTHHMMSSZ), %% a percent sign.")                        \
  X(enable, bool, kBool, GS_ENABLE, "1", 0, 0, "",                                               \
    "Master switch; 0 leaves the agent dormant (the interposers pass calls straight through).")  \
  X(disable, bool, kBool, GS_DISABLE, "0", 0, 0, "",                                             \
    "Off switch; 1 is the same as GS_ENABLE=0 (handy to switch off one process of a job).")      \
  X(stacks, StackMode, kEnum, GS_STACKS, "unwind", 0, 0, "none|fp|unwind",                       \
    "Native stack at every intercepted call: none, fp (frame-pointer walk: fastest, needs "      \
    "frame pointers), unwind (libunwind, CFI based).")                                           \
  X(stack_depth, int, kInt, GS_STACK_DEPTH, "32", 1, 128, "",                                    \
    "Maximum native frames kept per stack.")                                                     \
  X(sample_hz, int, kInt, GS_SAMPLE_HZ, "100", 0, 5000, "",                                      \
    "Wall-clock samples per second of each sampled thread (state, CPU time, native + Python "    \
    "stack); 0 disables. 100 resolves the 10-100 ms idle gaps of a starved step into ~1-10 "      \
    "samples each, for under 1% of a core (0.8-0.9% measured with one sampled thread and with "  \
    "eight: most of it is the tick itself); raise it for shorter gaps.")                         \
  X(sample_all_threads, bool, kBool, GS_SAMPLE_ALL_THREADS, "0", 0, 0, "",                       \
    "0: sample the threads that issue CUDA work; 1: every thread of the process (input "          \
    "threads, loaders) except the agent's own.")                                                 \
  X(sample_signals, SampleSignals, kEnum, GS_SAMPLE_SIGNALS, "user", 0, 0, "user|any|off",        \
    "How a running sampled thread's native stack is taken: user (a signal the kernel raises "    \
    "only while the thread runs its own code, from a per-thread perf timer: no system call is "  \
    "ever interrupted; without perf events, no native stack), any (the sampler signals the "     \
    "thread: works without perf events, but a thread entering a blocking call such as "         \
    "nanosleep or poll can get EINTR), off (no signals).")                                       \
  X(blocked_stacks, bool, kBool, GS_BLOCKED_STACKS, "1", 0, 0, "",                               \
    "1: a sampled thread blocked in a system call gets its whole native stack, unwound by the "  \
    "sampler thread over a copy of its stack (no signal); 0: only the blocking libc function.")  \
  X(host_waits, bool, kBool, GS_HOST_WAITS, "1", 0, 0, "",                                     \
    "1: a blocking libc call (sleep, condition variable or semaphore wait, read, recv, poll, " \
    "select, epoll) that blocked at least GS_WAIT_MIN_US is recorded with its exact interval, "\
    "state and stack, on the threads the sampler samples (LD_PRELOAD only); 0: off.")          \
  X(wait_min_us, int, kInt, GS_WAIT_MIN_US, "1000", 1, 60000000, "",                           \
    "Shortest blocking call GS_HOST_WAITS records, in microseconds. A record costs a few "     \
    "microseconds (mostly the stack), so 1000 keeps the added cost well under 1% of the time " \
    "the thread was blocked; a shorter call adds two vDSO clock reads.")                       \
  X(buffer_mb, int, kInt, GS_BUFFER_MB, "64", 4, 4096, "",                                       \
    "Bound on the agent's recording buffers in MiB (per-thread rings and GPU records); when "    \
    "full, records are dropped and counted in the trace.")                                       \
  X(flush_ms, int, kInt, GS_FLUSH_MS, "100", 10, 60000, "",                                      \
    "Period in ms at which the writer thread writes a chunk to the file (rings are drained "     \
    "every 10 ms regardless).")                                                                  \
  X(process_stats_ms, int, kInt, GS_PROCESS_STATS_MS, "500", 0, 60000, "",                      \
    "Period in ms of the CPU time, state and I/O records of the traced process and the "         \
    "processes it starts (DataLoader workers), with the host's cores and load; 0 disables.")     \
  X(cupti, CuptiMode, kEnum, GS_CUPTI, "auto", 0, 0, "auto|off",                                 \
    "auto: use CUPTI when it can be loaded and subscribed; off: interposition only.")            \
  X(other_calls_min_us, int, kInt, GS_OTHER_CALLS_MIN_US, "10", -1, 60000000, "",              \
    "CUDA runtime and driver calls outside the agent's tables (cudaFuncSetAttribute, "          \
    "cudaStreamGetCaptureInfo, cuModuleLoadData, ...), seen through CUPTI: one that "            \
    "lasts at least this many microseconds is recorded with its stack (its time is in CUDA, "   \
    "not host work); shorter ones are only counted. 0 records them all; -1 leaves them out.")    \
  X(cupti_library, std::string, kText, GS_CUPTI_LIBRARY, "", 0, 0, "",                           \
    "Path of libcupti.so to load first (before the search path and the toolkit folders).")       \
  X(clock, ClockSource, kEnum, GS_CLOCK, "auto", 0, 0, "auto|system",                           \
    "auto: timestamps from the TSC, fitted to CLOCK_MONOTONIC, where the kernel keeps its clock "  \
    "on an invariant TSC (cheaper than clock_gettime); system: clock_gettime for every "          \
    "timestamp.")                                                                                \
  X(log, LogLevel, kEnum, GS_LOG, "warn", 0, 0, "quiet|warn|info|debug",                         \
    "Verbosity of the agent's `gpustall:` lines on stderr.")                                     \
  X(on_demand, bool, kBool, GS_ON_DEMAND, "0", 0, 0, "",                                         \
    "1: load dormant (nothing recorded) and listen for gsctl, which starts and stops capture "   \
    "windows, one trace file each (gsrun --on-demand).")                                         \
  X(periodic_ms, int, kInt, GS_PERIODIC_MS, "0", 0, 86400000, "",                                \
    "0: record from start to exit; N: record in capture windows instead, one starting every N "  \
    "ms from the agent's start, GS_PERIODIC_WINDOW_MS long, dormant between (a trace file each, " \
    "as gsctl's windows; gsctl works too): the cost is the recording's times the fraction "      \
    "recorded, plus the dormant agent's.")                                                       \
  X(periodic_window_ms, int, kInt, GS_PERIODIC_WINDOW_MS, "5000", 10, 86400000, "",              \
    "Length of each GS_PERIODIC_MS window; not shorter than the period means recording "         \
    "continuously.")

#endif  // GPUSTALL_AGENT_CORE_CONFIG_CONFIG_TABLE_H_
