// summarize_trace.h — a trace's RankSummary, observed on the one pass (analysis/trace_observer.h),
// and, on request, its idle intervals and stacks as table rows for `gsanalyze export --tables`.
//
// What it takes from the pass: the header's identity and clocks (BeginTrace), collective kernels
// by kind or NCCL name from the records as written (OnChunk), every idle gap with its causes and
// charged stacks (OnIdleInterval, summed as it comes), and the devices' totals (EndTrace). A trace
// of another format (analyzer/import/) has neither header nor chunks: identity from its
// TraceInfo, collectives from its model records (records()).
//
// Steps as the trace is read: a gap is charged to its step when it arrives, so that memory grows
// with the collectives (the steps themselves) and the charge keys, not with the gaps (a trace of
// 50 M records has 25 M of them). A step is the window (previous collective's end, this
// collective's start] on one device; the step device, the one with the most collectives, is known
// only at EndTrace, so each device's steps are kept. A gap whose step's collective has not arrived
// yet (the one after it) is summed into its device's pending window, which the next collective
// to arrive after it takes over. This is exact where each device's activity records arrive in the
// order they complete, as CUPTI delivers them and the analysis' sort window restores: a gap is
// device idle, so every collective before it completed before it ended and has arrived by the
// time the analysis classifies it. Collectives that overlap (several communicators' streams)
// complete out of their start order: one that arrives after a collective that started later is
// the step of everything charged to that one while it was missing (none of it can lie between
// the two: it would have come after this one's end), which moves to it. What the analysis
// classifies that no complete record bounds (damage, implausible times) may be charged otherwise
// than a sort of all gaps at the end would (the summary counts collectives as written).
//
// Thread safety: none. On a pass that reads several traces at once each trace has a fork of its
// own (Fork), and Join adds that trace's summary and calls TraceSummarized in input order.
#ifndef GPUSTALL_ANALYZER_SUMMARY_SUMMARIZE_TRACE_H_
#define GPUSTALL_ANALYZER_SUMMARY_SUMMARIZE_TRACE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "analyzer/analysis/trace_observer.h"
#include "analyzer/model/recent_entries.h"
#include "analyzer/options/options.h"
#include "analyzer/ranks/rank_summary.h"
#include "analyzer/summary/idle_interval_rows.h"

namespace gs::analyzer {

// Stacks of one trace by id (the analysis' charge keys), frames as printable strings, leaf first.
using TraceStacks = std::map<uint64_t, std::vector<std::string>>;

// Summarises every trace of the pass it is registered on, in the order they are read.
class RankSummaryObserver : public TraceObserver {
 public:
  // `keep_rows`: also collect each trace's idle intervals and stacks (TraceSummarized gets them),
  // the intervals in a temporary file in `rows_dir` ("": the system's temporary folder;
  // idle_interval_rows.h says why a file).
  explicit RankSummaryObserver(bool keep_rows = false, std::string rows_dir = "")
      : keep_rows_(keep_rows), rows_(std::move(rows_dir)) {}

  // Final: a fork is a plain RankSummaryObserver, so what a subclass adds goes in TraceSummarized,
  // which is called on the observer itself (never on a fork).
  void BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) final;
  void OnChunk(const reader::ChunkEvents& events, const reader::InternTables& tables) final;
  RecordSink* records() final;  // a trace of another format only (it has no chunks)
  void OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) final;
  void EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) final;
  std::unique_ptr<TraceObserver> Fork(size_t index) final;
  void Join(size_t index, std::unique_ptr<TraceObserver> fork) final;

  // One per trace read so far, in pass order.
  const std::vector<RankSummary>& summaries() const { return summaries_; }
  std::vector<RankSummary> TakeSummaries() { return std::move(summaries_); }

 protected:
  // Called at the end of each trace with its summary and (with `keep_rows`) its rows, which are
  // dropped afterwards: a job's tables are written trace by trace (export/tables_export.cc).
  virtual void TraceSummarized(size_t index, const RankSummary& summary, IdleIntervalRows* intervals,
                               TraceStacks* stacks) {
    (void)index, (void)summary, (void)intervals, (void)stacks;
  }

 private:
  // One device's steps so far (the file comment: "Steps as the trace is read").
  struct DeviceSteps {
    std::vector<RankStep> steps;  // one per collective, by start (ties: in arrival order)
    // Gaps after the last collective so far, for the step of the next one: their idle in the
    // window, its host-bound part, and that part by charge key.
    TimeNs pending_idle_ns = 0, pending_host_bound_ns = 0;
    absl::flat_hash_map<uint64_t, TimeNs> pending_by_key;
    // Host-bound idle charged inside this device's steps, by charge key (KeyIdle's
    // step_host_bound_ns when this is the step device). Moving a step's idle to another step
    // (an out-of-order collective) leaves it as it is.
    absl::flat_hash_map<uint64_t, TimeNs> step_host_bound_by_key;
    // In front of the two maps: each gap adds to them once per host-bound charge.
    RecentEntries<absl::flat_hash_map<uint64_t, TimeNs>> pending_cache, step_cache;
  };
  // steps_by_device_[device], through a one-device cache (every gap asks; a new device's
  // insertion may move the others, so it empties the cache).
  DeviceSteps& Steps(uint32_t device);
  void AddCollective(uint32_t device, TimeNs start, TimeNs end);

  // An imported trace's collectives, from its model records (a .gstrace's come from OnChunk).
  struct ImportedCollectives final : RecordSink {
    explicit ImportedCollectives(RankSummaryObserver* o) : owner(o) {}
    void OnApiCall(const ApiCall&) override {}
    void OnActivity(const GpuActivity& a) override;
    void OnSample(const Sample&) override {}
    void OnMemoryEvent(const MemoryEvent&) override {}
    RankSummaryObserver* owner;
  };

  const bool keep_rows_;
  // A fork (Fork): EndTrace keeps the trace's rows and stacks for Join instead of handing them to
  // TraceSummarized.
  bool forked_ = false;
  TraceStacks forked_stacks_;
  std::vector<RankSummary> summaries_;
  // The trace being read.
  const TraceTables* tables_ = nullptr;
  RankSummary current_;
  absl::flat_hash_map<uint32_t, bool> collective_name_;  // string id -> is a collective
  absl::flat_hash_map<uint32_t, DeviceSteps> steps_by_device_;
  std::vector<std::pair<uint64_t, TimeNs>> host_bound_;  // OnIdleInterval's scratch
  struct KeyIdle {
    TimeNs idle_ns = 0;
    CauseNs by_cause{};
    TimeNs step_host_bound_ns = 0;  // of it, host-bound inside the step device's steps (EndTrace)
  };
  absl::flat_hash_map<uint64_t, KeyIdle> idle_by_key_;  // charge key -> idle charged to it
  RecentEntries<absl::flat_hash_map<uint64_t, KeyIdle>> key_cache_;  // in front of idle_by_key_
  uint32_t last_device_ = 0;
  DeviceSteps* last_steps_ = nullptr;  // Steps' cache: steps_by_device_[last_device_]
  IdleIntervalRows rows_;  // the trace's, with keep_rows_
  bool imported_ = false;  // the trace is of another format (TraceImporter::imported())
  ImportedCollectives imported_collectives_{this};
};

// One trace on a pass of its own (`gsanalyze summarize`, tests). Errors: the trace cannot be
// opened or is not a trace (one line naming the file). A damaged trace is summarised as far as it
// reads. `intervals`/`stacks` may be null.
absl::StatusOr<RankSummary> SummarizeTrace(const std::string& path,
                                           const AnalysisOptions& options = AnalysisOptions(),
                                           std::vector<IdleIntervalRow>* intervals = nullptr,
                                           TraceStacks* stacks = nullptr);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_SUMMARY_SUMMARIZE_TRACE_H_
