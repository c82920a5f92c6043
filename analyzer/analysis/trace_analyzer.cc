#include "analyzer/analysis/trace_analyzer.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/units.h"

namespace gs::analyzer {

namespace {
constexpr size_t kMinReleaseBatch = 4096;

bool ExampleLonger(const IntervalVerdict& a, const IntervalVerdict& b) { return a.length() > b.length(); }

bool IsRuntimeFrame(const FrameInfo& f) {
  for (const char* lib : {"libcudart", "libcuda.so", "libcupti", "libgsagent", "libcublas", "libcudnn"})
    if (absl::StrContains(f.module, lib)) return true;
  return absl::StartsWith(f.function, "gs::") || absl::StartsWith(f.function, "cuda") ||
         absl::StartsWith(f.function, "__cuda");
}

// The native frames between a Python call and the C function it reaches: libffi and ctypes (a
// ctypes binding), the interpreter (libpython, or a statically linked python executable).
// Without this, every Python program's sites read "libffi.so.8+0x6f7a".
bool IsLanguageGlueFrame(const FrameInfo& f) {
  if (f.module.empty()) return false;  // Python frames have no module
  const absl::string_view module = f.module;
  const size_t slash = module.rfind('/');
  const absl::string_view base = slash == absl::string_view::npos ? module : module.substr(slash + 1);
  if (absl::StartsWith(base, "libffi") || absl::StartsWith(base, "_ctypes") ||
      absl::StartsWith(base, "libpython") || absl::StartsWith(base, "_cffi_backend"))
    return true;
  // The interpreter executable: python, python3, python3.12, python3.13t ...
  return absl::StartsWith(base, "python") && base.find(".so") == absl::string_view::npos;
}

// Installed packages (Python files and native extension modules: torch's Python layer and
// libtorch_cuda.so, cuda-python, ...) and Python's standard library. The user's own code is not
// installed there; the frame that matters to them is the first one outside.
bool IsInstalledPackageFrame(const FrameInfo& f) {
  const absl::string_view path = f.module.empty() ? absl::string_view(f.file) : absl::string_view(f.module);
  if (path.empty()) return false;
  if (absl::StrContains(path, "/site-packages/") || absl::StrContains(path, "/dist-packages/")) return true;
  if (!f.module.empty()) return false;
  // Python source of the standard library: .../lib/python3.N/<module>.py, and frozen modules.
  return absl::StartsWith(path, "<frozen ") || absl::StrContains(path, "/lib/python3.");
}
}  // namespace

bool IsLibraryFrame(const FrameInfo& f) {
  return IsRuntimeFrame(f) || IsLanguageGlueFrame(f) || IsInstalledPackageFrame(f);
}

std::vector<HistogramBucket> IdleHistogramBuckets() {
  return {{"<10µs", 0, 10'000, 0, 0},
          {"10µs-100µs", 10'000, 100'000, 0, 0},
          {"100µs-1ms", 100'000, 1'000'000, 0, 0},
          {"1ms-10ms", 1'000'000, 10'000'000, 0, 0},
          {"10ms-100ms", 10'000'000, 100'000'000, 0, 0},
          {"100ms-1s", 100'000'000, 1'000'000'000, 0, 0},
          {">=1s", 1'000'000'000, 0, 0, 0}};
}

size_t SiteFrameIndex(const std::vector<FrameInfo>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (!IsLibraryFrame(frames[i])) return i;
  return 0;
}

FrameInfo SiteFrame(const std::vector<FrameInfo>& frames) {
  return frames.empty() ? FrameInfo{} : frames[SiteFrameIndex(frames)];
}

TraceAnalyzer::TraceAnalyzer(const AnalysisOptions& options, const TraceTables& tables)
    : options_(options),
      tables_(tables),
      history_(options.correlation_slots_log2, options.max_history_per_thread),
      classifier_(options),
      release_at_(kMinReleaseBatch) {
  intervals_.histogram = IdleHistogramBuckets();
}

void TraceAnalyzer::OnApiCall(const ApiCall& call) {
  ++events_;
  has_api_calls_ = true;
  if (call.stack) has_stacks_ = true;
  See(call.enter_ns);
  See(call.exit_ns);
  history_.AddCall(call);
  if (call.api_class == ApiClass::kLaunch) {
    ++launch_calls_;
    launch_call_ns_ += call.exit_ns - call.enter_ns;
  }
  memory_.AddCall(call);
}

void TraceAnalyzer::OnSample(const Sample& sample) {
  ++events_;
  has_samples_ = true;
  See(sample.time_ns);
  history_.AddSample(sample);
}

void TraceAnalyzer::OnMemoryEvent(const MemoryEvent& event) {
  ++events_;
  See(event.time_ns);
  memory_.AddEvent(event);
}

void TraceAnalyzer::OnNvtxRange(const NvtxRange& range) {
  ++events_;
  nvtx_.AddRange(range);  // not See(): ranges before the first CUDA record do not stretch the wall
}

void TraceAnalyzer::OnActivity(const GpuActivity& a) {
  ++events_;
  if (!IsDeviceWork(a.kind)) return;  // sync/memory records: not device work
  if (a.start_ns == 0 && a.end_ns == 0) {  // CUPTI gave no time: unusable (counted, not placed)
    ++without_time_;
    return;
  }
  See(a.start_ns);
  See(a.end_ns);
  if (a.start_ns < released_upto_) {  // the window already moved past it
    ++late_;
    Process(a);
    return;
  }
  pending_.push_back(a);
  if (a.start_ns > max_start_) max_start_ = a.start_ns;
  if (pending_.size() >= release_at_) Release(max_start_ - options_.sort_window_ns);
}

void TraceAnalyzer::Release(TimeNs limit) {
  // pending_[0, sorted_) is sorted (what the last release kept); sort only what arrived since
  // and merge: records arrive nearly in order, so the tail is often sorted already.
  auto by_start = [](const GpuActivity& x, const GpuActivity& y) { return x.start_ns < y.start_ns; };
  auto mid = pending_.begin() + static_cast<std::ptrdiff_t>(std::min(sorted_, pending_.size()));
  if (!std::is_sorted(mid, pending_.end(), by_start)) std::sort(mid, pending_.end(), by_start);
  // Merge only when the two runs interleave (inplace_merge allocates a buffer as big as both).
  if (mid != pending_.begin() && mid != pending_.end() && by_start(*mid, *(mid - 1)))
    std::inplace_merge(pending_.begin(), mid, pending_.end(), by_start);
  auto end = std::partition_point(pending_.begin(), pending_.end(),
                                  [limit](const GpuActivity& x) { return x.start_ns <= limit; });
  for (auto it = pending_.begin(); it != end; ++it) Process(*it);
  if (end != pending_.begin()) released_upto_ = std::max(released_upto_, (end - 1)->start_ns);
  pending_.erase(pending_.begin(), end);
  sorted_ = pending_.size();
  release_at_ = std::max(kMinReleaseBatch, pending_.size() * 2);
  // No future gap starts before the earliest device frontier: forget what lies before it.
  TimeNs prune = std::numeric_limits<TimeNs>::max();
  for (const auto& [id, d] : devices_)
    if (d->timeline.started()) prune = std::min(prune, d->timeline.last_end());
  if (prune != std::numeric_limits<TimeNs>::max()) history_.PruneBefore(prune);
}

TraceAnalyzer::DeviceState& TraceAnalyzer::Device(uint32_t device) {
  if (last_device_ != nullptr && last_device_id_ == device) return *last_device_;
  auto& slot = devices_[device];
  if (!slot) slot = std::make_unique<DeviceState>(options_.utilization_sample_ns);
  last_device_id_ = device;
  last_device_ = slot.get();
  return *slot;
}

void TraceAnalyzer::Process(const GpuActivity& a) {
  DeviceState& d = Device(a.device);
  if (a.kind == ActivityKind::kMemcpy) {
    copies_.AddActivity(a);
    const ApiCall* call = history_.FindCorrelated(a.correlation);
    if (call != nullptr && IsPageableCopy(*call) && a.correlation != last_pageable_correlation_) {
      last_pageable_correlation_ = a.correlation;
      // The part of the call before the device finished earlier work was waiting, not staging.
      TimeNs busy_until = d.timeline.started() ? d.timeline.last_end() : call->enter_ns;
      TimeNs wait = std::max<TimeNs>(0, std::min(busy_until, a.start_ns) - call->enter_ns);
      copies_.AddPageableCallTime(call->direction, call->exit_ns - call->enter_ns - wait);
    }
  }
  nvtx_.AddBusy(a.start_ns, a.end_ns);
  DeviceTimeline::Gap gap = d.timeline.Add(a);
  if (gap.length() <= 0) return;
  ++d.gaps;
  classifier_.Classify(gap.start, gap.end, a, history_, &verdict_);
  if (verdict_.rule == GapRule::kNoHostCall && a.correlation != 0) ++unmatched_;
  if (observer_) observer_(a.device, verdict_);
  Account(a.device, verdict_);
  // Keep the submitting thread's history short: no later gap of any device starts before the
  // earliest device frontier.
  if (verdict_.has_resume) {
    TimeNs prune = d.timeline.last_end();
    if (devices_.size() > 1)
      for (const auto& [id, other] : devices_)
        if (other->timeline.started()) prune = std::min(prune, other->timeline.last_end());
    history_.PruneThreadBefore(verdict_.resume->thread, prune);
  }
}

void TraceAnalyzer::Account(uint32_t device, const IntervalVerdict& v) {
  for (int i = 0; i < kNumCauses; ++i) causes_[i] += v.by_cause[i];
  for (int i = 0; i < kNumHostStates; ++i) host_states_[i] += v.host_states[i];
  ++dominant_[static_cast<int>(v.cause)];
  for (const Charge& c : v.charges) {
    // Consecutive gaps mostly charge the same stacks: a one-entry cache saves the hash lookup
    // (reset on insertion, which may move entries).
    if (c.key != charge_cache_key_ || charge_cache_ == nullptr) {
      charge_cache_ = &charges_[c.key];
      charge_cache_key_ = c.key;
    }
    (*charge_cache_)[static_cast<int>(c.cause)] += c.ns;
    if (c.cause == Cause::kHostWork && c.state != HostState::kUnsampled)
      state_charges_[static_cast<int>(c.state)][c.key] += c.ns;
  }
  if (nvtx_.enabled() && v.has_resume) {
    // The charges are consecutive pieces of [start, end) on the resuming call's thread: NVTX
    // ranges open there at the same time become outer frames of these stacks at Finish.
    TimeNs t = v.start;
    for (const Charge& c : v.charges) {
      nvtx_.AddCharge(v.resume->thread, t, c.ns, c.key, c.cause);
      t += c.ns;
    }
  }

  TimeNs len = v.length();
  ++intervals_.count;
  intervals_.idle_ns += len;
  for (HistogramBucket& b : intervals_.histogram) {
    if (len >= b.min_ns && (b.max_ns == 0 || len < b.max_ns)) {
      ++b.count;
      b.idle_ns += len;
      break;
    }
  }
  switch (v.rule) {
    case GapRule::kNoHostCall: ++intervals_.no_host_call; break;
    case GapRule::kQueuedBefore:
      ++intervals_.queued_before;
      if (v.stream_wait_enter >= 0) ++intervals_.with_stream_wait;
      break;
    case GapRule::kHostLate: ++intervals_.host_late; break;
  }
  if (v.has_resume) {
    uint64_t key = ChargeKey(*v.resume);
    if (resume_cache_ == nullptr || key != resume_cache_key_) {
      resume_cache_ = &resume_sites_[key];
      resume_cache_key_ = key;
    }
    SiteAcc& s = *resume_cache_;
    s.ns += len;
    ++s.count;
    s.function = v.resume->function;
  }
  if (v.after_sync) {
    intervals_.after_sync_idle_ns += len;
    ++intervals_.after_sync_count;
    SiteAcc& s = sync_sites_[ChargeKey(*v.preceding)];
    s.ns += len;
    ++s.count;
    s.function = v.preceding->function;
  }
  // Keep the longest intervals as examples (a min-heap of bounded size, without charges).
  if (options_.longest_intervals == 0) return;
  if (longest_.size() < options_.longest_intervals || len > longest_.front().verdict.length()) {
    Example ex;
    ex.device = device;
    ex.verdict.start = v.start;
    ex.verdict.end = v.end;
    ex.verdict.rule = v.rule;
    ex.verdict.cause = v.cause;
    ex.verdict.by_cause = v.by_cause;
    ex.verdict.has_resume = v.has_resume;
    if (v.has_resume) ex.resume = *v.resume;
    ex.verdict.has_preceding = v.has_preceding;
    if (v.has_preceding) ex.preceding = *v.preceding;
    ex.verdict.after_sync = v.after_sync;
    ex.verdict.stream_wait_enter = v.stream_wait_enter;
    auto cmp = [](const Example& x, const Example& y) { return ExampleLonger(x.verdict, y.verdict); };
    if (longest_.size() == options_.longest_intervals) {
      std::pop_heap(longest_.begin(), longest_.end(), cmp);
      longest_.pop_back();
    }
    longest_.push_back(std::move(ex));
    std::push_heap(longest_.begin(), longest_.end(), cmp);
  }
}

std::vector<FrameInfo> TraceAnalyzer::KeyFrames(uint64_t key) const {
  if (key == 0) return {FrameInfo{"(no host call recorded)", "", 0, ""}};
  if (key & kFunctionKeyBit) {
    return {FrameInfo{absl::StrCat(tables_.FunctionName(static_cast<uint32_t>(key)), " (no stack)"), "", 0, ""}};
  }
  std::vector<FrameInfo> frames = tables_.ResolveStack(static_cast<uint32_t>(key));
  if (frames.empty()) frames.push_back(FrameInfo{absl::StrCat("stack#", key, " (not in trace)"), "", 0, ""});
  return frames;
}

std::string TraceAnalyzer::Evidence(const IntervalVerdict& v, const ApiCall* resume_call,
                                    const ApiCall* preceding_call) const {
  if (v.rule != GapRule::kNoHostCall && resume_call == nullptr) return "";
  const ApiCall& resume = *resume_call;
  switch (v.rule) {
    case GapRule::kNoHostCall:
      return "no host call recorded for the work that ended the gap";
    case GapRule::kQueuedBefore: {
      std::string s = absl::StrCat(tables_.FunctionName(resume.function), " had returned ",
                                   FormatDuration(v.start - resume.exit_ns),
                                   " before the device went idle; the work started ",
                                   FormatDuration(v.length()), " after (launch latency limit ",
                                   FormatDuration(options_.launch_latency_max_ns), ")");
      if (v.stream_wait_enter >= 0)
        absl::StrAppend(&s, "; cudaStreamWaitEvent on its stream ",
                        FormatDuration(resume.enter_ns - v.stream_wait_enter), " before it");
      return s;
    }
    case GapRule::kHostLate: {
      std::string thread = tables_.ThreadName(resume.thread);
      std::string s = absl::StrCat("thread ", resume.thread, thread.empty() ? "" : " (", thread,
                                   thread.empty() ? "" : ")");
      if (resume.enter_ns >= v.start) {
        absl::StrAppend(&s, " entered ", tables_.FunctionName(resume.function), " ",
                        FormatDuration(resume.enter_ns - v.start), " after the device went idle:");
      } else {  // the call that submitted the work was already running as the device went idle
        absl::StrAppend(&s, " was inside ", tables_.FunctionName(resume.function), " (entered ",
                        FormatDuration(v.start - resume.enter_ns), " before the device went idle):");
      }
      bool first = true;
      for (int i = 0; i < kNumCauses; ++i) {
        if (v.by_cause[i] <= 0) continue;
        absl::StrAppend(&s, first ? " " : ", ", CauseTitle(static_cast<Cause>(i)), " ",
                        FormatDuration(v.by_cause[i]));
        first = false;
      }
      if (v.after_sync && preceding_call != nullptr)
        absl::StrAppend(&s, "; began after ", tables_.FunctionName(preceding_call->function),
                        " returned");
      return s;
    }
  }
  return "";
}

TraceResult TraceAnalyzer::Finish(TraceInfo info) {
  Release(std::numeric_limits<TimeNs>::max());
  TraceResult r;
  TimeNs t0 = first_ns_ <= last_ns_ ? first_ns_ : 0;
  TimeNs t1 = first_ns_ <= last_ns_ ? last_ns_ : 0;

  // Devices, in ordinal order.
  std::vector<uint32_t> ids;
  for (const auto& [id, d] : devices_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  uint64_t peak_total = 0;
  for (uint32_t id : ids) {
    const DeviceState& d = *devices_[id];
    const DeviceTimeline& tl = d.timeline;
    DeviceSummary s;
    s.device = id;
    for (const DeviceDescription& desc : info.devices) {
      if (desc.index != id) continue;
      s.name = desc.name;
      if (id == memory_.Finish().peak_device) peak_total = desc.total_memory;
      if (r.link_peak == 0) r.link_peak = PcieLinkPeak(desc.pcie_generation, desc.pcie_width);
    }
    s.label = absl::StrCat("GPU ", id, s.name.empty() ? "" : " (", s.name, s.name.empty() ? "" : ")");
    s.wall_ns = t1 - t0;
    s.busy_ns = tl.busy_ns();
    s.compute_busy_ns = tl.compute_busy_ns();
    s.copy_busy_ns = tl.copy_busy_ns();
    s.idle_ns = s.wall_ns - s.busy_ns;
    s.leading_idle_ns = tl.first_start() - t0;
    s.trailing_idle_ns = t1 - tl.last_end();
    s.steady_wall_ns = tl.last_end() - tl.first_start();
    s.steady_idle_ns = s.steady_wall_ns - s.busy_ns;
    s.utilization = s.wall_ns > 0 ? static_cast<double>(s.compute_busy_ns) / s.wall_ns : 0;
    s.steady_utilization = s.steady_wall_ns > 0 ? static_cast<double>(s.compute_busy_ns) / s.steady_wall_ns : 0;
    s.busy_fraction = s.wall_ns > 0 ? static_cast<double>(s.busy_ns) / s.wall_ns : 0;
    s.kernels = tl.kernels();
    s.copies = tl.copies();
    s.memsets = tl.memsets();
    s.idle_intervals = d.gaps;
    s.sample_period_ns = options_.utilization_sample_ns;
    s.utilization_samples = tl.UtilizationSamples(t0, t1);
    r.devices.push_back(std::move(s));
  }

  r.causes = causes_;
  r.dominant = dominant_;
  r.host_states = host_states_;
  r.intervals = intervals_;
  // Idle time charged while NVTX ranges were open moves to the same stack under range frames.
  NvtxAccounting::Result nvtx = nvtx_.Finish(tables_);
  for (const auto& [key, ns] : nvtx.moved)
    for (int i = 0; i < kNumCauses; ++i) charges_[key][i] -= ns[i];
  for (int i = 0; i < kNumHostStates; ++i)
    for (const auto& [key, ns] : state_charges_[i])
      r.state_stacks.push_back({static_cast<HostState>(i), KeyFrames(key), ns});
  for (const auto& [key, ns] : charges_) {
    if (std::all_of(ns.begin(), ns.end(), [](TimeNs x) { return x == 0; })) continue;
    r.stacks.push_back({KeyFrames(key), ns});
  }
  for (NvtxChargedStack& s : nvtx.stacks) {
    std::vector<FrameInfo> frames = KeyFrames(s.key);
    frames.insert(frames.end(), s.ranges.begin(), s.ranges.end());
    r.stacks.push_back({std::move(frames), s.by_cause});
  }
  r.nvtx_ranges = std::move(nvtx.ranges);
  auto sites = [this](const absl::flat_hash_map<uint64_t, SiteAcc>& from, std::vector<Site>* to) {
    for (const auto& [key, acc] : from) {
      Site s;
      s.api = tables_.FunctionName(acc.function);
      if (!(key & kFunctionKeyBit) && key != 0) {
        // The site and a few of its callers: "after sync at cudaMemcpy in Runtime.call ←
        // Runtime.memcpy ← read_loss" names the user's function even behind a thin wrapper.
        const std::vector<FrameInfo> frames = tables_.ResolveStack(static_cast<uint32_t>(key));
        const size_t at = SiteFrameIndex(frames);
        if (at < frames.size()) s.frame = frames[at];
        constexpr size_t kSiteCallers = 4;
        for (size_t i = at + 1; i < frames.size() && s.callers.size() < kSiteCallers; ++i)
          s.callers.push_back(frames[i]);
      }
      s.idle_ns = acc.ns;
      s.count = acc.count;
      to->push_back(std::move(s));
    }
  };
  sites(resume_sites_, &r.intervals.resume_sites);
  sites(sync_sites_, &r.intervals.after_sync_sites);
  std::sort(longest_.begin(), longest_.end(),
            [](const Example& x, const Example& y) { return ExampleLonger(x.verdict, y.verdict); });
  for (const Example& ex : longest_) {
    IntervalExample e;
    e.device = absl::StrCat("GPU ", ex.device);
    e.start_ns = ex.verdict.start;
    e.end_ns = ex.verdict.end;
    e.offset_ns = ex.verdict.start - t0;
    e.cause = ex.verdict.cause;
    e.by_cause = ex.verdict.by_cause;
    e.evidence = Evidence(ex.verdict, &ex.resume, &ex.preceding);
    e.after_sync = ex.verdict.after_sync;
    if (ex.verdict.has_resume) {
      e.resume_api = tables_.FunctionName(ex.resume.function);
      e.resume_frame = SiteFrame(tables_.ResolveStack(ex.resume.stack));
    }
    if (ex.verdict.has_preceding) {
      e.preceding_api = tables_.FunctionName(ex.preceding.function);
      e.preceding_frame = SiteFrame(tables_.ResolveStack(ex.preceding.stack));
    }
    r.intervals.longest.push_back(std::move(e));
  }
  r.copies = copies_;
  r.memory = memory_.Finish();
  r.peak_device_total_memory = peak_total;
  r.events = events_;
  r.launch_calls = launch_calls_;
  r.launch_call_ns = launch_call_ns_;
  r.has_api_calls = has_api_calls_;
  r.has_stacks = has_stacks_;
  r.has_samples = has_samples_;
  info.losses.late_activities += late_;
  // The agent counts these too (Stats.activities_without_time); keep the larger count.
  info.losses.activities_without_time = std::max(info.losses.activities_without_time, without_time_);
  info.losses.unmatched_activities += unmatched_;
  info.losses.folded_host_calls += history_.folded_calls();
  r.info = std::move(info);
  return r;
}

}  // namespace gs::analyzer
