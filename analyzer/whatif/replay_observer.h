// replay_observer.h — the replay check (replay.h) and the fixes' predictions (what_ifs.h) of every
// trace of a pass: collects each trace's API calls, timed device work and classified idle gaps as
// the pass reads them, builds its graph at the trace's end, replays it unmodified and with each
// fix. Results in input order, whatever the pass's jobs.
//
// Thread safety: a TraceObserver (trace_observer.h): forks per trace when the pass reads several
// at once. Memory: each trace's calls and device work while it is read (a what-if needs the
// whole graph), released at its end; only the figures are kept. A trace of more than
// kMaxReplayRecords calls and pieces of device work is not replayed (its check says so): its
// records would take gigabytes (~100 bytes each, the graph's own words besides).
#ifndef GPUSTALL_ANALYZER_WHATIF_REPLAY_OBSERVER_H_
#define GPUSTALL_ANALYZER_WHATIF_REPLAY_OBSERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "analyzer/analysis/trace_observer.h"
#include "analyzer/whatif/replay.h"
#include "analyzer/whatif/what_ifs.h"

namespace gs::analyzer::whatif {

struct TraceReplay {
  size_t index = 0;  // the trace's position in the pass
  ReplayParameters parameters;
  ReplayCheck check;
  std::vector<WhatIf> what_ifs;  // computed whether or not the check held
  // What marks the trace's steps: "ProfilerStep#N", an NVTX range's name (nvtx_steps.h), or
  // empty (none).
  std::string step_marks;
};

inline constexpr size_t kMaxReplayRecords = 8'000'000;

class ReplayObserver final : public TraceObserver {
 public:
  ReplayObserver() = default;
  explicit ReplayObserver(size_t max_records) : max_records_(max_records) {}

  RecordSink* records() override { return &sink_; }
  void BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) override;
  void OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) override;
  void EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) override;
  std::unique_ptr<TraceObserver> Fork(size_t index) override;
  void Join(size_t index, std::unique_ptr<TraceObserver> fork) override;

  const std::vector<TraceReplay>& replays() const { return replays_; }

 private:
  class Collector final : public RecordSink {
   public:
    void OnApiCall(const ApiCall& call) override {
      if (Full()) return;
      records.calls.push_back(call);
    }
    // The index of a call the analysis hands back (a verdict's resume or preceding call), or -1.
    // Every call of the trace is kept in delivery order, so its index is its sequence number
    // (ApiCall::sequence); the check is for a reader that did not number its calls.
    int32_t IndexOf(const ApiCall* call) const {
      if (call == nullptr || call->sequence >= records.calls.size()) return -1;
      const ApiCall& kept = records.calls[call->sequence];
      return kept.thread == call->thread && kept.enter_ns == call->enter_ns ? static_cast<int32_t>(call->sequence)
                                                                            : -1;
    }
    void OnActivity(const GpuActivity& a) override {
      if (IsDeviceWork(a.kind) && a.end_ns >= a.start_ns && !(a.start_ns == 0 && a.end_ns == 0) && !Full())
        records.work.push_back(a);
    }
    // Past the cap: everything collected is dropped at once, and the rest not collected.
    bool Full() {
      if (overflowed) return true;
      if (records.calls.size() + records.work.size() < max_records) return false;
      overflowed = true;
      records = ReplayRecords();
      return true;
    }
    size_t max_records = kMaxReplayRecords;
    bool overflowed = false;
    void OnSample(const Sample&) override {}
    void OnMemoryEvent(const MemoryEvent&) override {}
    // The outermost ranges only, the candidates for steps (nvtx_steps.h): a handful per step.
    void OnNvtxRange(const NvtxRange& r) override {
      if (r.depth == 0 && !overflowed) outermost_nvtx.push_back(r);
    }
    ReplayRecords records;
    std::vector<NvtxRange> outermost_nvtx;
  };
  size_t max_records_ = kMaxReplayRecords;
  Collector sink_;
  std::vector<ClassifiedGap> gaps_;
  std::vector<TraceReplay> replays_;
};

}  // namespace gs::analyzer::whatif

#endif  // GPUSTALL_ANALYZER_WHATIF_REPLAY_OBSERVER_H_
