#include "analyzer/export/idle_interval_stream.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/units.h"

namespace gs::analyzer {

namespace {
constexpr size_t kMinReleaseBatch = 4096;
}

IdleIntervalStream::IdleIntervalStream(const AnalysisOptions& options, Callback on_interval)
    : options_(options),
      on_interval_(std::move(on_interval)),
      history_(options.correlation_slots_log2, options.max_history_per_thread),
      classifier_(options),
      release_at_(kMinReleaseBatch) {}

void IdleIntervalStream::OnApiCall(const ApiCall& call) { history_.AddCall(call); }
void IdleIntervalStream::OnSample(const Sample& sample) { history_.AddSample(sample); }

void IdleIntervalStream::OnActivity(const GpuActivity& a) {
  if (!IsDeviceWork(a.kind) || (a.start_ns == 0 && a.end_ns == 0)) return;
  if (a.start_ns < released_upto_) {  // late: placed as TraceAnalyzer places it
    Process(a);
    return;
  }
  pending_.push_back(a);
  max_start_ = std::max(max_start_, a.start_ns);
  if (pending_.size() >= release_at_) Release(max_start_ - options_.sort_window_ns);
}

void IdleIntervalStream::Finish() { Release(std::numeric_limits<TimeNs>::max()); }

void IdleIntervalStream::Release(TimeNs limit) {
  // Stable, so that equal starts keep file order, as TraceAnalyzer's sort-and-merge does in the
  // common case; gap lengths do not depend on the order of equal starts anyway.
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const GpuActivity& x, const GpuActivity& y) { return x.start_ns < y.start_ns; });
  auto end = std::partition_point(pending_.begin(), pending_.end(),
                                  [limit](const GpuActivity& x) { return x.start_ns <= limit; });
  for (auto it = pending_.begin(); it != end; ++it) Process(*it);
  if (end != pending_.begin()) released_upto_ = std::max(released_upto_, (end - 1)->start_ns);
  pending_.erase(pending_.begin(), end);
  release_at_ = std::max(kMinReleaseBatch, pending_.size() * 2);
  TimeNs prune = std::numeric_limits<TimeNs>::max();
  for (const auto& [id, tl] : devices_)
    if (tl->started()) prune = std::min(prune, tl->last_end());
  if (prune != std::numeric_limits<TimeNs>::max()) history_.PruneBefore(prune);
}

DeviceTimeline& IdleIntervalStream::Timeline(uint32_t device) {
  auto& slot = devices_[device];
  if (!slot) slot = std::make_unique<DeviceTimeline>(options_.utilization_sample_ns);
  return *slot;
}

void IdleIntervalStream::Process(const GpuActivity& a) {
  DeviceTimeline& tl = Timeline(a.device);
  DeviceTimeline::Gap gap = tl.Add(a);
  if (gap.length() <= 0) return;
  classifier_.Classify(gap.start, gap.end, a, history_, &verdict_);
  on_interval_(IdleInterval{a.device, &verdict_});
  if (verdict_.has_resume) {
    TimeNs prune = tl.last_end();
    for (const auto& [id, other] : devices_)
      if (other->started()) prune = std::min(prune, other->last_end());
    history_.PruneThreadBefore(verdict_.resume->thread, prune);
  }
}

std::string IdleIntervalStream::Evidence(const IntervalVerdict& v, const TraceTables& tables) {
  std::string s;
  switch (v.rule) {
    case GapRule::kNoHostCall: s = "no host call recorded for the work that ended the gap"; break;
    case GapRule::kQueuedBefore:
      s = absl::StrCat(tables.FunctionName(v.resume->function), " had returned before the device went idle");
      if (v.stream_wait_enter >= 0) absl::StrAppend(&s, "; cudaStreamWaitEvent on its stream before it");
      break;
    case GapRule::kHostLate:
      if (v.resume->enter_ns >= v.start) {
        s = absl::StrCat("thread ", v.resume->thread, " entered ", tables.FunctionName(v.resume->function),
                         " ", FormatDuration(v.resume->enter_ns - v.start), " after the device went idle");
      } else {
        s = absl::StrCat("thread ", v.resume->thread, " was inside ", tables.FunctionName(v.resume->function),
                         " (entered ", FormatDuration(v.start - v.resume->enter_ns),
                         " before the device went idle)");
      }
      break;
  }
  bool first = true;
  for (int i = 0; i < kNumCauses; ++i) {
    if (v.by_cause[i] <= 0) continue;
    absl::StrAppend(&s, first ? ": " : ", ", CauseTitle(static_cast<Cause>(i)), " ", FormatDuration(v.by_cause[i]));
    first = false;
  }
  return s;
}

}  // namespace gs::analyzer
