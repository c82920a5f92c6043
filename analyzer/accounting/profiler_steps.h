// profiler_steps.h — device idle, busy and utilisation over a trace's complete profiler steps
// (PyTorch's ProfilerStep#N ranges), the window Holistic Trace Analysis' temporal breakdown uses,
// and the same figures per step.
//
// Definitions (analyzer/JSON.md repeats them; analyzer/import/kineto/kineto_hta_test.py says where
// HTA 0.5.0 does the same, and checks that both agree on real traces):
//   - A trace has a step window when its profiler steps carry at least two step numbers. The
//     step that began last is incomplete (the profiler stopped inside it); the others are the
//     complete steps.
//   - The window's device work: each kernel, copy, memset or collective whose launching host call
//     (the runtime or driver call with the same correlation id) began before the last step began.
//     Work without such a call is outside (HTA drops it too). Work launched before the first step
//     is inside and counted apart (`work_before_first_step`).
//   - Per device, over that work: wall = first start to last end, busy = the union of all of it,
//     compute busy = the union of kernels and collectives, idle = wall - busy,
//     utilization = compute busy / wall (as DeviceSummary::steady_utilization).
//   - Per complete step: the same over the work whose launching call began inside the step's
//     host range [start, end).
// A trace without a step window has `steps == 0` and the first-to-last figures of DeviceSummary
// are the ones HTA computes too.
//
// Memory: 12 bytes per host call with a correlation id and 24 per device op, kept until Finish;
// only for traces that have profiler steps (Kineto traces, which the importer holds whole anyway).
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_ACCOUNTING_PROFILER_STEPS_H_
#define GPUSTALL_ANALYZER_ACCOUNTING_PROFILER_STEPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

// Idle and busy time of one device over some device work.
struct StepFigures {
  TimeNs wall_ns = 0;             // first start to last end
  TimeNs busy_ns = 0;             // union of kernels, copies, memsets, collectives
  TimeNs compute_busy_ns = 0;     // union of kernels and collectives
  TimeNs idle_ns = 0;             // wall - busy
  double utilization = 0;         // compute_busy / wall
  uint64_t work = 0;              // device ops counted
};

struct StepRow {
  int64_t step = 0;               // N of ProfilerStep#N
  StepFigures figures;
};

// One device's figures over the complete steps. steps == 0: the trace has no step window.
struct StepWindow {
  uint64_t steps = 0;             // complete steps
  int64_t first_step = 0;         // their numbers, lowest and highest
  int64_t last_step = 0;
  int64_t incomplete_step = 0;    // the step left out (began last)
  StepFigures figures;            // over the window
  uint64_t work_before_first_step = 0;
  std::vector<StepRow> per_step;  // complete steps, in start order (rows with no work left out)
};

// How reports name the windows: "over 5 complete profiler steps (ProfilerStep#5–#9), as HTA"
// for a step window, and the first-to-last one of DeviceSummary's steady_* figures.
std::string StepWindowName(const StepWindow& w);
inline constexpr const char* kFirstToLastWindow = "first GPU work to last";

class ProfilerStepAccounting {
 public:
  // The trace's steps (TraceInfo::profiler_steps). Records nothing when they carry fewer than two
  // step numbers. Call before the first record.
  void Enable(const std::vector<ProfilerStep>& steps);
  bool enabled() const { return enabled_; }

  void AddCall(uint32_t correlation, TimeNs enter_ns) {
    if (!enabled_ || correlation == 0) return;
    auto [it, inserted] = launch_.try_emplace(correlation, enter_ns);
    if (!inserted && enter_ns < it->second) it->second = enter_ns;
  }
  // Device work (IsDeviceWork kinds), any order.
  void AddWork(const GpuActivity& a) {
    if (enabled_) work_.push_back({a.start_ns, a.end_ns, a.correlation, a.device, IsCompute(a.kind)});
  }

  // Per device ordinal; empty when not enabled. Call once.
  absl::flat_hash_map<uint32_t, StepWindow> Finish();

 private:
  struct Work {
    TimeNs start, end;
    uint32_t correlation;
    uint32_t device;
    bool compute;
  };
  bool enabled_ = false;
  std::vector<ProfilerStep> steps_;  // by start
  absl::flat_hash_map<uint32_t, TimeNs> launch_;  // correlation -> earliest call start
  std::vector<Work> work_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ACCOUNTING_PROFILER_STEPS_H_
