// trace_analyzer.h — the streaming analysis of one trace: records in (any order within the sort
// window), a TraceResult out.
//
// Pipeline per record: API calls, samples and host waits go into the HostHistory (timeline/); device work
// goes through the sort window (by start), then into its DeviceTimeline (timeline/); a gap in a
// device's timeline is classified (GapClassifier, classify/) and its nanoseconds charged to
// causes, stacks and sites (IdleAttribution, attribute/); copies, memory and NVTX ranges are
// summed on the way (accounting/).
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
#include "analyzer/accounting/copy_accounting.h"
#include "analyzer/accounting/graph_replays.h"
#include "analyzer/accounting/memory_accounting.h"
#include "analyzer/accounting/nvtx_ranges.h"
#include "analyzer/accounting/profiler_steps.h"
#include "analyzer/attribute/attribution.h"
#include "analyzer/classify/gap_classifier.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/options/options.h"
#include "analyzer/result/trace_result.h"
#include "analyzer/timeline/device_timeline.h"
#include "analyzer/timeline/fill_timeline.h"
#include "analyzer/timeline/host_history.h"

namespace gs::analyzer {

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
  void OnHostWait(const HostWait& wait) override;
  void OnGraphNode(const GraphNode& node) override { graphs_.AddNode(node); }
  void OnGraphKernel(uint64_t node, const GpuActivity& kernel) override { graphs_.AddKernel(node, kernel); }
  // The trace captured NVTX (TraceInfo::nvtx): keep what per-range accounting needs from the
  // first record on (it starts at the first range otherwise). Call before the first record.
  void ExpectNvtx() { nvtx_.Enable(); }
  // The trace's profiler steps (TraceInfo::profiler_steps): figures over its complete steps
  // besides the first-to-last ones (profiler_steps.h). Call before the first record.
  void ExpectProfilerSteps(const std::vector<ProfilerStep>& steps) { steps_.Enable(steps); }
  // The trace's devices (TraceInfo::devices): their SM counts and limits, for how full each
  // kernel's launch configuration keeps its device. Call before the first record.
  void SetDevices(const std::vector<DeviceDescription>& devices);
  void OnDevice(const DeviceDescription& device) override { SetDevices({device}); }

  // Drains the sort window and builds the result. `info` supplies labels, devices, losses; the
  // analysis adds its own loss counters to it. Call once.
  TraceResult Finish(TraceInfo info);

  // Sees every steady-state gap as soon as it is classified, before it is summed (the Chrome
  // export draws each one). The verdict and its pointers are valid during the call only. Set it
  // before the first record.
  using IntervalObserver = std::function<void(uint32_t device, const IntervalVerdict& verdict)>;
  void set_interval_observer(IntervalObserver observer) { observer_ = std::move(observer); }
  // Sees how full each device's kernels kept it, piece by piece, as the fill figures integrate it
  // (timeline/fill_timeline.h FillPiece: per device in time order; the last ones during Finish).
  // Only kernels with a launch configuration on a device with an SM count have a fill. Set it
  // before the first record.
  using FillObserver = std::function<void(uint32_t device, const FillPiece& piece)>;
  void set_fill_observer(FillObserver observer) { fill_observer_ = std::move(observer); }

  // One line saying why a gap got its verdict: the rule, its numbers, the split by cause.
  // `resume`/`preceding` are the verdict's calls (null when it has none).
  std::string Evidence(const IntervalVerdict& v, const ApiCall* resume, const ApiCall* preceding) const {
    return attribution_.Evidence(v, resume, preceding);
  }

  uint64_t events() const { return events_; }
  // Records held right now (sort window + host history): bounded by the window, not the trace.
  size_t retained() const { return pending_.size() + history_.retained(); }

 private:
  // One (kernel name, launch configuration) of a device: its fill, computed once, and its totals.
  struct ConfigState {
    uint32_t name = 0, config = 0;
    bool occupancy_known = false;
    OccupancyResult occupancy;
    LaunchFill fill;
    double coverage = 0;   // the wave-aware SM coverage the fill timeline integrates
    uint64_t count = 0;
    TimeNs total_ns = 0;
    double underfilled_ns = 0;
    absl::flat_hash_map<uint32_t, double> stacks;  // launch stack -> under-filled ns
  };
  struct DeviceState {
    explicit DeviceState(TimeNs period) : timeline(period) {}
    DeviceTimeline timeline;
    uint64_t gaps = 0;
    FillTimeline fill;
    absl::flat_hash_map<uint64_t, ConfigState> configs;  // name << 32 | launch config
  };
  struct DeviceLimits {
    uint32_t sm_count = 0;
    OccupancyDevice sm;
  };
  void AddFill(DeviceState& d, const GpuActivity& a);
  // The device's fill figures into `s`, its launch configurations into r->kernel_configs.
  void FillFigures(uint32_t device, DeviceState& d, DeviceSummary* s, TraceResult* r);
  void See(TimeNs t) {
    if (t < first_ns_) first_ns_ = t;
    if (t > last_ns_) last_ns_ = t;
  }
  void Release(TimeNs limit);
  void Process(const GpuActivity& a);
  DeviceState& Device(uint32_t device);

  const AnalysisOptions& options_;
  const TraceTables& tables_;
  HostHistory history_;
  GapClassifier classifier_;
  IntervalVerdict verdict_;  // scratch
  IntervalObserver observer_;
  FillObserver fill_observer_;

  std::vector<GpuActivity> pending_;  // the sort window
  size_t sorted_ = 0;                 // pending_[0, sorted_) is sorted by start
  size_t release_at_;
  TimeNs max_start_ = std::numeric_limits<TimeNs>::min();
  TimeNs released_upto_ = std::numeric_limits<TimeNs>::min();

  absl::flat_hash_map<uint32_t, std::unique_ptr<DeviceState>> devices_;
  absl::flat_hash_map<uint32_t, DeviceLimits> limits_;  // SetDevices
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
  bool has_sample_states_ = false;  // a sample with a thread state (not 0, unknown)

  CopyAccounting copies_;
  GraphReplayAccounting graphs_;
  MemoryAccounting memory_;
  ProfilerStepAccounting steps_;
  NvtxAccounting nvtx_;  // before attribution_, which holds a pointer to it
  IdleAttribution attribution_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_TRACE_ANALYZER_H_
