// proc_parse.h — parsers for the /proc files the host-stats collector reads (proc(5)).
//
// Pure functions of the file's text, so tests feed fixtures; each returns false (leaving the
// output in an unspecified but valid state) when the text does not have the expected shape, and
// never throws. Times stay in the kernel's units (clock ticks) here; the collector converts.
//
// Thread safety: reentrant (no state).
#ifndef GPUSTALL_AGENT_HOST_STATS_PROC_PARSE_H_
#define GPUSTALL_AGENT_HOST_STATS_PROC_PARSE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gs::host_stats {

// /proc/<pid>/stat and /proc/<pid>/task/<tid>/stat.
struct ProcStat {
  int64_t pid = 0;
  std::string comm;              // without the parentheses; may contain spaces and ')'
  char state = '?';              // R S D Z T t X I ...
  int64_t ppid = 0;
  uint64_t utime_ticks = 0;      // field 14
  uint64_t stime_ticks = 0;      // field 15
  uint64_t num_threads = 0;      // field 20
  uint64_t start_ticks = 0;      // field 22: start time after boot
  uint64_t rss_pages = 0;        // field 24
  uint64_t blkio_ticks = 0;      // field 42: delayacct_blkio_ticks (0 without delay accounting)
};
// The comm field is found by the LAST ')' (a comm may itself contain ") ").
bool ParseProcStat(std::string_view text, ProcStat* out);
// Only the state letter of a stat line (the state probes' cheap path): the first non-space after
// the last ')', '?' when there is none.
char ProcStatState(std::string_view text);

// /proc/<pid>/status: the fields the collector uses.
struct ProcStatus {
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  uint64_t vm_rss_kib = 0;
};
bool ParseProcStatus(std::string_view text, ProcStatus* out);

// /proc/<pid>/io (readable for our own descendants; absent without CONFIG_TASK_IO_ACCOUNTING).
struct ProcIo {
  uint64_t rchar = 0;
  uint64_t wchar = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
};
bool ParseProcIo(std::string_view text, ProcIo* out);

// /proc/loadavg: "0.50 0.40 0.30 2/345 6789".
struct LoadAvg {
  float load_1m = 0, load_5m = 0, load_15m = 0;
  uint32_t runnable = 0;
  uint32_t total = 0;
};
bool ParseLoadAvg(std::string_view text, LoadAvg* out);

// /proc/stat: the aggregate "cpu" line (ticks summed over cores) and procs_blocked.
struct CpuTotals {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint32_t procs_running = 0;
  uint32_t procs_blocked = 0;
};
bool ParseProcStatCpu(std::string_view text, CpuTotals* out);

// /proc/<pid>/task/<tid>/children: space-separated pids. Appends to `out`; false on junk.
bool ParseChildren(std::string_view text, std::vector<int64_t>* out);

// A decimal pid/tid directory name ("123"); -1 otherwise.
int64_t ParsePidName(const char* name);

// What a state letter counts as in the probes (see ProcessStats in proto/gstrace.proto).
enum class StateClass : uint8_t { kRunning, kDiskWait, kSleeping, kOther };
StateClass ClassifyState(char state);

}  // namespace gs::host_stats

#endif  // GPUSTALL_AGENT_HOST_STATS_PROC_PARSE_H_
