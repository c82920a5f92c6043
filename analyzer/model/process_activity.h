// process_activity.h — what a trace's ProcessStats records say about the traced process, its
// input workers and the host, in model terms.
//
// The agent writes cumulative counters (CPU time, read bytes, state-probe counts) every
// GS_PROCESS_STATS_MS for each process; differences between a process's first and last record
// give its activity over the time it was watched. So the table keeps, per process, only its
// first and latest record: memory grows with the number of processes (bounded by
// kMaxProcesses), never with the trace's length.
//
// Thread safety: none (the importer fills it, the analysis reads it).
#ifndef GPUSTALL_ANALYZER_MODEL_PROCESS_ACTIVITY_H_
#define GPUSTALL_ANALYZER_MODEL_PROCESS_ACTIVITY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

// Mirrors gpustall.trace.ProcessRole.
enum class ProcessRole : uint8_t { kUnspecified = 0, kMain = 1, kDataWorker = 2, kOtherChild = 3 };
const char* ProcessRoleName(ProcessRole role);  // "main", "data_worker", "other_child", "unspecified"

// gpustall.trace.HostStats, cumulative fields as written.
struct HostSample {
  uint32_t online_cores = 0;
  uint32_t affinity_cores = 0;
  float load_1m = 0;
  TimeNs cpu_busy_ns = 0;        // user + system + steal, all cores, cumulative
  TimeNs cpu_idle_ns = 0;        // idle, all cores, cumulative
  TimeNs cpu_iowait_ns = 0;      // iowait, all cores, cumulative
  uint32_t tracked = 0;
  uint32_t untracked = 0;
  TimeNs collection_ns = 0;      // agent's writer-thread CPU time collecting, cumulative
  uint64_t collections = 0;
  uint32_t period_ms = 0;
  uint32_t probe_ms = 0;
};

// One gpustall.trace.ProcessStats record.
struct ProcessSample {
  TimeNs time_ns = 0;
  int64_t pid = 0;
  int64_t ppid = 0;
  ProcessRole role = ProcessRole::kUnspecified;
  uint32_t depth = 0;
  std::string comm;
  TimeNs cpu_ns = 0;             // utime + stime, cumulative
  TimeNs iowait_ns = 0;          // delay-accounting block I/O wait, cumulative (0 when off)
  uint64_t read_bytes = 0;       // from storage, cumulative
  uint64_t read_chars = 0;       // by read syscalls, cumulative
  uint64_t probes = 0, probes_running = 0, probes_disk_wait = 0, probes_sleeping = 0;
  uint32_t threads = 0;
  TimeNs start_time_ns = 0;
  bool has_host = false;
  HostSample host;
};

// One process over the time it was watched: its first and latest record.
struct ProcessActivity {
  ProcessSample first;
  ProcessSample last;
  uint64_t records = 0;
  TimeNs span_ns() const { return last.time_ns - first.time_ns; }
  // CPU time over wall time between the two records (can exceed 1 with several busy threads).
  double CpuBusy() const;
  // Shares of the state probes taken between the two records; 0 without probes.
  uint64_t Probes() const { return last.probes - first.probes; }
  double RunningShare() const;
  double DiskWaitShare() const;
  double SleepingShare() const;
};

class ProcessActivityTable {
 public:
  static constexpr size_t kMaxProcesses = 4096;
  // Records may come in any order across processes; per process in time order (as written).
  void Add(const ProcessSample& sample);
  // In order of first appearance.
  const std::vector<ProcessActivity>& processes() const { return processes_; }
  // The traced process's first and latest host samples (has_host false when none).
  const ProcessSample* first_host() const { return first_host_.has_host ? &first_host_ : nullptr; }
  const ProcessSample* last_host() const { return last_host_.has_host ? &last_host_ : nullptr; }
  uint64_t dropped() const { return dropped_; }  // records of processes over kMaxProcesses
  bool empty() const { return processes_.empty(); }

 private:
  std::vector<ProcessActivity> processes_;
  absl::flat_hash_map<std::pair<int64_t, TimeNs>, size_t> index_;  // (pid, start time) -> index
  ProcessSample first_host_, last_host_;
  uint64_t dropped_ = 0;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_PROCESS_ACTIVITY_H_
