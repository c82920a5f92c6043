#include "analyzer/summary/summarize_trace.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
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
// The first of `steps` (by collective start) whose collective starts after `t`.
std::vector<RankStep>::iterator FirstStepAfter(std::vector<RankStep>* steps, TimeNs t) {
  return std::upper_bound(steps->begin(), steps->end(), t,
                          [](TimeNs x, const RankStep& s) { return x < s.collective_start_ns; });
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
  collective_name_.clear();
  steps_by_device_.clear();
  last_steps_ = nullptr;
  idle_by_key_.clear();
  key_cache_.Reset();
  rows_.Clear();
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
  for (const auto& kv : h.settings()) {
    uint32_t window = 0;
    if (kv.key() == "capture_window" && absl::SimpleAtoi(kv.value(), &window)) s.capture_window = window;
  }
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
      AddCollective(a.device, static_cast<TimeNs>(a.start_ns), static_cast<TimeNs>(a.end_ns));
    }
  }
}

// A trace of another format has no chunks: its collectives come from the model's records.
void RankSummaryObserver::ImportedCollectives::OnActivity(const GpuActivity& a) {
  if (IsCollectiveActivity(a, *owner->tables_, &owner->collective_name_)) {
    owner->AddCollective(a.device, a.start_ns, a.end_ns);
  }
}

RankSummaryObserver::DeviceSteps& RankSummaryObserver::Steps(uint32_t device) {
  if (last_steps_ != nullptr && last_device_ == device) return *last_steps_;
  const size_t before = steps_by_device_.size();
  last_device_ = device;
  last_steps_ = &steps_by_device_[device];
  if (steps_by_device_.size() != before) {
    // The insertion may have moved every device's entry, and a map moved along with its entry
    // need not keep its own entries where they were (a small one may hold them inline).
    for (auto& [id, d] : steps_by_device_) {
      d.pending_cache.Reset();
      d.step_cache.Reset();
    }
  }
  return *last_steps_;
}

// A new step on `device`, in start order. The first collective to arrive after the pending gaps
// takes them; one that arrives after a later-starting collective takes that one's idle instead
// (the header's "Steps as the trace is read": all of it lies before this one's start).
void RankSummaryObserver::AddCollective(uint32_t device, TimeNs start, TimeNs end) {
  DeviceSteps& d = Steps(device);
  const auto at = FirstStepAfter(&d.steps, start);
  const auto i = static_cast<size_t>(at - d.steps.begin());
  d.steps.insert(at, RankStep{start, end, 0, 0});
  RankStep& step = d.steps[i];
  if (i + 1 < d.steps.size()) {
    RankStep& later = d.steps[i + 1];
    step.idle_ns = later.idle_ns;
    step.host_bound_idle_ns = later.host_bound_idle_ns;
    later.idle_ns = later.host_bound_idle_ns = 0;
    return;
  }
  step.idle_ns = d.pending_idle_ns;
  step.host_bound_idle_ns = d.pending_host_bound_ns;
  for (const auto& [key, ns] : d.pending_by_key) d.step_cache.Get(d.step_host_bound_by_key, key) += ns;
  d.pending_idle_ns = d.pending_host_bound_ns = 0;
  d.pending_by_key.clear();
  d.pending_cache.Reset();
}

RecordSink* RankSummaryObserver::records() { return imported_ ? &imported_collectives_ : nullptr; }

void RankSummaryObserver::OnIdleInterval(uint32_t device, const IntervalVerdict& v) {
  const TraceTables& tables = *tables_;
  host_bound_.clear();
  for (const Charge& c : v.charges) {
    KeyIdle& idle = key_cache_.Get(idle_by_key_, c.key);
    idle.idle_ns += c.ns;
    idle.by_cause[static_cast<int>(c.cause)] += c.ns;
    if (IsHostBound(c.cause)) host_bound_.emplace_back(c.key, c.ns);
  }
  // Its step: the window (previous collective's end, next collective's start] it overlaps on its
  // device. The next collective may not have arrived yet: then it ends after the gap (a gap is
  // device idle) and the overlap is known already; the step is the pending one.
  if (v.end > v.start) {
    DeviceSteps& d = Steps(device);
    const auto next = FirstStepAfter(&d.steps, v.start);
    const TimeNs window_start = next == d.steps.begin() ? INT64_MIN : std::prev(next)->collective_end_ns;
    const TimeNs window_end = next == d.steps.end() ? v.end : std::min(v.end, next->collective_start_ns);
    const TimeNs overlap = window_end - std::max(v.start, window_start);
    if (overlap > 0) {
      // Mostly the whole gap lies in the window: its charges as they are, without a division.
      const bool whole = overlap == v.end - v.start;
      const double fraction = whole ? 1.0 : static_cast<double>(overlap) / static_cast<double>(v.end - v.start);
      const bool pending = next == d.steps.end();
      TimeNs& idle = pending ? d.pending_idle_ns : next->idle_ns;
      TimeNs& host_bound = pending ? d.pending_host_bound_ns : next->host_bound_idle_ns;
      auto& by_key = pending ? d.pending_by_key : d.step_host_bound_by_key;
      auto& by_key_cache = pending ? d.pending_cache : d.step_cache;
      idle += overlap;
      for (const auto& [key, charged] : host_bound_) {
        const TimeNs ns = whole ? charged : static_cast<TimeNs>(static_cast<double>(charged) * fraction);
        host_bound += ns;
        by_key_cache.Get(by_key, key) += ns;
      }
    }
  }
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
  rows_.Append(row);
}

void RankSummaryObserver::EndTrace(size_t index, const TraceImporter&, const TraceResult& result) {
  const TraceTables& tables = *tables_;
  RankSummary& s = current_;
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
  // Steps: those of the device that has the most collectives, with the gaps charged to them as
  // they arrived (OnIdleInterval); gaps after its last collective are in no step.
  std::vector<uint32_t> devices;  // a device per collective, for StepDevice
  for (const auto& [device, d] : steps_by_device_) {
    for (const RankStep& step : d.steps) s.collective_ns += step.collective_end_ns - step.collective_start_ns;
    devices.insert(devices.end(), d.steps.size(), device);
  }
  if (auto d = steps_by_device_.find(StepDevice(devices)); d != steps_by_device_.end()) {
    s.steps = std::move(d->second.steps);
    for (const auto& [key, ns] : d->second.step_host_bound_by_key) idle_by_key_[key].step_host_bound_ns += ns;
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
    rows_.Clear();
  }
  steps_by_device_.clear();
  last_steps_ = nullptr;
  idle_by_key_.clear();
  key_cache_.Reset();
  tables_ = nullptr;
}

std::unique_ptr<TraceObserver> RankSummaryObserver::Fork(size_t) {
  auto fork = std::make_unique<RankSummaryObserver>(keep_rows_, rows_.dir());
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
  // Reading the rows back from their file (OK when none were asked for).
  const absl::Status& read() const { return read_; }

 private:
  void TraceSummarized(size_t, const RankSummary&, IdleIntervalRows* intervals, TraceStacks* stacks) override {
    if (intervals_ != nullptr) {
      read_ = intervals->ForEach([this](const IdleIntervalRow& row) { intervals_->push_back(row); });
    }
    if (stacks_ != nullptr) *stacks_ = std::move(*stacks);
  }
  std::vector<IdleIntervalRow>* intervals_;
  TraceStacks* stacks_;
  absl::Status read_;
};
}  // namespace

absl::StatusOr<RankSummary> SummarizeTrace(const std::string& path, const AnalysisOptions& options,
                                           std::vector<IdleIntervalRow>* intervals, TraceStacks* stacks) {
  OneTraceSummary summary(intervals, stacks);
  AnalyzeHooks hooks;
  hooks.observers = {&summary};
  absl::StatusOr<Analysis> analysis = AnalyzeTraces({path}, options, hooks);
  if (!analysis.ok()) return analysis.status();
  if (!summary.read().ok()) return summary.read();
  return std::move(summary.TakeSummaries().at(0));
}

}  // namespace gs::analyzer
