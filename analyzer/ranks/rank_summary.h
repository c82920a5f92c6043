// rank_summary.h — what multi-rank analysis needs to know about one rank (one trace), small
// enough to be written next to the trace by the job itself (`gsanalyze summarize`, stored as
// proto/gssummary.proto) and merged with thousands of others in seconds.
//
// A RankSummary is built on the pass over a trace (RankSummaryObserver, summary/summarize_trace.h)
// or decoded from a summary file (summary/summary_file.h); AnalyzeRanks (multi_rank.h) merges any
// number of them. The merge needs nothing else, so a report from summaries equals the report from
// their traces.
//
// Times are nanoseconds on the rank's own CLOCK_MONOTONIC (its trace's time base); the header's
// clock snapshot maps them onto other hosts' clocks (multi_rank.h, "Clocks").
//
// Plain data; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_RANKS_RANK_SUMMARY_H_
#define GPUSTALL_ANALYZER_RANKS_RANK_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/classify/cause.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

// Causes whose idle time is the host's doing (the next work was submitted late): host work,
// allocator, pageable staging, launch overhead. A rank whose device idles for these reasons
// before a collective delays every other rank's collective.
bool IsHostBound(Cause cause);

// One training step as the collectives delimit it: the k-th collective kernel of the rank (on
// the device with the most collectives), and the rank's idle time since the previous one ended.
struct RankStep {
  TimeNs collective_start_ns = 0;  // when the rank's device started its k-th collective
  TimeNs collective_end_ns = 0;    // when it completed (every rank was in, then its duration)
  TimeNs idle_ns = 0;              // device idle between the previous collective's end and this start
  TimeNs host_bound_idle_ns = 0;   // of which host-bound causes (IsHostBound)
};

// A stack charged with this rank's idle time, frames as printable strings (leaf first).
struct RankStack {
  std::vector<std::string> frames;  // "function (file:line)", or the API name when no stack
  TimeNs idle_ns = 0;               // all idle charged to it
  TimeNs step_host_bound_ns = 0;    // host-bound idle charged to it inside step windows
  Cause cause = Cause::kOther;      // its largest cause
};

// What a rank's clock_* fields are, and so how its times map onto the other ranks' (multi_rank.h).
enum class RankClock : uint8_t {
  kHeader = 0,    // a .gstrace header's (CLOCK_MONOTONIC, CLOCK_REALTIME) snapshot
  kBaseTime = 1,  // Kineto's baseTimeNanoseconds: clock_realtime_ns at clock_monotonic_ns = 0
  kEpoch = 2,     // Kineto's epoch timestamps: the times are wall-clock time already (pair 0, 0)
  kNone = 3,      // nothing maps the times onto a wall clock
};

struct RankSummary {
  // Identity (the trace header).
  std::string source;               // the trace's path (as given when summarised)
  std::string host_name, host_id, boot_id, job_id;
  int64_t pid = 0;
  std::optional<int32_t> rank, world_size;
  uint64_t trace_id = 0;
  uint32_t capture_window = 0;      // its header's capture_window (1, 2, ...); 0: the whole process
  // The header's start_clock: CLOCK_MONOTONIC and CLOCK_REALTIME read together.
  uint64_t clock_monotonic_ns = 0, clock_realtime_ns = 0, clock_uncertainty_ns = 0;
  RankClock clock = RankClock::kHeader;

  // Device use (summed over the rank's devices; see analysis.h DeviceSummary).
  uint32_t devices = 0;
  TimeNs wall_ns = 0, compute_busy_ns = 0, steady_wall_ns = 0, steady_idle_ns = 0;
  TimeNs collective_ns = 0;         // union-free sum of collective kernel time
  CauseNs idle_by_cause{};          // steady-state idle by cause
  uint64_t idle_intervals = 0;
  // How full the kernels kept the devices (DeviceSummary::sm_coverage_busy_ns and
  // est_occupancy_busy_ns, summed like wall_ns): unknown unless every device of the rank has it
  // (its trace gave launch configurations and the SM count, resp. the SM limits too).
  std::optional<TimeNs> sm_coverage_busy_ns, est_occupancy_busy_ns;

  std::vector<RankStep> steps;      // in order
  std::vector<RankStack> stacks;    // top stacks, by step_host_bound_ns then idle_ns

  double Utilization() const;        // compute_busy / wall
  double SteadyUtilization() const;  // compute_busy / steady_wall
  // sm_coverage_busy / wall and est_occupancy_busy / wall (as Analysis weighs its devices);
  // unknown where the busy figure is, or without a wall.
  std::optional<double> SmCoverageUtilization() const;
  std::optional<double> EstOccupancyUtilization() const;
  TimeNs HostBoundIdle() const;      // sum of idle_by_cause over host-bound causes
  // "rank 2 (pid 123 on host)" or "pid 123 on host".
  std::string Label() const;
};

// The device whose collectives are a rank's steps (RankSummary::steps): the one with the most,
// the lowest of a tie. `devices`: each collective's device; 0 when there are none.
uint32_t StepDevice(const std::vector<uint32_t>& devices);

// True for device work that is a collective: a collective record, or a kernel with an NCCL-style
// name (IsCollectiveKernelName below; `tables` names it). `names` keeps the answer per string id,
// so that each name is fetched and tested once per trace (clear it between traces).
bool IsCollectiveActivity(const GpuActivity& a, const TraceTables& tables,
                          absl::flat_hash_map<uint32_t, bool>* names);

// True for kernel names of NCCL-style collectives ("ncclDevKernel_AllReduce_...",
// "ncclKernel_...", "ncclDevKernel_..."): what tells a collective from a compute kernel in a trace.
bool IsCollectiveKernelName(const std::string& name);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_RANKS_RANK_SUMMARY_H_
