#include "analyzer/analysis/trace_analyzer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/classify/stack_view.h"

namespace gs::analyzer {

namespace {
constexpr size_t kMinReleaseBatch = 4096;
}  // namespace

TraceAnalyzer::TraceAnalyzer(const AnalysisOptions& options, const TraceTables& tables)
    : options_(options),
      tables_(tables),
      history_(options.correlation_slots_log2, options.max_history_per_thread),
      classifier_(options),
      release_at_(kMinReleaseBatch),
      attribution_(options, tables, &nvtx_) {}

void TraceAnalyzer::OnApiCall(const ApiCall& call) {
  ++events_;
  has_api_calls_ = true;
  if (call.stack) has_stacks_ = true;
  See(call.enter_ns);
  See(call.exit_ns);
  history_.AddCall(call);
  steps_.AddCall(call.correlation, call.enter_ns);
  if (call.api_class == ApiClass::kLaunch) {
    ++launch_calls_;
    launch_call_ns_ += call.exit_ns - call.enter_ns;
  }
  memory_.AddCall(call);
  graphs_.AddCall(call);
}

void TraceAnalyzer::OnSample(const Sample& sample) {
  ++events_;
  has_samples_ = true;
  has_sample_states_ |= sample.state != 0;
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

void TraceAnalyzer::OnHostWait(const HostWait& wait) {
  ++events_;
  // Not See(): a program's sleeps before its first CUDA call do not stretch the wall (as NVTX).
  history_.AddWait(wait);
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
  steps_.AddWork(a);
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

void TraceAnalyzer::SetDevices(const std::vector<DeviceDescription>& devices) {
  for (const DeviceDescription& desc : devices) limits_[desc.index] = DeviceLimits{desc.sm_count, desc.sm};
}

void TraceAnalyzer::AddFill(DeviceState& d, const GpuActivity& a) {
  auto [it, added] = d.configs.try_emplace(uint64_t{a.name} << 32 | a.launch_config);
  ConfigState& c = it->second;
  if (added) {
    c.name = a.name;
    c.config = a.launch_config;
    const LaunchConfig* config = tables_.LaunchConfigOf(a.launch_config);
    auto limits = limits_.find(a.device);
    const int sms = limits == limits_.end() ? 0 : static_cast<int>(limits->second.sm_count);
    if (config != nullptr && sms > 0) {
      // Occupancy needs the SM limits and the kernel's registers and shared memory; without them
      // the coverage is min(1, blocks / SMs) and the estimate is unknown (occupancy.h).
      if (config->has_resources && limits->second.sm.max_threads_per_sm > 0) {
        KernelResources k;
        k.threads_per_block = static_cast<int>(std::min<uint64_t>(config->threads_per_block(), 1 << 30));
        k.registers_per_thread = static_cast<int>(config->registers_per_thread);
        k.dynamic_shared = static_cast<int64_t>(config->shared_memory_bytes);
        c.occupancy = ActiveBlocksPerSm(limits->second.sm, k);
        c.occupancy_known = c.occupancy.known && c.occupancy.active_blocks > 0;
      }
      c.fill = FillOf(static_cast<int64_t>(config->blocks()), sms, c.occupancy_known ? c.occupancy : OccupancyResult{});
      c.coverage = c.fill.wave_coverage;
    } else {
      c.coverage = -1;  // no configuration or no SM count: not part of the fill
    }
  }
  const TimeNs duration = a.end_ns - a.start_ns;
  ++c.count;
  c.total_ns += duration;
  if (c.coverage < 0) return;
  d.fill.Add(a.start_ns, a.end_ns, c.coverage, c.occupancy_known ? c.fill.est_occupancy : -1);
  const double underfilled = static_cast<double>(duration) * (1.0 - c.coverage);
  c.underfilled_ns += underfilled;
  const ApiCall* call = history_.FindCorrelated(a.correlation);
  c.stacks[call != nullptr ? call->stack : 0] += underfilled;
}

void TraceAnalyzer::FillFigures(uint32_t device, DeviceState& d, DeviceSummary* s, TraceResult* r) {
  constexpr size_t kLaunchSites = 3;
  auto limits = limits_.find(device);
  bool all_occupancy = true;
  for (auto& [key, c] : d.configs) {
    const LaunchConfig* config = tables_.LaunchConfigOf(c.config);
    if (c.coverage < 0 || config == nullptr) continue;
    all_occupancy &= c.occupancy_known;
    KernelConfigStats k;
    k.device = device;
    k.name = tables_.StringValue(c.name);
    k.config = *config;
    k.count = c.count;
    k.total_ns = c.total_ns;
    k.underfilled_ns = static_cast<TimeNs>(std::llround(c.underfilled_ns));
    k.sm_count = limits == limits_.end() ? 0 : static_cast<int>(limits->second.sm_count);
    k.occupancy_known = c.occupancy_known;
    k.occupancy = c.occupancy;
    k.fill = c.fill;
    std::vector<std::pair<uint32_t, double>> sites(c.stacks.begin(), c.stacks.end());
    std::sort(sites.begin(), sites.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    if (sites.size() > kLaunchSites) sites.resize(kLaunchSites);
    for (const auto& [stack, ns] : sites)
      k.stacks.push_back({stack != 0 ? tables_.ResolveStack(stack) : std::vector<FrameInfo>{},
                          static_cast<TimeNs>(std::llround(ns))});
    r->kernel_configs.push_back(std::move(k));
  }
  if (d.fill.kernels() == 0) return;
  s->has_fill = true;
  s->has_occupancy = all_occupancy;
  s->fill_kernels = d.fill.kernels();
  s->sm_coverage_busy_ns = d.fill.coverage_ns();
  s->est_occupancy_busy_ns = d.fill.occupancy_ns();
  if (s->wall_ns > 0) {
    s->sm_coverage_utilization = static_cast<double>(s->sm_coverage_busy_ns) / s->wall_ns;
    s->est_occupancy_utilization = static_cast<double>(s->est_occupancy_busy_ns) / s->wall_ns;
  }
}

TraceAnalyzer::DeviceState& TraceAnalyzer::Device(uint32_t device) {
  if (last_device_ != nullptr && last_device_id_ == device) return *last_device_;
  auto& slot = devices_[device];
  if (!slot) {
    slot = std::make_unique<DeviceState>(options_.utilization_sample_ns);
    if (fill_observer_)
      slot->fill.set_piece_observer([this, device](const FillPiece& p) { fill_observer_(device, p); });
  }
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
  if (a.launch_config != 0) AddFill(d, a);
  DeviceTimeline::Gap gap = d.timeline.Add(a);
  if (gap.length() <= 0) return;
  ++d.gaps;
  classifier_.Classify(gap.start, gap.end, a, history_, &verdict_);
  if (verdict_.rule == GapRule::kNoHostCall && a.correlation != 0) ++unmatched_;
  if (observer_) observer_(a.device, verdict_);
  attribution_.ChargeGap(a.device, verdict_);
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
  absl::flat_hash_map<uint32_t, StepWindow> step_windows = steps_.Finish();
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
    if (auto w = step_windows.find(id); w != step_windows.end()) s.step_window = std::move(w->second);
    s.sample_period_ns = options_.utilization_sample_ns;
    s.utilization_samples = tl.UtilizationSamples(t0, t1);
    FillFigures(id, *devices_[id], &s, &r);
    r.devices.push_back(std::move(s));
  }

  attribution_.Finish(t0, &r);
  r.copies = copies_;
  const GraphReplayAccounting::Result graphs = graphs_.Finish();
  r.graphs.kernels = graphs.kernels;
  r.graphs.device_ns = graphs.device_ns;
  r.graphs.unresolved_kernels = graphs.unresolved_kernels;
  r.graphs.unresolved_ns = graphs.unresolved_ns;
  for (const GraphReplayAccounting::Site& g : graphs.sites) {
    GraphCaptureSite s;
    s.api = tables_.FunctionName(g.function);
    SiteWithCallers(ChargeKeyFrames(tables_, g.key), kSiteCallers, &s.frame, &s.callers);
    s.device_ns = g.device_ns;
    s.kernels = g.kernels;
    s.nodes = g.nodes;
    r.graphs.capture_sites.push_back(std::move(s));
  }
  r.memory = memory_.Finish();
  r.peak_device_total_memory = peak_total;
  r.events = events_;
  r.launch_calls = launch_calls_;
  r.launch_call_ns = launch_call_ns_;
  r.has_api_calls = has_api_calls_;
  r.has_stacks = has_stacks_;
  r.has_samples = has_samples_;
  r.has_sample_states = has_sample_states_;
  info.losses.late_activities += late_;
  // The agent counts these too (Stats.activities_without_time); keep the larger count.
  info.losses.activities_without_time = std::max(info.losses.activities_without_time, without_time_);
  info.losses.unmatched_activities += unmatched_;
  info.losses.folded_host_calls += history_.folded_calls();
  r.info = std::move(info);
  return r;
}

}  // namespace gs::analyzer
