// input_workers.h — evidence about the processes that feed the training process (DataLoader
// workers) and the host they share, from the traces' ProcessStats (model/process_activity.h):
// how many workers, how CPU-busy each was, what state the probes found them in (running, disk
// wait, sleeping), what they read, how many cores the host has and how many sat idle.
//
// The verdict it gives is about the workers only; whether it matters is the recommendation's
// business (recommendations.cc quotes it only when the GPU's idle time is host-bound).
//
// Thread safety: none; pure functions of their arguments.
#ifndef GPUSTALL_ANALYZER_ACCOUNTING_INPUT_WORKERS_H_
#define GPUSTALL_ANALYZER_ACCOUNTING_INPUT_WORKERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/model/process_activity.h"
#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

// What the workers' own numbers say they were doing.
enum class WorkerVerdict : uint8_t {
  kNone = 0,       // no workers in the trace (or too little of them watched)
  kCpuBound,       // running (or runnable) in most probes
  kStorageBound,   // in uninterruptible (disk) wait in a large share of probes
  kWaiting,        // sleeping in most probes: they wait for something else
  kMixed,          // none of the above dominates
};
const char* WorkerVerdictName(WorkerVerdict v);  // "", "cpu_bound", "storage_bound", "waiting", "mixed"

struct WorkerEvidence {
  int64_t pid = 0;
  std::string comm;
  std::string trace;          // TraceInfo::Label() of the trace that watched it
  uint32_t depth = 0;         // 1 child, 2 grandchild (forkserver's workers), ...
  TimeNs span_ns = 0;         // watched from first to last record
  TimeNs cpu_ns = 0;          // CPU time over the span
  double cpu_busy = 0;        // cpu_ns / span_ns
  uint64_t probes = 0;        // state probes over the span
  double running = 0, disk_wait = 0, sleeping = 0;  // shares of the probes
  uint64_t read_bytes = 0;    // from storage over the span
  uint64_t read_chars = 0;    // by read syscalls over the span
};

struct HostEvidence {
  uint32_t online_cores = 0;
  uint32_t affinity_cores = 0;      // of the traced process
  double busy = 0;                  // share of all cores' time busy over the span (/proc/stat)
  double idle_cores = 0;            // online_cores x idle share
  double iowait = 0;                // share of all cores' time in iowait
  float load_1m = 0;                // at the last record
  TimeNs span_ns = 0;
  // The agent's own cost of collecting all this (writer thread CPU time), over span_ns.
  TimeNs collection_ns = 0;
  uint64_t collections = 0;
  uint32_t period_ms = 0;
  uint32_t untracked = 0;           // descendants beyond the agent's tracking limit
};

struct InputWorkersSummary {
  bool present = false;             // some trace had process records
  std::vector<WorkerEvidence> workers;  // role data_worker watched for >= 2 records, by pid
  uint32_t other_children = 0;      // launchers and helpers (forkserver, resource tracker)
  double main_cpu_busy = 0;         // the training process(es), mean
  // Over the workers: mean and range of CPU-busy, mean probe shares.
  double cpu_busy_mean = 0, cpu_busy_min = 0, cpu_busy_max = 0;
  double running_mean = 0, disk_wait_mean = 0, sleeping_mean = 0;
  uint64_t read_bytes = 0;          // all workers
  TimeNs span_ns = 0;               // the longest worker span
  HostEvidence host;
  WorkerVerdict verdict = WorkerVerdict::kNone;
  std::string evidence;             // one sentence with the numbers behind the verdict
};

// Thresholds of the verdict (shares of state probes; see input_workers.cc for why).
inline constexpr double kWorkerCpuBoundShare = 0.6;
inline constexpr double kWorkerDiskWaitShare = 0.3;
inline constexpr double kWorkerWaitingShare = 0.6;

InputWorkersSummary SummarizeInputWorkers(const std::vector<TraceInfo>& traces);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ACCOUNTING_INPUT_WORKERS_H_
