#include "analyzer/result/recommendations.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/units/units.h"

namespace gs::analyzer {

namespace {

struct Facts {
  const Analysis& a;
  const RecommendationContext& ctx;
  const AnalysisOptions& opt;
  TimeNs idle = 0;         // steady-state idle, all devices
  TimeNs busy = 0;         // busy time, all devices
  uint64_t gaps = 0;
  double Share(Cause c) const { return a.causes[static_cast<int>(c)].share; }
  TimeNs Ns(Cause c) const { return a.causes[static_cast<int>(c)].idle_ns; }
};

std::string Where(const FrameInfo& f) {
  if (f.function.empty()) return "";
  std::string s = absl::StrCat("`", f.function, "`");
  if (!f.file.empty()) absl::StrAppend(&s, " (", f.file, f.line ? absl::StrCat(":", f.line) : "", ")");
  return s;
}

// The stack with the most idle time of cause `c`: its site frame and up to two callers.
std::string TopSiteFor(const Analysis& a, Cause c) {
  const StackShare* best = nullptr;
  for (const StackShare& s : a.top_stacks)
    if (best == nullptr || s.by_cause[static_cast<int>(c)] > best->by_cause[static_cast<int>(c)]) best = &s;
  if (best == nullptr || best->by_cause[static_cast<int>(c)] == 0) return "";
  FrameInfo site = SiteFrame(best->frames);
  std::string out;
  int shown = 0;
  bool started = false;
  for (const FrameInfo& f : best->frames) {
    started |= f == site;
    if (!started || shown == 3) continue;
    absl::StrAppend(&out, shown ? " ← " : "", Where(f));
    ++shown;
  }
  return out;
}

void HostBound(const Facts& f, std::vector<Recommendation>* out) {
  double share = f.Share(Cause::kHostWork);
  if (share < f.opt.recommend_min_share) return;
  std::string site = TopSiteFor(f.a, Cause::kHostWork);
  uint64_t n = std::max<uint64_t>(1, f.a.causes[static_cast<int>(Cause::kHostWork)].intervals);
  Recommendation r;
  r.kind = "input_pipeline";
  r.idle_share = share;
  r.est_gain_ns = f.Ns(Cause::kHostWork);
  r.text = absl::StrCat(FormatPercent(share), " of idle time (", FormatDuration(f.Ns(Cause::kHostWork)),
                        ") is host-bound", site.empty() ? "" : " in ", site, ": per host-bound gap (",
                        n, ") the GPU works ", FormatDuration(f.busy / static_cast<TimeNs>(n)),
                        " and the host spends ", FormatDuration(f.Ns(Cause::kHostWork) / static_cast<TimeNs>(n)),
                        " outside CUDA. Prefetch or parallelise input preparation "
                        "(more DataLoader workers, persistent_workers, prefetch_factor) or move it off "
                        "the submitting thread.");
  out->push_back(std::move(r));
}

// What the input workers' own numbers (ProcessStats) say, when the GPU waits for input: only when
// host-bound idle time reaches the threshold and the traces watched worker processes.
void InputWorkers(const Facts& f, std::vector<Recommendation>* out) {
  const InputWorkersSummary& w = f.a.input_workers;
  const double share = f.Share(Cause::kHostWork);
  if (share < f.opt.recommend_min_share || w.workers.empty()) return;
  const std::string waiting = absl::StrCat(FormatPercent(share), " of idle time (", FormatDuration(f.Ns(Cause::kHostWork)),
                                           ") is host-bound: the training process waits for input");
  Recommendation r;
  r.kind = "input_workers";
  r.idle_share = share;
  r.est_gain_ns = f.Ns(Cause::kHostWork);
  switch (w.verdict) {
    case WorkerVerdict::kCpuBound:
      if (w.host.online_cores == 0 || w.host.idle_cores >= 1) {
        r.text = absl::StrCat(w.evidence, ": input is CPU-bound — more workers would help",
                              w.host.online_cores ? absl::StrCat(" (", absl::StrFormat("%.1f", w.host.idle_cores), " cores idle)") : "",
                              "; ", waiting, ". Raise num_workers (", w.workers.size(),
                              " now) toward the idle cores, or make each batch cheaper to prepare.");
      } else {
        r.text = absl::StrCat(w.evidence, ": input is CPU-bound and the host has no idle core (",
                              FormatPercent(w.host.busy), " busy): more workers will not help; ", waiting,
                              ". Make each batch cheaper (cache decoded/augmented data, lighter transforms, "
                              "augment on the GPU) or use a host with more cores.");
      }
      break;
    case WorkerVerdict::kStorageBound:
      r.text = absl::StrCat(w.evidence, ": storage is the bottleneck; ", waiting,
                            ". Cache the data set locally (local SSD, page cache, a preprocessed copy), "
                            "prefetch more (prefetch_factor) or read in larger sequential chunks.");
      break;
    case WorkerVerdict::kWaiting:
      r.est_gain_ns = 0;  // the workers' numbers do not say what would be gained
      r.text = absl::StrCat(w.evidence, ": the workers are not the bottleneck, they wait on something else; ",
                            waiting, ". Look at what they block on (a slow remote or pipe read, a lock, "
                            "the queue hand-over) and at the prefetch depth.");
      break;
    default:
      return;
  }
  out->push_back(std::move(r));
}

void PinMemory(const Facts& f, std::vector<Recommendation>* out) {
  const CopySummary& c = f.a.copies;
  double share = f.Share(Cause::kPageableCopy);
  if (c.pageable_bytes == 0) return;
  if (share < f.opt.recommend_min_share && c.est_pinning_gain_ns < f.idle / 10) return;
  Recommendation r;
  r.kind = "pin_memory";
  r.idle_share = share;
  r.est_gain_ns = c.est_pinning_gain_ns;
  r.text = absl::StrCat("Pin host buffers: ", FormatPercent(c.pageable_share), " of copy bytes (",
                        FormatBytes(c.pageable_bytes), ") are pageable; staging them cost ",
                        FormatDuration(c.pageable_staging_ns), " and ", FormatPercent(share),
                        " of idle time; est. ", FormatDuration(c.est_pinning_gain_ns),
                        " saved by pinning (", c.gain_model,
                        "). Use pin_memory=True / cudaHostAlloc and non_blocking copies.");
  out->push_back(std::move(r));
}

void Allocator(const Facts& f, std::vector<Recommendation>* out) {
  double share = f.Share(Cause::kAllocator);
  if (share < f.opt.recommend_min_share) return;
  std::string site = TopSiteFor(f.a, Cause::kAllocator);
  Recommendation r;
  r.kind = "allocator";
  r.idle_share = share;
  r.est_gain_ns = f.Ns(Cause::kAllocator);
  r.text = absl::StrCat(FormatPercent(share), " of idle time (", FormatDuration(f.Ns(Cause::kAllocator)),
                        ") is spent inside allocation calls", site.empty() ? "" : " at ", site, " (",
                        f.a.memory.allocations, " device allocations, ", f.a.memory.frees,
                        " frees; cudaMalloc/cudaFree synchronise the device). Allocate once and reuse "
                        "buffers, or use a caching/stream-ordered allocator (cudaMallocAsync).");
  out->push_back(std::move(r));
}

void LaunchBound(const Facts& f, std::vector<Recommendation>* out) {
  double share = f.Share(Cause::kLaunchOverhead);
  if (share < f.opt.recommend_min_share) return;
  Recommendation r;
  r.kind = "launch_overhead";
  r.idle_share = share;
  r.est_gain_ns = f.Ns(Cause::kLaunchOverhead);
  uint64_t kernels = 0;
  TimeNs compute = 0;
  for (const DeviceSummary& d : f.a.devices) {
    kernels += d.kernels;
    compute += d.compute_busy_ns;
  }
  r.text = absl::StrCat(FormatPercent(share), " of idle time (", FormatDuration(f.Ns(Cause::kLaunchOverhead)),
                        ") is the launch path: kernels run ",
                        FormatDuration(kernels ? compute / static_cast<TimeNs>(kernels) : 0),
                        " on average while a launch call takes ",
                        FormatDuration(f.ctx.launch_calls ? f.ctx.launch_call_ns / static_cast<TimeNs>(f.ctx.launch_calls) : 0),
                        " on the host. Capture the step in a CUDA graph, fuse small kernels "
                        "(torch.compile), or give each kernel more work (bigger batches).");
  out->push_back(std::move(r));
}

void AfterSync(const Facts& f, std::vector<Recommendation>* out) {
  const IntervalSummary& in = f.a.intervals;
  double share = f.idle ? static_cast<double>(in.after_sync_idle_ns) / f.idle : 0;
  if (share < f.opt.recommend_min_share || in.after_sync_sites.empty()) return;
  const Site& s = in.after_sync_sites.front();
  Recommendation r;
  r.kind = "remove_sync";
  r.idle_share = share;
  // Without the sync the host work could overlap at most the GPU's own work.
  r.est_gain_ns = std::min(in.after_sync_idle_ns, f.busy);
  r.text = absl::StrCat(FormatPercent(share), " of idle time (", FormatDuration(in.after_sync_idle_ns),
                        ", ", in.after_sync_count, " gaps) follows a synchronisation, most at ", s.api,
                        s.frame.function.empty() ? "" : " in ", Where(s.frame),
                        ": the host work after it could have overlapped the GPU (up to ", FormatDuration(r.est_gain_ns),
                        ", the GPU's busy time). Remove or defer the "
                        "sync (.item(), .cpu(), torch.cuda.synchronize) or copy results with "
                        "non_blocking=True and read them a step later.");
  out->push_back(std::move(r));
}

void DeviceWait(const Facts& f, std::vector<Recommendation>* out) {
  double share = f.Share(Cause::kDeviceWait);
  if (share < f.opt.recommend_min_share) return;
  Recommendation r;
  r.kind = "device_dependency";
  r.idle_share = share;
  r.est_gain_ns = f.Ns(Cause::kDeviceWait);
  r.text = absl::StrCat(FormatPercent(share), " of idle time (", FormatDuration(f.Ns(Cause::kDeviceWait)),
                        ") is queued work waiting on the device (", f.a.intervals.queued_before, " gaps, ",
                        f.a.intervals.with_stream_wait,
                        " after a cudaStreamWaitEvent on the same stream): check cross-stream "
                        "event dependencies and collectives for a stream that starts late.");
  out->push_back(std::move(r));
}

// ---- how full the kernels kept the device (kernel_configs[], occupancy/occupancy.h) ----
// These hold on a busy device too: GPU-Util counts it busy while one kernel runs, whatever that
// kernel fills. A configuration backs one when its share of its device's kernel time (under-filled
// time, or run time for a resource limit) is at least recommend_min_share; the largest of each
// kind speaks.

TimeNs ComputeBusy(const Analysis& a, const KernelConfigStats& k) {
  for (const DeviceSummary& d : a.devices)
    if (d.trace == k.trace && d.device == k.device) return d.compute_busy_ns;
  return 0;
}

std::string LaunchedFrom(const KernelConfigStats& k) {
  if (k.stacks.empty() || k.stacks.front().frames.empty()) return "";
  const std::vector<FrameInfo>& frames = k.stacks.front().frames;
  FrameInfo site = SiteFrame(frames);
  return absl::StrCat(", launched from ", Where(site.function.empty() ? frames.front() : site));
}

std::string Shape(const KernelConfigStats& k) {
  const LaunchConfig& c = k.config;
  return absl::StrCat("grid ", c.grid[0], "x", c.grid[1], "x", c.grid[2], " = ", c.blocks(), " blocks of ",
                      c.threads_per_block(), " threads");
}

// The configuration of the most `ns_of` time whose share of its device's kernel time passes, and
// which `fits`.
template <typename Fits, typename NsOf>
const KernelConfigStats* Largest(const Facts& f, Fits fits, NsOf ns_of) {
  const KernelConfigStats* best = nullptr;
  for (const KernelConfigStats& k : f.a.kernel_configs) {
    const TimeNs compute = ComputeBusy(f.a, k);
    if (!fits(k) || compute <= 0 || static_cast<double>(ns_of(k)) / compute < f.opt.recommend_min_share) continue;
    if (best == nullptr || ns_of(k) > ns_of(*best)) best = &k;
  }
  return best;
}

// Fewer blocks than half the SMs: most of the device has nothing to run.
void SmallGrids(const Facts& f, std::vector<Recommendation>* out) {
  const KernelConfigStats* k = Largest(
      f, [](const KernelConfigStats& k) { return k.sm_count > 0 && k.fill.sm_coverage < 0.5; },
      [](const KernelConfigStats& k) { return k.underfilled_ns; });
  if (k == nullptr) return;
  const TimeNs compute = ComputeBusy(f.a, *k);
  Recommendation r;
  r.kind = "small_grid";
  r.est_gain_ns = k->underfilled_ns;
  r.text = absl::StrCat(k->count, k->count == 1 ? " launch of `" : " launches of `", k->DisplayName(), "` (", Shape(*k), " on ", k->sm_count, " SMs: ",
                        FormatPercent(k->fill.sm_coverage), " of them given work) ran ", FormatDuration(k->total_ns),
                        LaunchedFrom(*k), "; the device stood ", FormatDuration(k->underfilled_ns), " under-filled (",
                        FormatPercent(static_cast<double>(k->underfilled_ns) / compute),
                        " of its kernel time) while GPU-Util counted it busy. Fuse these kernels "
                        "(torch.compile), batch their work into fewer, larger launches, or run independent ones "
                        "concurrently on other streams.");
  out->push_back(std::move(r));
}

// Several waves with a thin last one: the device idles through the tail of every launch.
void PartialWave(const Facts& f, std::vector<Recommendation>* out) {
  const KernelConfigStats* k = Largest(
      f,
      [](const KernelConfigStats& k) {
        return k.occupancy_known && k.fill.sm_coverage >= 0.5 && k.fill.waves >= 2 && k.fill.wave_efficiency < 0.9;
      },
      [](const KernelConfigStats& k) { return k.underfilled_ns; });
  if (k == nullptr) return;
  const uint64_t per_wave = static_cast<uint64_t>(k->sm_count) * static_cast<uint64_t>(k->occupancy.active_blocks);
  const uint64_t blocks = k->config.blocks(), full = blocks / per_wave, last = blocks - full * per_wave;
  Recommendation r;
  r.kind = "partial_wave";
  r.est_gain_ns = k->underfilled_ns;
  r.text = absl::StrCat("`", k->DisplayName(), "` (", k->count, k->count == 1 ? " launch, " : " launches, ",
                        FormatDuration(k->total_ns), LaunchedFrom(*k),
                        ") runs ", Shape(*k), " as ", full, full == 1 ? " full wave of " : " full waves of ", per_wave, " (", k->sm_count, " SMs × ",
                        k->occupancy.active_blocks, " blocks) and a last one of ", last, " blocks: ",
                        FormatPercent(1 - k->fill.wave_efficiency), " of its block slots stay empty (",
                        FormatDuration(k->underfilled_ns), " under-filled). A grid of ", full * per_wave, " or ",
                        (full + 1) * per_wave, " blocks (another tile size, or batch) fills whole waves.");
  out->push_back(std::move(r));
}

// Few blocks an SM because each needs many registers or much shared memory.
void ResourceLimited(const Facts& f, std::vector<Recommendation>* out) {
  const KernelConfigStats* k = Largest(
      f,
      [](const KernelConfigStats& k) {
        return k.occupancy_known && k.occupancy.theoretical_occupancy <= 0.25 &&
               (k.occupancy.limiters & (kLimitRegisters | kLimitSharedMemory)) != 0 &&
               (k.occupancy.limiters & kLimitWarps) == 0;
      },
      [](const KernelConfigStats& k) { return k.total_ns; });
  if (k == nullptr) return;
  const bool registers = (k->occupancy.limiters & kLimitRegisters) != 0;
  Recommendation r;
  r.kind = "resource_limited";
  r.text = absl::StrCat(
      "`", k->DisplayName(), "` (", FormatDuration(k->total_ns), " in ", k->count, k->count == 1 ? " launch" : " launches",
      LaunchedFrom(*k), ") fits ",
      k->occupancy.active_blocks, k->occupancy.active_blocks == 1 ? " block" : " blocks", " of ",
      k->config.threads_per_block(), " threads an SM (theoretical occupancy ",
      FormatPercent(k->occupancy.theoretical_occupancy), "), held there by its ",
      registers ? absl::StrCat(k->config.registers_per_thread, " registers per thread")
                : absl::StrCat(FormatBytes(k->config.shared_memory_bytes), " of shared memory per block"),
      registers ? ": cap them (__launch_bounds__, -maxrregcount, a smaller tile) if the kernel is latency-bound."
                : ": use smaller tiles or fewer pipeline stages if the kernel is latency-bound.",
      " An upper bound from its configuration, not a measurement: Nsight Compute says whether it matters.");
  out->push_back(std::move(r));
}

void OutOfMemory(const Facts& f, std::vector<Recommendation>* out) {
  if (f.a.memory.oom_errors == 0) return;
  Recommendation r;
  r.kind = "out_of_memory";
  r.text = absl::StrCat(f.a.memory.oom_errors, " allocation(s) failed with out-of-memory (peak ",
                        FormatBytes(f.a.memory.peak_bytes), "): reduce the batch or model size, or free "
                        "cached memory before large allocations.");
  out->push_back(std::move(r));
}

}  // namespace

std::vector<Recommendation> Recommend(const Analysis& a, const RecommendationContext& ctx,
                                      const AnalysisOptions& options) {
  Facts f{a, ctx, options};
  TimeNs steady = 0;
  for (const DeviceSummary& d : a.devices) {
    f.idle += d.steady_idle_ns;
    f.busy += d.busy_ns;
    f.gaps += d.idle_intervals;
    steady += d.steady_wall_ns;
  }
  std::vector<Recommendation> out;
  OutOfMemory(f, &out);  // an error is worth saying even on a busy device
  // How full the busy time was: worth saying on a busy device above all.
  for (auto rule : {SmallGrids, PartialWave, ResourceLimited}) rule(f, &out);
  if (steady == 0 || static_cast<double>(f.idle) / steady < options.healthy_idle_share) return out;
  using Rule = void (*)(const Facts&, std::vector<Recommendation>*);
  // InputWorkers before HostBound: same gain, the more specific advice first (stable sort).
  for (Rule rule : {InputWorkers, HostBound, PinMemory, Allocator, LaunchBound, AfterSync, DeviceWait}) rule(f, &out);
  // Largest estimated gain first (the out-of-memory error, which has none, stays in front).
  std::stable_sort(out.begin() + (out.empty() || out[0].kind != "out_of_memory" ? 0 : 1), out.end(),
                   [](const Recommendation& x, const Recommendation& y) { return x.est_gain_ns > y.est_gain_ns; });
  return out;
}

}  // namespace gs::analyzer
