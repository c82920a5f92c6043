// trace_analyzer.h — the streaming analysis of one trace: records in (any order within the sort
// window), a TraceResult out.
//
// Pipeline per record: API calls and samples go into the HostHistory; device work goes through
// the sort window (by start), then into its DeviceTimeline; a gap in a device's timeline is
// classified (GapClassifier) and its nanoseconds charged to causes, stacks and sites here.
// Memory: the sort window, the host history (bounded, see host_history.h), one counter per
// distinct stack/site, and the `longest_intervals` examples — never proportional to the trace.
//
// Lifetimes: `options` and `tables` must outlive the analyzer; tables may keep growing while
// records are fed (the importer interns as it reads) and are read at Finish().
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_ANALYSIS_TRACE_ANALYZER_H_
#define GPUSTALL_ANALYZER_ANALYSIS_TRACE_ANALYZER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/copy_accounting.h"
#include "analyzer/analysis/device_timeline.h"
#include "analyzer/analysis/gap_classifier.h"
#include "analyzer/analysis/host_history.h"
#include "analyzer/analysis/memory_accounting.h"
#include "analyzer/analysis/nvtx_ranges.h"
#include "analyzer/analysis/options.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

// One trace's contribution, with stacks and sites resolved to frames (so traces merge).
struct TraceResult {
  TraceInfo info;
  std::vector<DeviceSummary> devices;  // `trace` fields are 0; the builder renumbers
  CauseNs causes{};
  std::array<uint64_t, kNumCauses> dominant{};     // intervals per largest cause
  std::array<TimeNs, kNumHostStates> host_states{};
  IntervalSummary intervals;           // sites unsorted, shares unset
  struct ChargedStack {
    std::vector<FrameInfo> frames;     // leaf first; a pseudo-frame for calls without a stack
    CauseNs by_cause{};
  };
  std::vector<ChargedStack> stacks;
  // Host-work idle by the sampled thread state, per stack (issue 5: "the stacks under each").
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
  std::vector<NvtxRangeStats> nvtx_ranges;  // GPU idle/busy per NVTX range (nvtx_ranges.h)
};

class TraceAnalyzer final : public RecordSink {
 public:
  TraceAnalyzer(const AnalysisOptions& options, const TraceTables& tables);
  TraceAnalyzer(const TraceAnalyzer&) = delete;
  TraceAnalyzer& operator=(const TraceAnalyzer&) = delete;

  void OnApiCall(const ApiCall& call) override;
  void OnActivity(const GpuActivity& activity) override;
  void OnSample(const Sample& sample) override;
  void OnMemoryEvent(const MemoryEvent& event) override;
  void OnNvtxRange(const NvtxRange& range) override;
  // The trace captured NVTX (TraceInfo::nvtx): keep what per-range accounting needs from the
  // first record on (it starts at the first range otherwise). Call before the first record.
  void ExpectNvtx() { nvtx_.Enable(); }

  // Drains the sort window and builds the result. `info` supplies labels, devices, losses; the
  // analysis adds its own loss counters to it. Call once.
  TraceResult Finish(TraceInfo info);

  // Sees every steady-state gap as soon as it is classified, before it is summed (the Chrome
  // export draws each one). The verdict and its pointers are valid during the call only. Set it
  // before the first record.
  using IntervalObserver = std::function<void(uint32_t device, const IntervalVerdict& verdict)>;
  void set_interval_observer(IntervalObserver observer) { observer_ = std::move(observer); }

  // One line saying why a gap got its verdict: the rule, its numbers, the split by cause.
  // `resume`/`preceding` are the verdict's calls (null when it has none).
  std::string Evidence(const IntervalVerdict& v, const ApiCall* resume, const ApiCall* preceding) const;

  uint64_t events() const { return events_; }
  // Records held right now (sort window + host history): bounded by the window, not the trace.
  size_t retained() const { return pending_.size() + history_.retained(); }

 private:
  struct DeviceState {
    explicit DeviceState(TimeNs period) : timeline(period) {}
    DeviceTimeline timeline;
    uint64_t gaps = 0;
  };
  struct SiteAcc {
    TimeNs ns = 0;
    uint64_t count = 0;
    uint32_t function = 0;
  };
  struct Example {
    IntervalVerdict verdict;  // without charges; its pointers are null, the calls are copied:
    ApiCall resume, preceding;
    uint32_t device = 0;
  };

  void See(TimeNs t) {
    if (t < first_ns_) first_ns_ = t;
    if (t > last_ns_) last_ns_ = t;
  }
  void Release(TimeNs limit);
  void Process(const GpuActivity& a);
  DeviceState& Device(uint32_t device);
  void Account(uint32_t device, const IntervalVerdict& v);
  std::vector<FrameInfo> KeyFrames(uint64_t key) const;

  const AnalysisOptions& options_;
  const TraceTables& tables_;
  HostHistory history_;
  GapClassifier classifier_;
  IntervalVerdict verdict_;  // scratch
  IntervalObserver observer_;

  std::vector<GpuActivity> pending_;  // the sort window
  size_t sorted_ = 0;                 // pending_[0, sorted_) is sorted by start
  size_t release_at_;
  TimeNs max_start_ = std::numeric_limits<TimeNs>::min();
  TimeNs released_upto_ = std::numeric_limits<TimeNs>::min();

  absl::flat_hash_map<uint32_t, std::unique_ptr<DeviceState>> devices_;
  uint32_t last_device_id_ = 0;
  DeviceState* last_device_ = nullptr;

  TimeNs first_ns_ = std::numeric_limits<TimeNs>::max();
  TimeNs last_ns_ = std::numeric_limits<TimeNs>::min();
  uint64_t events_ = 0;
  uint64_t late_ = 0, unmatched_ = 0, without_time_ = 0;
  uint64_t launch_calls_ = 0;
  TimeNs launch_call_ns_ = 0;
  uint32_t last_pageable_correlation_ = 0;
  bool has_api_calls_ = false, has_stacks_ = false, has_samples_ = false;

  CauseNs causes_{};
  std::array<uint64_t, kNumCauses> dominant_{};
  std::array<TimeNs, kNumHostStates> host_states_{};
  IntervalSummary intervals_;
  absl::flat_hash_map<uint64_t, CauseNs> charges_;
  std::array<absl::flat_hash_map<uint64_t, TimeNs>, kNumHostStates> state_charges_;  // host work
  absl::flat_hash_map<uint64_t, SiteAcc> resume_sites_, sync_sites_;
  // One-entry caches in front of charges_ and resume_sites_. A pointer into a flat_hash_map is
  // valid until that map's next insertion, so each is refreshed whenever its key changes.
  uint64_t charge_cache_key_ = 0, resume_cache_key_ = 0;
  CauseNs* charge_cache_ = nullptr;
  SiteAcc* resume_cache_ = nullptr;
  std::vector<Example> longest_;  // min-heap by length
  CopyAccounting copies_;
  MemoryAccounting memory_;
  NvtxAccounting nvtx_;
};

// Histogram bucket bounds used for idle intervals (ns): [0,10µs), [10µs,100µs), ... [1s, inf).
std::vector<HistogramBucket> IdleHistogramBuckets();
// The frame a site is shown by: the first frame (from the leaf) outside the CUDA runtime, CUPTI,
// the driver and the agent; the leaf when all are. Empty when `frames` is.
FrameInfo SiteFrame(const std::vector<FrameInfo>& frames);
// Index of SiteFrame's frame in `frames` (0 when every frame is library code, or none).
size_t SiteFrameIndex(const std::vector<FrameInfo>& frames);
// True for frames that are the machinery between the user's code and the GPU: the CUDA runtime
// and libraries, the agent, language glue (libffi, ctypes, the interpreter's own native frames),
// installed packages (site-packages, dist-packages: Python files and native extension modules
// such as libtorch_cuda.so) and Python's standard library.
bool IsLibraryFrame(const FrameInfo& frame);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_TRACE_ANALYZER_H_
