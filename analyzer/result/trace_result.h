// trace_result.h — what the analysis of one trace yields (TraceAnalyzer::Finish), before the
// AnalysisBuilder merges the traces of a run into one Analysis.
//
// Plain data; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_RESULT_TRACE_RESULT_H_
#define GPUSTALL_ANALYZER_RESULT_TRACE_RESULT_H_

#include <array>
#include <cstdint>
#include <vector>

#include "analyzer/accounting/copy_accounting.h"
#include "analyzer/accounting/memory_accounting.h"
#include "analyzer/accounting/nvtx_ranges.h"
#include "analyzer/classify/cause.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/result/analysis.h"

namespace gs::analyzer {

// One trace's contribution, with stacks and sites resolved to frames (so traces merge).
struct TraceResult {
  TraceInfo info;
  std::vector<DeviceSummary> devices;  // `trace` fields are 0; the builder renumbers
  CauseNs causes{};
  std::array<uint64_t, kNumCauses> dominant{};     // intervals per largest cause
  std::array<TimeNs, kNumHostStates> host_states{};
  TimeNs host_exact_ns = 0;            // the part of host_states measured by recorded waits
  IntervalSummary intervals;           // sites unsorted, shares unset
  struct ChargedStack {
    std::vector<FrameInfo> frames;     // leaf first; a pseudo-frame for calls without a stack
    CauseNs by_cause{};
  };
  std::vector<ChargedStack> stacks;
  // Host-work idle by the sampled thread state, per stack (the stacks under each state).
  struct StateStack {
    HostState state;
    std::vector<FrameInfo> frames;
    TimeNs ns;
  };
  std::vector<StateStack> state_stacks;
  CopyAccounting copies;
  double link_peak = 0;
  MemoryAccounting::Result memory;
  uint64_t peak_device_total_memory = 0;
  uint64_t events = 0;
  uint64_t launch_calls = 0;          // kernel launch calls and their host time
  TimeNs launch_call_ns = 0;
  bool has_api_calls = false, has_stacks = false, has_samples = false;
  bool has_sample_states = false;  // a sample with a thread state (a PyTorch profiler trace has none)
  std::vector<NvtxRangeStats> nvtx_ranges;  // GPU idle/busy per NVTX range (nvtx_ranges.h)
  GraphReplays graphs;                      // capture_sites unsorted, shares unset
  std::vector<KernelConfigStats> kernel_configs;  // every one, unsorted; `trace` 0
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_RESULT_TRACE_RESULT_H_
