// analysis.h — the result of analysing one or more traces: what every report format prints.
//
// Plain data, built by AnalysisBuilder (analysis_builder.h) and read by report/. Shares are
// fractions in [0, 1]; times are nanoseconds.
#ifndef GPUSTALL_ANALYZER_RESULT_ANALYSIS_H_
#define GPUSTALL_ANALYZER_RESULT_ANALYSIS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/accounting/copy_accounting.h"
#include "analyzer/accounting/input_workers.h"
#include "analyzer/accounting/nvtx_ranges.h"
#include "analyzer/accounting/profiler_steps.h"
#include "analyzer/classify/cause.h"
#include "analyzer/ranks/multi_rank.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

struct DeviceSummary {
  std::string label;              // "GPU 0 (NVIDIA H100) · rank 0 (pid 12 on host)"
  size_t trace = 0;               // index into Analysis::traces
  uint32_t device = 0;            // device ordinal in that process
  std::string name;               // device name when the trace has it
  TimeNs wall_ns = 0;             // the trace's span (first to last record of the process)
  TimeNs busy_ns = 0;             // union of kernels, copies, memsets on all streams
  TimeNs compute_busy_ns = 0;     // union of kernels (nvidia-smi GPU-Util's "a kernel is running")
  TimeNs copy_busy_ns = 0;        // union of copies and memsets
  TimeNs idle_ns = 0;             // wall - busy = leading + steady + trailing idle
  TimeNs leading_idle_ns = 0;     // trace start to first device work (start-up)
  TimeNs trailing_idle_ns = 0;    // last device work to trace end (tear-down)
  TimeNs steady_wall_ns = 0;      // first device work start to last device work end
  TimeNs steady_idle_ns = 0;      // gaps inside the steady window (what causes[] explain)
  double utilization = 0;         // compute_busy / wall
  double steady_utilization = 0;  // compute_busy / steady_wall
  double busy_fraction = 0;       // busy / wall
  uint64_t kernels = 0, copies = 0, memsets = 0;
  uint64_t idle_intervals = 0;    // steady-state gaps
  // The same over the complete profiler steps, HTA's window (steps == 0: the trace has none).
  StepWindow step_window;
  // Compute utilisation per utilization_sample_ns over the wall (nvidia-smi's samples).
  std::vector<double> utilization_samples;
  TimeNs sample_period_ns = 0;
  // How full the kernels kept the device (timeline/fill_timeline.h): ∫ min(1, Σ wave-aware SM
  // coverage of the running kernels) dt, and the same of their estimated occupancy (theoretical ×
  // wave efficiency: an upper bound). has_fill: the trace gave launch configurations and the
  // device's SM count; fill_kernels of `kernels` had them.
  bool has_fill = false;
  bool has_occupancy = false;     // ... and the SM limits and kernel resources occupancy needs
  uint64_t fill_kernels = 0;
  TimeNs sm_coverage_busy_ns = 0;
  TimeNs est_occupancy_busy_ns = 0;
  double sm_coverage_utilization = 0;   // sm_coverage_busy / wall
  double est_occupancy_utilization = 0; // est_occupancy_busy / wall
};

// One launch configuration of one kernel on one device (kernel_configs[]): how full its launches
// kept the device (analyzer/occupancy/occupancy.h) and where they were launched.
struct KernelConfigStats {
  size_t trace = 0;               // index into Analysis::traces
  uint32_t device = 0;
  std::string name;               // "" where the trace has none (the agent's event-pair fallback)
  LaunchConfig config;
  uint64_t count = 0;
  TimeNs total_ns = 0;
  TimeNs underfilled_ns = 0;      // Σ duration × (1 − wave-aware SM coverage)
  int sm_count = 0;
  bool occupancy_known = false;   // the device's SM limits and the kernel's resources were there
  OccupancyResult occupancy;
  LaunchFill fill;
  struct LaunchSite {
    std::vector<FrameInfo> frames;  // leaf first; empty: the launch had no stack
    TimeNs underfilled_ns = 0;
  };
  std::vector<LaunchSite> stacks; // most under-filled time first (a few)
  // The name for people: the kernel's, or what stands for it where the trace has none.
  std::string DisplayName() const { return name.empty() ? "(unnamed kernel: timed by event pairs)" : name; }
};

struct CauseShare {
  Cause cause = Cause::kOther;
  TimeNs idle_ns = 0;
  double share = 0;               // of all steady-state idle time
  uint64_t intervals = 0;         // intervals where this is the largest cause
};

// A call site: the leaf-most frame of a stack (or the API name when there is no stack).
struct Site {
  std::string api;                // the API call, e.g. "cudaLaunchKernel"
  FrameInfo frame;                // first frame outside the CUDA runtime, agent and bindings
  std::vector<FrameInfo> callers; // the frames that called `frame`, innermost first (a few)
  TimeNs idle_ns = 0;
  uint64_t count = 0;
  double share = 0;
};

// CUDA graph replays by capture site (accounting/graph_replays.h): the capture-time call that
// made the nodes whose replayed kernels took `device_ns` on the device.
struct GraphCaptureSite {
  std::string api;                // the capture-time call, e.g. "cudaLaunchKernel"
  FrameInfo frame;                // as Site::frame
  std::vector<FrameInfo> callers; // as Site::callers
  TimeNs device_ns = 0;           // device time of the kernels replayed from these nodes
  uint64_t kernels = 0;           // replayed kernels
  uint64_t nodes = 0;             // captured nodes
  double share = 0;               // of GraphReplays::device_ns
};

struct GraphReplays {
  uint64_t kernels = 0;           // kernels that graph launches ran
  TimeNs device_ns = 0;           // their device time
  uint64_t unresolved_kernels = 0;  // not traced to a capture-time call
  TimeNs unresolved_ns = 0;
  std::vector<GraphCaptureSite> capture_sites;  // largest device_ns first
};

struct HistogramBucket {
  std::string label;              // "10µs-100µs"
  TimeNs min_ns = 0, max_ns = 0;  // [min, max); max 0 = unbounded
  uint64_t count = 0;
  TimeNs idle_ns = 0;
};

// Histogram bucket bounds used for idle intervals (ns): [0,10µs), [10µs,100µs), ... [1s, inf).
std::vector<HistogramBucket> IdleHistogramBuckets();

struct IntervalExample {
  std::string device;             // DeviceSummary::label
  TimeNs start_ns = 0, end_ns = 0;
  TimeNs offset_ns = 0;           // start relative to the trace's first record
  Cause cause = Cause::kOther;
  CauseNs by_cause{};
  std::string evidence;           // the rule and the numbers that decided it
  std::string resume_api;         // call that ended the gap ("" when unknown)
  FrameInfo resume_frame;
  std::string preceding_api;      // the thread's call before the gap
  FrameInfo preceding_frame;
  bool after_sync = false;
};

struct IntervalSummary {
  uint64_t count = 0;             // steady-state gaps over all devices
  TimeNs idle_ns = 0;
  std::vector<HistogramBucket> histogram;
  uint64_t queued_before = 0;     // decided by rule 1
  uint64_t host_late = 0;         // rule 2
  uint64_t no_host_call = 0;      // rule 0
  uint64_t with_stream_wait = 0;  // rule 1 gaps with a cudaStreamWaitEvent on the stream
  TimeNs after_sync_idle_ns = 0;
  uint64_t after_sync_count = 0;
  std::vector<Site> after_sync_sites;   // the sync the host work followed
  std::vector<Site> resume_sites;       // the call that ended the gap
  std::vector<IntervalExample> longest;
};

struct StackShare {
  std::vector<FrameInfo> frames;  // leaf (innermost) first
  TimeNs idle_ns = 0;
  double share = 0;
  Cause cause = Cause::kOther;    // largest cause of this stack's idle time
  CauseNs by_cause{};
};

// Caller -> callee tree of charged stacks, with inclusive idle time.
struct StackTreeNode {
  FrameInfo frame;
  TimeNs inclusive_ns = 0;
  double share = 0;
  std::vector<StackTreeNode> children;  // by inclusive time, largest first
};

struct MemorySummary {
  uint64_t peak_bytes = 0;        // peak device memory allocated through the runtime
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t host_allocations = 0;
  uint64_t oom_errors = 0;
  uint64_t peak_usage_bytes = 0;  // peak of reported usage levels (0: none reported)
  uint64_t total_memory = 0;      // of the device with the peak, 0 unknown
  double peak_share = 0;          // peak / total when known
  std::string explanation;        // when memory is near full while utilisation is low
};

// What a fix would buy: the job's traces replayed with it (analyzer/whatif/what_ifs.h), shown only
// where the unmodified replay matched the traces (Analysis::replay.ok). Run time is the longest
// trace's first record to last; GPU-Util is compute busy over that, per device, as replayed.
struct Prediction {
  bool present = false;
  TimeNs wall_ns = 0;
  double utilization = 0;
  TimeNs step_ns = 0;             // the mean step with the fix (ReplaySummary::measured_step_ns); 0: unknown
  uint32_t workers = 0;           // input_pipeline, input_workers: the N input workers predicted;
                                  // 0: no more fit the host, the prediction is the bound below
  TimeNs bound_wall_ns = 0;       // input_pipeline, input_workers: input preparation free (the bound)
  bool producers_unseen = false;  // ... and workers 0 because the batches come from producers the
                                  // trace does not show (whatif/what_ifs.h WhatIf::producers_unseen)
  double bound_utilization = 0;
};

struct Recommendation {
  std::string kind;               // "input_pipeline", "pin_memory", ...
  std::string text;               // with the numbers that justify it
  double idle_share = 0;          // share of idle time it addresses
  TimeNs est_gain_ns = 0;         // when it can be estimated, else 0
  Prediction prediction;          // gsanalyze report --what-if
};

// The replay check of the job's traces (analyzer/whatif/replay.h), when asked for (--what-if).
struct ReplaySummary {
  bool ran = false;
  bool ok = false;                // every trace replayed within the tolerance: predictions shown
  TimeNs measured_wall_ns = 0;    // the longest trace's, as measured and as replayed
  TimeNs replayed_wall_ns = 0;
  double measured_utilization = 0;  // compute busy / (wall x devices) over all traces
  double replayed_utilization = 0;
  double wall_error = 0;          // the largest over the traces, signed: (replayed - measured) / measured
  double busy_error = 0;
  double tolerance = 0;
  std::string reason;             // when not ok: the first failing trace's, with its label
  // Ranks meeting at their collectives: the steps at which their replays were joined
  // (whatif/step_join.h), so that a fix on one rank moves the others; 0 when not joined.
  uint64_t joined_steps = 0;
  // The job's mean step, measured and replayed: joined ranks' between their collectives
  // (RanksSection::step_ns), else the traces' complete profiler steps (ProfilerStep#N, the
  // longest trace's); 0 when the traces give no steps.
  TimeNs measured_step_ns = 0, replayed_step_ns = 0;
  // What marks those steps: "collectives" (joined ranks), "ProfilerStep#N", an NVTX range
  // ("NVTX range \"step\"", whatif/nvtx_steps.h); empty without steps.
  std::string step_marks;
};

struct Analysis {
  std::vector<TraceInfo> traces;
  LossCounters losses;            // summed over traces
  std::vector<std::string> warnings;  // printed at the top (truncation, unreadable parts)
  std::vector<DeviceSummary> devices;
  TimeNs steady_idle_ns = 0;      // sum over devices
  std::vector<CauseShare> causes; // every cause, report order; shares sum to 1 when idle > 0
  std::array<TimeNs, kNumHostStates> host_work_states{};  // host_work split by waits and samples
  // The part of host_work whose state a recorded wait measured (the rest of the stated part was
  // sampled; host_work_states[kUnsampled] neither).
  TimeNs host_work_exact_ns = 0;
  // The top stacks of each state's host work (idle_ns, share of steady idle; cause kHostWork).
  std::array<std::vector<StackShare>, kNumHostStates> host_state_stacks;
  IntervalSummary intervals;
  std::vector<StackShare> top_stacks;
  StackTreeNode stack_tree;       // root: "all idle time"
  CopySummary copies;
  MemorySummary memory;
  InputWorkersSummary input_workers;  // DataLoader workers and the host (input_workers.h)
  std::vector<NvtxRangeStats> nvtx_ranges;  // GPU idle/busy per NVTX range (nvtx_ranges.h)
  GraphReplays graphs;            // CUDA graph replays by capture site (kernels 0: none)
  // Kernel launch configurations by under-filled time, largest first (a few; empty when no trace
  // gave launch configurations).
  std::vector<KernelConfigStats> kernel_configs;
  std::vector<Recommendation> recommendations;
  std::vector<std::string> notes; // where the trace carries no evidence for a finer answer
  uint64_t events = 0;            // records analysed
  RanksSection ranks;             // multi-rank: per-rank table and straggler (ranks/)
  ReplaySummary replay;           // gsanalyze report --what-if (whatif/)

  // compute_busy / wall over all devices (weighted); 0 when there is no device.
  double Utilization() const;
  // sm_coverage_busy / wall over all devices (weighted); -1 unless every device has_fill.
  double SmCoverageUtilization() const;
  double SteadyUtilization() const;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_RESULT_ANALYSIS_H_
