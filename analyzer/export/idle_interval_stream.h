// idle_interval_stream.h — every steady-state idle interval of a trace, one at a time, with its
// verdict (cause, evidence, after-sync site): what the Chrome export draws on its idle tracks.
//
// TraceAnalyzer keeps only aggregates and the longest examples, so this sink runs the same
// pipeline (sort window -> DeviceTimeline -> GapClassifier over a HostHistory) with the same
// AnalysisOptions and hands each gap to a callback instead of summing it. The gaps are the same
// ones TraceAnalyzer finds (same sort, same timeline), so their lengths add up to the report's
// steady-state idle time per device.
//
// Memory: the sort window and the host history, as TraceAnalyzer (bounded, not the trace).
// Thread safety: none. Lifetimes: `options`, `tables` outlive the stream; the IdleInterval
// passed to the callback is valid only during the call.
#ifndef GPUSTALL_ANALYZER_EXPORT_IDLE_INTERVAL_STREAM_H_
#define GPUSTALL_ANALYZER_EXPORT_IDLE_INTERVAL_STREAM_H_

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/analysis/device_timeline.h"
#include "analyzer/analysis/gap_classifier.h"
#include "analyzer/analysis/host_history.h"
#include "analyzer/analysis/options.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/model/trace_tables.h"

namespace gs::analyzer {

struct IdleInterval {
  uint32_t device = 0;
  const IntervalVerdict* verdict = nullptr;  // pointers inside valid during the callback only
};

class IdleIntervalStream final : public RecordSink {
 public:
  using Callback = std::function<void(const IdleInterval&)>;
  IdleIntervalStream(const AnalysisOptions& options, Callback on_interval);
  IdleIntervalStream(const IdleIntervalStream&) = delete;
  IdleIntervalStream& operator=(const IdleIntervalStream&) = delete;

  void OnApiCall(const ApiCall& call) override;
  void OnActivity(const GpuActivity& activity) override;
  void OnSample(const Sample& sample) override;
  void OnMemoryEvent(const MemoryEvent&) override {}

  // Drains the sort window (its remaining gaps reach the callback). Call once, at the end.
  void Finish();

  // One line saying why: the rule, the split by cause and the after-sync site.
  static std::string Evidence(const IntervalVerdict& v, const TraceTables& tables);

 private:
  void Release(TimeNs limit);
  void Process(const GpuActivity& a);
  DeviceTimeline& Timeline(uint32_t device);

  const AnalysisOptions& options_;
  Callback on_interval_;
  HostHistory history_;
  GapClassifier classifier_;
  IntervalVerdict verdict_;
  std::vector<GpuActivity> pending_;
  TimeNs max_start_ = std::numeric_limits<TimeNs>::min();
  TimeNs released_upto_ = std::numeric_limits<TimeNs>::min();
  size_t release_at_;
  absl::flat_hash_map<uint32_t, std::unique_ptr<DeviceTimeline>> devices_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_IDLE_INTERVAL_STREAM_H_
