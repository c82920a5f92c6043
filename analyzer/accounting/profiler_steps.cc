// profiler_steps.cc — see profiler_steps.h.
#include "analyzer/accounting/profiler_steps.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace gs::analyzer {
namespace {

struct Interval {
  TimeNs start, end;
  bool compute;
};

// The figures of one device's work; sorts `v`.
StepFigures Figures(std::vector<Interval>* v) {
  StepFigures f;
  if (v->empty()) return f;
  std::sort(v->begin(), v->end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  TimeNs last_end = v->front().end;
  TimeNs run_start = v->front().start, run_end = v->front().end;    // all work
  TimeNs crun_start = 0, crun_end = 0;                                // compute work
  bool in_compute = false;
  for (const Interval& i : *v) {
    last_end = std::max(last_end, i.end);
    if (i.start > run_end) {
      f.busy_ns += run_end - run_start;
      run_start = i.start;
      run_end = i.end;
    } else {
      run_end = std::max(run_end, i.end);
    }
    if (!i.compute) continue;
    if (in_compute && i.start <= crun_end) {
      crun_end = std::max(crun_end, i.end);
    } else {
      if (in_compute) f.compute_busy_ns += crun_end - crun_start;
      crun_start = i.start;
      crun_end = i.end;
      in_compute = true;
    }
  }
  f.busy_ns += run_end - run_start;
  if (in_compute) f.compute_busy_ns += crun_end - crun_start;
  f.wall_ns = last_end - v->front().start;
  f.idle_ns = f.wall_ns - f.busy_ns;
  f.utilization = f.wall_ns > 0 ? static_cast<double>(f.compute_busy_ns) / f.wall_ns : 0;
  f.work = v->size();
  return f;
}

}  // namespace

std::string StepWindowName(const StepWindow& w) {
  return absl::StrCat("over ", w.steps, " complete profiler step", w.steps == 1 ? "" : "s", " (ProfilerStep#",
                      w.first_step, w.steps == 1 ? "" : absl::StrCat("\u2013#", w.last_step), "), as HTA");
}

void ProfilerStepAccounting::Enable(const std::vector<ProfilerStep>& steps) {
  absl::flat_hash_set<int64_t> numbers;
  for (const ProfilerStep& s : steps) numbers.insert(s.number);
  if (numbers.size() < 2) return;
  steps_ = steps;
  std::stable_sort(steps_.begin(), steps_.end(),
                   [](const ProfilerStep& a, const ProfilerStep& b) { return a.start_ns < b.start_ns; });
  enabled_ = true;
}

absl::flat_hash_map<uint32_t, StepWindow> ProfilerStepAccounting::Finish() {
  absl::flat_hash_map<uint32_t, StepWindow> out;
  if (!enabled_) return out;
  const ProfilerStep& last = steps_.back();
  const size_t complete = steps_.size() - 1;
  // Work per (device), and per (device, complete step).
  absl::flat_hash_map<uint32_t, std::vector<Interval>> window;
  absl::flat_hash_map<uint32_t, std::vector<std::vector<Interval>>> per_step;
  for (const Work& w : work_) {
    auto it = launch_.find(w.correlation);
    if (w.correlation == 0 || it == launch_.end() || it->second >= last.start_ns) continue;
    const TimeNs launch = it->second;
    window[w.device].push_back({w.start, w.end, w.compute});
    StepWindow& sw = out[w.device];
    if (launch < steps_.front().start_ns) ++sw.work_before_first_step;
    // The step whose host range holds the launch: the last one starting at or before it.
    auto after = std::upper_bound(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(complete), launch,
                                  [](TimeNs t, const ProfilerStep& s) { return t < s.start_ns; });
    if (after == steps_.begin()) continue;
    const size_t k = static_cast<size_t>(after - steps_.begin()) - 1;
    if (launch >= steps_[k].end_ns) continue;
    auto& rows = per_step[w.device];
    if (rows.empty()) rows.resize(complete);
    rows[k].push_back({w.start, w.end, w.compute});
  }
  for (auto& [device, sw] : out) {
    sw.figures = Figures(&window[device]);
    sw.incomplete_step = last.number;
    sw.first_step = steps_.front().number;
    sw.last_step = steps_.front().number;
    for (size_t k = 0; k < complete; ++k) {
      sw.first_step = std::min(sw.first_step, steps_[k].number);
      sw.last_step = std::max(sw.last_step, steps_[k].number);
    }
    sw.steps = complete;
    auto rows = per_step.find(device);
    if (rows == per_step.end()) continue;
    for (size_t k = 0; k < complete; ++k) {
      if (rows->second[k].empty()) continue;
      sw.per_step.push_back({steps_[k].number, Figures(&rows->second[k])});
    }
  }
  work_.clear();
  work_.shrink_to_fit();
  launch_.clear();
  return out;
}

}  // namespace gs::analyzer
