#include "analyzer/summary/summarize_trace.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/classify/stack_view.h"
#include "analyzer/model/importer.h"
#include "analyzer/reader/trace_reader.h"

namespace gs::analyzer {

namespace {

namespace tr = gpustall::trace;

constexpr size_t kMaxStacks = 20;
constexpr size_t kMaxFrames = 16;

std::string FrameString(const FrameInfo& f) {
  if (f.file.empty()) return f.function;
  size_t slash = f.file.rfind('/');
  std::string file = slash == std::string::npos ? f.file : f.file.substr(slash + 1);
  return f.line ? absl::StrCat(f.function, " (", file, ":", f.line, ")")
                : absl::StrCat(f.function, " (", file, ")");
}

// Frames from the first one outside the runtime/agent (what the reports show as the site).
std::vector<FrameInfo> SiteOnward(std::vector<FrameInfo> frames) {
  frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(SiteFrameIndex(frames)));
  if (frames.size() > kMaxFrames) frames.resize(kMaxFrames);
  return frames;
}
std::vector<std::string> FrameStrings(const std::vector<FrameInfo>& frames) {
  std::vector<std::string> out;
  for (const FrameInfo& f : frames) out.push_back(FrameString(f));
  return out;
}

}  // namespace

void RankSummaryObserver::BeginTrace(size_t, const TraceImporter& importer, const TraceAnalyzer&) {
  tables_ = &importer.tables();
  imported_ = importer.imported();
  current_ = RankSummary();
  collectives_.clear();
  collective_name_.clear();
  gaps_.clear();
  host_charges_.clear();
  idle_by_key_.clear();
  last_key_idle_ = nullptr;
  rows_.clear();
  RankSummary& s = current_;
  s.source = importer.info().path;
  if (importer.imported()) {  // another format (analyzer/import/): identity from its TraceInfo
    const TraceInfo& info = importer.info();
    s.host_name = info.host;
    s.pid = info.pid;
    if (info.rank) s.rank = *info.rank;
    s.world_size = info.world_size;
    switch (info.wall_clock) {
      case WallClock::kBaseTime:
        s.clock = RankClock::kBaseTime;
        s.clock_realtime_ns = static_cast<uint64_t>(info.wall_ns_at_zero);
        break;
      case WallClock::kEpoch: s.clock = RankClock::kEpoch; break;
      case WallClock::kUnknown: s.clock = RankClock::kNone; break;
    }
    return;
  }
  const tr::TraceHeader& h = importer.reader().header();
  s.host_name = h.host_name();
  s.host_id = h.host_id();
  s.boot_id = h.boot_id();
  s.job_id = h.job_id();
  s.pid = h.pid();
  if (h.has_rank()) s.rank = h.rank();
  if (h.has_world_size()) s.world_size = h.world_size();
  s.trace_id = h.trace_id();
  s.clock_monotonic_ns = h.start_clock().monotonic_ns();
  s.clock_realtime_ns = h.start_clock().realtime_ns();
  s.clock_uncertainty_ns = h.start_clock().uncertainty_ns();
}

// Collectives from the activities as written (by kind or NCCL name): the importer's plausibility
// filter is for the analysis' time bins, and a summary counts what the file holds.
void RankSummaryObserver::OnChunk(const reader::ChunkEvents& events, const reader::InternTables& t) {
  for (const gs::trace::GpuActivityRecord& a : events.activities) {
    bool is_collective = a.kind == tr::ACTIVITY_KIND_COLLECTIVE;
    if (!is_collective && a.kind == tr::ACTIVITY_KIND_KERNEL && a.name != 0) {
      auto [it, inserted] = collective_name_.try_emplace(a.name, false);
      if (inserted && t.has_string(a.name)) it->second = IsCollectiveKernelName(t.string(a.name));
      is_collective = it->second;
    }
    if (is_collective && a.end_ns >= a.start_ns && a.start_ns > 0) {
      collectives_.push_back({a.device, static_cast<TimeNs>(a.start_ns), static_cast<TimeNs>(a.end_ns)});
    }
  }
}

// A trace of another format has no chunks: its collectives come from the model's records.
void RankSummaryObserver::ImportedCollectives::OnActivity(const GpuActivity& a) {
  if (IsCollectiveActivity(a, *owner->tables_, &owner->collective_name_))
    owner->collectives_.push_back({a.device, a.start_ns, a.end_ns});
}

RecordSink* RankSummaryObserver::records() { return imported_ ? &imported_collectives_ : nullptr; }

void RankSummaryObserver::OnIdleInterval(uint32_t device, const IntervalVerdict& v) {
  const TraceTables& tables = *tables_;
  const uint64_t first = host_charges_.size();
  for (const Charge& c : v.charges) {
    if (last_key_idle_ == nullptr || c.key != last_key_) {
      last_key_ = c.key;
      last_key_idle_ = &idle_by_key_[c.key];  // valid until the next insertion, i.e. the next miss
    }
    last_key_idle_->idle_ns += c.ns;
    last_key_idle_->by_cause[static_cast<int>(c.cause)] += c.ns;
    if (IsHostBound(c.cause)) host_charges_.push_back({c.key, c.ns});
  }
  // Only a gap with a length can fall in a step (EndTrace).
  if (v.end > v.start)
    gaps_.push_back({v.start, v.end, device, static_cast<uint32_t>(host_charges_.size() - first), first});
  else
    host_charges_.resize(first);
  if (!keep_rows_) return;
  IdleIntervalRow row;
  row.device = device;
  row.start_ns = v.start;
  row.end_ns = v.end;
  row.cause = v.cause;
  row.by_cause = v.by_cause;
  row.after_sync = v.after_sync && v.preceding != nullptr;
  if (row.after_sync) {
    row.after_sync_site = absl::StrCat(tables.FunctionName(v.preceding->function), " @ ",
                                       FrameString(SiteFrame(ViewStack(tables.ResolveStack(v.preceding->stack)))));
  }
  TimeNs most = -1;
  for (const Charge& c : v.charges) {
    if (c.ns > most) {
      most = c.ns;
      row.stack_id = c.key;
    }
  }
  rows_.push_back(std::move(row));
}

void RankSummaryObserver::EndTrace(size_t index, const TraceImporter&, const TraceResult& result) {
  const TraceTables& tables = *tables_;
  RankSummary& s = current_;
  std::vector<Collective>& collectives = collectives_;
  std::deque<Gap>& gaps = gaps_;
  bool all_fill = !result.devices.empty(), all_occupancy = all_fill;
  TimeNs covered = 0, occupied = 0;
  for (const DeviceSummary& d : result.devices) {
    ++s.devices;
    s.wall_ns += d.wall_ns;  // device time: utilisation over several devices is busy / this
    s.compute_busy_ns += d.compute_busy_ns;
    s.steady_wall_ns += d.steady_wall_ns;
    s.steady_idle_ns += d.steady_idle_ns;
    s.idle_intervals += d.idle_intervals;
    all_fill &= d.has_fill;
    all_occupancy &= d.has_occupancy;
    covered += d.sm_coverage_busy_ns;
    occupied += d.est_occupancy_busy_ns;
  }
  if (all_fill) s.sm_coverage_busy_ns = covered;
  if (all_fill && all_occupancy) s.est_occupancy_busy_ns = occupied;
  s.idle_by_cause = result.causes;
  for (const Collective& c : collectives) s.collective_ns += c.end - c.start;

  // Steps: the collectives of the device that has the most, in time order.
  std::vector<uint32_t> devices;
  for (const Collective& c : collectives) devices.push_back(c.device);
  const uint32_t step_device = StepDevice(devices);
  std::vector<Collective> mine;
  for (const Collective& c : collectives) {
    if (c.device == step_device) mine.push_back(c);
  }
  std::sort(mine.begin(), mine.end(),
            [](const Collective& a, const Collective& b) { return a.start < b.start; });
  for (const Collective& c : mine) s.steps.push_back({c.start, c.end, 0, 0});

  // Charge each gap to the step whose window it falls in: (previous collective end, start].
  if (!s.steps.empty()) {
    const auto by_start = [](const Gap& a, const Gap& b) { return a.start < b.start; };
    if (!std::is_sorted(gaps.begin(), gaps.end(), by_start)) std::sort(gaps.begin(), gaps.end(), by_start);
    size_t k = 0;
    for (const Gap& g : gaps) {
      TimeNs length = g.end - g.start;
      if (g.device != step_device || length <= 0) continue;
      while (k < s.steps.size() && s.steps[k].collective_start_ns <= g.start) ++k;
      if (k == s.steps.size()) continue;  // after the last collective: not before any step
      RankStep& step = s.steps[k];
      TimeNs window_start = k > 0 ? s.steps[k - 1].collective_end_ns : INT64_MIN;
      TimeNs overlap = std::min(g.end, step.collective_start_ns) - std::max(g.start, window_start);
      if (overlap <= 0) continue;
      double fraction = static_cast<double>(overlap) / static_cast<double>(length);
      step.idle_ns += overlap;
      for (uint64_t i = g.first_charge; i < g.first_charge + g.charges; ++i) {
        const HostCharge& c = host_charges_[i];
        auto ns = static_cast<TimeNs>(static_cast<double>(c.ns) * fraction);
        step.host_bound_idle_ns += ns;
        idle_by_key_[c.key].step_host_bound_ns += ns;
      }
    }
  }

  // As the report shows a charge key's stack (stack_view.h), from its site frame on.
  auto frames_of = [&](uint64_t key) { return SiteOnward(ChargeKeyFrames(tables, key)); };
  // Stacks that read as the same functions are one (as in the report's top stacks: stack ids that
  // differ only in interpreter frames, unsymbolised PCs or lines), shown with the lines of the
  // one charged most; its cause is the largest of their summed causes.
  struct Grouped {
    RankStack stack;
    CauseNs causes{};
    TimeNs shown_ns = -1;  // idle of the stack id whose lines `stack.frames` shows
  };
  absl::flat_hash_map<std::string, Grouped> grouped;
  TraceStacks stacks;
  for (const auto& [key, st] : idle_by_key_) {
    const std::vector<FrameInfo> frames = frames_of(key);
    Grouped& g = grouped[StackIdentity(frames)];
    g.stack.idle_ns += st.idle_ns;
    g.stack.step_host_bound_ns += st.step_host_bound_ns;
    for (size_t i = 0; i < st.by_cause.size(); ++i) g.causes[i] += st.by_cause[i];
    std::vector<std::string> strings = FrameStrings(frames);
    if (st.idle_ns > g.shown_ns || (st.idle_ns == g.shown_ns && strings < g.stack.frames)) {
      g.shown_ns = st.idle_ns;
      g.stack.frames = strings;
    }
    if (keep_rows_) stacks[key] = std::move(strings);
  }
  std::vector<RankStack> ranked;
  ranked.reserve(grouped.size());
  for (auto& [identity, g] : grouped) {
    g.stack.cause = static_cast<Cause>(std::max_element(g.causes.begin(), g.causes.end()) - g.causes.begin());
    ranked.push_back(std::move(g.stack));
  }
  std::sort(ranked.begin(), ranked.end(), [](const RankStack& a, const RankStack& b) {
    if (a.step_host_bound_ns != b.step_host_bound_ns) return a.step_host_bound_ns > b.step_host_bound_ns;
    if (a.idle_ns != b.idle_ns) return a.idle_ns > b.idle_ns;
    return a.frames < b.frames;
  });
  if (ranked.size() > kMaxStacks) ranked.resize(kMaxStacks);
  s.stacks = std::move(ranked);
  summaries_.push_back(std::move(s));
  if (forked_) {
    forked_stacks_ = std::move(stacks);  // rows_ too stay for Join
  } else {
    TraceSummarized(index, summaries_.back(), keep_rows_ ? &rows_ : nullptr, keep_rows_ ? &stacks : nullptr);
    rows_.clear();
  }
  gaps_.clear();
  host_charges_.clear();
  idle_by_key_.clear();
  last_key_idle_ = nullptr;
  collectives_.clear();
  tables_ = nullptr;
}

std::unique_ptr<TraceObserver> RankSummaryObserver::Fork(size_t) {
  auto fork = std::make_unique<RankSummaryObserver>(keep_rows_);
  fork->forked_ = true;
  return fork;
}

void RankSummaryObserver::Join(size_t index, std::unique_ptr<TraceObserver> fork) {
  auto& trace = static_cast<RankSummaryObserver&>(*fork);  // made by Fork: one trace, read to its end
  summaries_.push_back(std::move(trace.summaries_.at(0)));
  TraceSummarized(index, summaries_.back(), keep_rows_ ? &trace.rows_ : nullptr,
                  keep_rows_ ? &trace.forked_stacks_ : nullptr);
}

namespace {
// One trace's summary and rows, for SummarizeTrace's callers.
class OneTraceSummary final : public RankSummaryObserver {
 public:
  OneTraceSummary(std::vector<IdleIntervalRow>* intervals, TraceStacks* stacks)
      : RankSummaryObserver(intervals != nullptr || stacks != nullptr), intervals_(intervals), stacks_(stacks) {}

 private:
  void TraceSummarized(size_t, const RankSummary&, std::vector<IdleIntervalRow>* intervals,
                       TraceStacks* stacks) override {
    if (intervals_ != nullptr) *intervals_ = std::move(*intervals);
    if (stacks_ != nullptr) *stacks_ = std::move(*stacks);
  }
  std::vector<IdleIntervalRow>* intervals_;
  TraceStacks* stacks_;
};
}  // namespace

absl::StatusOr<RankSummary> SummarizeTrace(const std::string& path, const AnalysisOptions& options,
                                           std::vector<IdleIntervalRow>* intervals, TraceStacks* stacks) {
  OneTraceSummary summary(intervals, stacks);
  AnalyzeHooks hooks;
  hooks.observers = {&summary};
  absl::StatusOr<Analysis> analysis = AnalyzeTraces({path}, options, hooks);
  if (!analysis.ok()) return analysis.status();
  return std::move(summary.TakeSummaries().at(0));
}

}  // namespace gs::analyzer
