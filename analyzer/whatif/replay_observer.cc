#include "analyzer/whatif/replay_observer.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/model/importer.h"
#include "analyzer/ranks/rank_summary.h"
#include "analyzer/result/trace_result.h"
#include "analyzer/whatif/nvtx_steps.h"

namespace gs::analyzer::whatif {

namespace {

// The rank's step collectives among the work (RankSummary::steps: those of its step device, in
// time order), for the job's join (predictions.h).
std::vector<int32_t> StepWork(const ReplayRecords& records, const TraceTables& tables) {
  std::vector<int32_t> collectives;
  std::vector<uint32_t> devices;
  absl::flat_hash_map<uint32_t, bool> names;
  for (size_t w = 0; w < records.work.size(); ++w) {
    const GpuActivity& a = records.work[w];
    if (IsCollectiveActivity(a, tables, &names)) {
      collectives.push_back(static_cast<int32_t>(w));
      devices.push_back(a.device);
    }
  }
  const uint32_t device = StepDevice(devices);
  std::vector<int32_t> steps;
  for (int32_t w : collectives)
    if (records.work[static_cast<size_t>(w)].device == device) steps.push_back(w);
  std::sort(steps.begin(), steps.end(), [&records](int32_t x, int32_t y) {
    return records.work[static_cast<size_t>(x)].start_ns < records.work[static_cast<size_t>(y)].start_ns;
  });
  return steps;
}

}  // namespace

void ReplayObserver::BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) {
  (void)index, (void)importer, (void)analyzer;
  sink_.records = ReplayRecords();
  sink_.outermost_nvtx.clear();
  sink_.max_records = max_records_;
  sink_.overflowed = false;
  gaps_.clear();
}

void ReplayObserver::OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) {
  (void)device;
  if (sink_.overflowed) return;
  ClassifiedGap gap;
  gap.length = verdict.length();
  gap.by_cause = verdict.by_cause;
  if (verdict.has_resume) gap.resume = sink_.IndexOf(verdict.resume);
  if (verdict.has_preceding) gap.preceding = sink_.IndexOf(verdict.preceding);
  gap.after_sync = verdict.after_sync;
  gap.lock_wait_ns = verdict.host_states[static_cast<size_t>(HostState::kLockWait)];
  gaps_.push_back(gap);
}

void ReplayObserver::EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) {
  if (sink_.overflowed) {
    TraceReplay r;
    r.index = index;
    r.check.tolerance = 0.03;
    r.check.reason = absl::StrCat("the trace has more than ", sink_.max_records,
                                  " API calls and pieces of device work, more than the replay keeps in memory; "
                                  "replay a shorter capture (a window: gpustall start/stop)");
    replays_.push_back(std::move(r));
    sink_.overflowed = false;
    sink_.outermost_nvtx.clear();
    gaps_.clear();
    return;
  }
  std::array<double, kNumCopyDirections> pinned{};
  for (int d = 0; d < kNumCopyDirections; ++d)
    pinned[static_cast<size_t>(d)] = result.copies.KnownPinnedBandwidth(static_cast<CopyDirection>(d), result.link_peak);
  uint32_t workers = 0;  // the trace's input worker processes (accounting/input_workers.h)
  for (const ProcessActivity& p : importer.info().processes.processes())
    if (p.last.role == ProcessRole::kDataWorker) ++workers;
  std::vector<int32_t> steps = StepWork(sink_.records, importer.tables());
  // Steps where the trace marks them: PyTorch profiler steps, else the program's NVTX ranges.
  std::vector<TimeNs> step_starts;
  std::string step_marks;
  for (const ProfilerStep& p : importer.info().profiler_steps) step_starts.push_back(p.start_ns);
  if (!step_starts.empty()) {
    step_marks = "ProfilerStep#N";
  } else {
    NvtxSteps nvtx = FindNvtxSteps(sink_.outermost_nvtx, importer.tables());
    step_starts = std::move(nvtx.starts);
    if (!step_starts.empty()) step_marks = DescribeNvtxSteps(nvtx);
  }
  sink_.outermost_nvtx.clear();
  std::sort(step_starts.begin(), step_starts.end());
  ProfilerSteps profiler_steps = TieProfilerSteps(sink_.records, step_starts);
  if (profiler_steps.steps == 0) step_marks.clear();  // marks that tie to no call mark nothing
  const ReplayGraph graph(std::move(sink_.records), std::move(steps), std::move(profiler_steps));
  sink_.records = ReplayRecords();
  replays_.push_back(TraceReplay{index, graph.parameters(), CheckReplay(graph),
                                 PredictFixes(graph, gaps_, importer.tables(), pinned, workers),
                                 std::move(step_marks)});
  gaps_.clear();
}

std::unique_ptr<TraceObserver> ReplayObserver::Fork(size_t index) {
  (void)index;
  return std::make_unique<ReplayObserver>(max_records_);
}

void ReplayObserver::Join(size_t index, std::unique_ptr<TraceObserver> fork) {
  (void)index;
  auto* replay = static_cast<ReplayObserver*>(fork.get());
  for (TraceReplay& r : replay->replays_) replays_.push_back(std::move(r));
}

}  // namespace gs::analyzer::whatif
