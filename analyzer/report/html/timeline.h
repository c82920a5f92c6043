// timeline.h — the HTML report's timeline data: per-device, per-stream and per-host-thread lanes,
// decimated while the trace streams by, so that the page stays small and fast on traces of
// millions of events.
//
// Two levels of detail per lane:
//   buckets  a fixed number (TimelineOptions::buckets) of equal time buckets over the whole span,
//            each holding the nanoseconds of work (streams), API calls (threads) or idle time per
//            cause (devices) that fall into it; samples are counted per thread state. The grid
//            grows by doubling its bucket width (merging neighbours) whenever a record falls
//            outside it, so its memory is fixed and records may arrive in any order. The page
//            derives coarser zoom levels from these by prefix sums.
//   exact    every segment (kernel, copy, API call, idle interval) as it was, kept only while the
//            whole timeline holds at most TimelineOptions::max_exact_segments of them; past that
//            budget all exact segments are dropped and the page draws buckets at every zoom.
//
// The recorder computes no analysis of its own: device idle intervals and their causes come from
// TraceAnalyzer's interval observer (the same gaps and verdicts as the JSON report), and a
// device's busy time in a bucket is its steady window minus those intervals. How full the kernels
// kept the device comes from its fill observer (timeline/fill_timeline.h FillPiece: the stretches
// the report's SM coverage integrates): a device's under-filled time in a bucket is
// ∫ (1 − min(1, Σ coverage of the running kernels)) dt over the time its sized kernels ran —
// busy, but SMs without work. Summed over the buckets it is the time those kernels ran less
// devices[].sm_coverage_busy_ns.
//
// Thread safety: none. Lifetimes: a TimelineRecorder refers to its Timeline, its downstream sink
// and its tables, which must outlive it.
#ifndef GPUSTALL_ANALYZER_REPORT_HTML_TIMELINE_H_
#define GPUSTALL_ANALYZER_REPORT_HTML_TIMELINE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/analysis/trace_observer.h"
#include "analyzer/classify/cause.h"
#include "analyzer/classify/gap_classifier.h"
#include "analyzer/model/record_sink.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"
#include "analyzer/timeline/fill_timeline.h"

namespace gs::analyzer::html {

struct TimelineOptions {
  // Buckets over the whole span: at 16384 a 1,000-pixel-wide view of the whole trace has ~16
  // buckets per pixel, and ten lanes of per-mille values are ~0.5 MB of page.
  size_t buckets = 16384;
  // ~12 bytes each in the page (delta-encoded): 100k segments keep the page near 1.5 MB.
  size_t max_exact_segments = 100'000;
  // Host threads shown (the busiest by API time); more are counted, not drawn.
  size_t max_threads = 64;
};

// A fixed number of buckets over a span that grows by doubling. Every series registered with
// it is rescaled together, so all lanes share one time axis.
class BucketGrid {
 public:
  explicit BucketGrid(size_t buckets);
  // A series: one value per bucket, created zeroed and rescaled with the grid. Owned by the grid.
  std::vector<int64_t>* NewSeries();
  // Adds the overlap of [start, end) with each bucket (ns), times `weight` (rounded to the ns in
  // each bucket), to `series`. Returns what it added.
  int64_t AddSpan(std::vector<int64_t>* series, TimeNs start, TimeNs end, double weight = 1.0);
  // Adds 1 to the bucket holding `t`.
  void AddPoint(std::vector<int64_t>* series, TimeNs t);

  bool empty() const { return !started_; }
  TimeNs origin() const { return origin_; }
  TimeNs width() const { return width_; }
  size_t size() const { return buckets_; }

 private:
  void Cover(TimeNs start, TimeNs end);  // grows the grid until [start, end) fits
  void Double(bool keep_origin);
  size_t buckets_;
  bool started_ = false;
  TimeNs origin_ = 0, width_ = 1024;
  std::vector<std::unique_ptr<std::vector<int64_t>>> series_;
};

struct Segment {
  TimeNs start = 0, end = 0;
  // Timeline::names index (streams: kernel/copy kind, threads: API name, NVTX: range name);
  // devices: the cause.
  uint32_t label = 0;
};

struct Lane {
  enum class Kind { kDevice, kStream, kThread, kNvtx };
  Kind kind = Kind::kStream;
  size_t trace = 0;
  uint32_t device = 0;       // kDevice, kStream
  uint32_t stream = 0;       // kStream
  uint64_t thread = 0;       // kThread, kNvtx
  std::string label;
  // kStream: device work ns; kThread: ns inside API calls; kNvtx: ns inside outermost ranges.
  std::vector<int64_t>* busy = nullptr;
  std::array<std::vector<int64_t>*, kNumCauses> idle{};        // kDevice, per dominant cause
  std::vector<int64_t>* underfilled = nullptr;                 // kDevice: busy ns with SMs left empty
  TimeNs underfilled_ns = 0;                                   // kDevice: the series' sum
  std::array<std::vector<int64_t>*, kNumHostStates> states{};  // kThread: sample counts
  std::vector<Segment> exact;
  TimeNs busy_ns = 0;        // kStream/kThread: total
  uint64_t segments = 0;     // every segment seen (also after the exact budget ran out)
  TimeNs work_start = 0, work_end = 0;  // kDevice: first device work start, last end (steady window)
  bool has_work = false;
};

// All lanes of all traces on one time axis.
class Timeline {
 public:
  explicit Timeline(const TimelineOptions& options = TimelineOptions());

  Lane& DeviceLane(size_t trace, uint32_t device);
  Lane& StreamLane(size_t trace, uint32_t device, uint32_t stream);
  Lane& ThreadLane(size_t trace, uint64_t thread);
  // A thread's outermost NVTX ranges, drawn under its thread lane.
  Lane& NvtxLane(size_t trace, uint64_t thread);
  // Adds a segment to the lane's exact list while the budget lasts.
  void AddExact(Lane* lane, const Segment& s);
  uint32_t Name(const std::string& name);  // interned label strings

  void AddRecords(uint64_t n) { records_ += n; }
  const BucketGrid& grid() const { return grid_; }
  BucketGrid& grid() { return grid_; }
  bool exact() const { return exact_; }
  size_t exact_segments() const { return exact_count_; }
  // Lanes the page draws (threads beyond TimelineOptions::max_threads are not).
  size_t lanes() const;

  // The page's data (the "timeline" object, see html/README.md): one line of JSON.
  std::string ToJson() const;

 private:
  std::vector<const Lane*> ShownThreads() const;  // the busiest max_threads thread lanes
  // Device and stream lanes always; thread and NVTX lanes when their thread is in `threads`.
  static bool Shown(const std::vector<const Lane*>& threads, const Lane& lane);
  TimelineOptions options_;
  BucketGrid grid_;
  // Ordered keys put each trace's devices (and their streams) before its threads.
  std::map<std::tuple<size_t, int, uint64_t, uint64_t>, Lane> lanes_;
  std::vector<std::string> names_;
  std::map<std::string, uint32_t> name_ids_;
  bool exact_ = true;
  size_t exact_count_ = 0;
  uint64_t records_ = 0;
  TimeNs first_ = 0, last_ = 0;
  bool any_ = false;
  friend class TimelineRecorder;
};

// One trace's records on their way to the analysis: records what the timeline needs, then passes
// each record on to `next` (the TraceAnalyzer; nullptr when the pass delivers them itself, as
// TimelineObserver's does). Hook OnInterval to the analyzer's interval observer.
class TimelineRecorder final : public RecordSink {
 public:
  TimelineRecorder(Timeline* timeline, size_t trace, const TraceTables& tables, RecordSink* next);

  void OnApiCall(const ApiCall& call) override;
  void OnActivity(const GpuActivity& activity) override;
  void OnSample(const Sample& sample) override;
  void OnMemoryEvent(const MemoryEvent& event) override;
  // Every RecordSink method must be forwarded here: one left to its default would be swallowed
  // before the analysis sees it.
  void OnNvtxRange(const NvtxRange& range) override;
  void OnInterval(uint32_t device, const IntervalVerdict& verdict);
  // Hook to the analyzer's fill observer: the piece's under-filled time into the device's lane.
  void OnFill(uint32_t device, const FillPiece& piece);

  // Names the lanes (threads from the tables, devices from `devices`); call after the trace is
  // read and while the tables live.
  void Finish(const std::string& trace_label, const std::vector<DeviceDescription>& devices);

 private:
  void See(TimeNs start, TimeNs end);
  Timeline& t_;
  size_t trace_;
  const TraceTables& tables_;
  RecordSink* next_;
  std::map<uint32_t, uint32_t> function_names_;  // function id -> Timeline name id
  std::map<uint32_t, uint32_t> range_names_;     // NVTX string id -> Timeline name id
};

// The timeline's view of the one pass (analysis/trace_observer.h): a TimelineRecorder per trace,
// fed the trace's records and idle intervals; lanes are named when the trace ends. `traces`: how
// many traces the pass reads (lanes carry a trace's label only when there are several). It has no
// Fork (trace_observer.h): every trace's lanes and names go into the one Timeline, numbered as
// they come, so `gsanalyze html` reads its traces one after another whatever the jobs.
class TimelineObserver final : public TraceObserver {
 public:
  TimelineObserver(Timeline* timeline, size_t traces) : timeline_(timeline), traces_(traces) {}

  void BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) override;
  RecordSink* records() override { return recorder_.get(); }
  void OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) override;
  void OnFillPiece(uint32_t device, const FillPiece& piece) override;
  void EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) override;

 private:
  Timeline* timeline_;
  size_t traces_;
  std::unique_ptr<TimelineRecorder> recorder_;
};

}  // namespace gs::analyzer::html

#endif  // GPUSTALL_ANALYZER_REPORT_HTML_TIMELINE_H_
