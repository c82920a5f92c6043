#include "analyzer/result/analysis_builder.h"

#include <algorithm>
#include <tuple>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/accounting/copy_accounting.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/classify/stack_view.h"
#include "analyzer/result/recommendations.h"
#include "analyzer/units/units.h"

namespace gs::analyzer {

namespace {

std::string FrameKey(const FrameInfo& f) {
  return absl::StrCat(f.function, "\x1f", f.file, "\x1f", f.line, "\x1f", f.module);
}
// Every frame with its line: one variant of a stack.
std::string LineKey(const std::vector<FrameInfo>& frames) {
  std::string key;
  for (const FrameInfo& f : frames) absl::StrAppend(&key, FrameKey(f), "\x1e");
  return key;
}
// Stacks aggregate by function (stack_view.h's FrameIdentity): samples of one loop on different
// lines, or of one Python function at two statements, are one stack; lines are detail.
std::string StackKey(const std::vector<FrameInfo>& frames) { return StackIdentity(frames); }

// The stacks merged under one StackKey, and the idle time of each line variant: the stack is
// shown with the lines of its heaviest variant.
struct Merged {
  CauseNs by_cause{};
  absl::flat_hash_map<std::string, std::pair<std::vector<FrameInfo>, TimeNs>> variants;
  void Add(std::vector<FrameInfo> frames, TimeNs ns) {
    auto [it, inserted] = variants.try_emplace(LineKey(frames));
    if (inserted) it->second.first = std::move(frames);
    it->second.second += ns;
  }
  std::vector<FrameInfo> Frames() const {
    const std::pair<const std::string, std::pair<std::vector<FrameInfo>, TimeNs>>* best = nullptr;
    for (const auto& v : variants)
      if (best == nullptr || v.second.second > best->second.second ||
          (v.second.second == best->second.second && v.first < best->first))
        best = &v;
    return best == nullptr ? std::vector<FrameInfo>{} : best->second.first;
  }
};

TimeNs Sum(const CauseNs& c) {
  TimeNs s = 0;
  for (TimeNs v : c) s += v;
  return s;
}

// Sites merge by API and frame; sorted by idle time, cut to `limit`, shares of `total`.
// What makes two sites of several traces one: the call, its frame and its callers (one wrapper
// called from two places is two sites).
std::string SiteKey(const std::string& api, const FrameInfo& frame, const std::vector<FrameInfo>& callers) {
  std::string key = absl::StrCat(api, "\x1d", FrameKey(frame));
  for (const FrameInfo& c : callers) absl::StrAppend(&key, "\x1d", FrameKey(c));
  return key;
}

std::vector<Site> MergeSites(const std::vector<Site>& all, TimeNs total, size_t limit) {
  std::map<std::string, Site> merged;
  for (const Site& s : all) {
    Site& m = merged[SiteKey(s.api, s.frame, s.callers)];
    if (m.count == 0) {
      m.api = s.api;
      m.frame = s.frame;
      m.callers = s.callers;
    }
    m.idle_ns += s.idle_ns;
    m.count += s.count;
  }
  std::vector<Site> out;
  for (auto& [k, s] : merged) out.push_back(std::move(s));
  std::sort(out.begin(), out.end(), [](const Site& a, const Site& b) {
    return a.idle_ns != b.idle_ns ? a.idle_ns > b.idle_ns : a.api < b.api;
  });
  if (out.size() > limit) out.resize(limit);
  for (Site& s : out) s.share = total > 0 ? static_cast<double>(s.idle_ns) / total : 0;
  return out;
}

// Graph replays of every trace: sums, and capture sites merged as MergeSites merges sites.
void MergeGraphReplays(const GraphReplays& in, GraphReplays* out) {
  out->kernels += in.kernels;
  out->device_ns += in.device_ns;
  out->unresolved_kernels += in.unresolved_kernels;
  out->unresolved_ns += in.unresolved_ns;
  auto key = [](const GraphCaptureSite& s) { return SiteKey(s.api, s.frame, s.callers); };
  for (const GraphCaptureSite& s : in.capture_sites) {
    auto same = [&](const GraphCaptureSite& m) { return key(m) == key(s); };
    auto it = std::find_if(out->capture_sites.begin(), out->capture_sites.end(), same);
    if (it == out->capture_sites.end()) {
      out->capture_sites.push_back(s);
      continue;
    }
    it->device_ns += s.device_ns;
    it->kernels += s.kernels;
    it->nodes += s.nodes;
  }
}

void FinalizeGraphReplays(size_t limit, GraphReplays* g) {
  std::sort(g->capture_sites.begin(), g->capture_sites.end(), [](const GraphCaptureSite& a, const GraphCaptureSite& b) {
    return a.device_ns != b.device_ns ? a.device_ns > b.device_ns : a.api < b.api;
  });
  if (g->capture_sites.size() > limit) g->capture_sites.resize(limit);
  for (GraphCaptureSite& s : g->capture_sites)
    s.share = g->device_ns > 0 ? static_cast<double>(s.device_ns) / static_cast<double>(g->device_ns) : 0;
}

void Insert(StackTreeNode* node, const std::vector<FrameInfo>& frames, TimeNs ns) {
  node->inclusive_ns += ns;
  // From the outermost frame of the user's code (frames are stored leaf first) down to the site
  // frame: the CUDA runtime/agent frames below the site, and the process's entry and the
  // interpreter's frames above the user's outermost one, say nothing about the user's code.
  if (frames.empty()) return;
  const size_t site = SiteFrameIndex(frames);
  size_t root = site;
  for (size_t i = frames.size(); i-- > site;)
    if (!IsLibraryFrame(frames[i])) {
      root = i;
      break;
    }
  for (auto it = frames.rbegin() + static_cast<std::ptrdiff_t>(frames.size() - 1 - root);
       it != frames.rend() - static_cast<std::ptrdiff_t>(site); ++it) {
    StackTreeNode* child = nullptr;
    // By function, as the top stacks are: the first (heaviest, see Build) stack names the line.
    const std::string identity = FrameIdentity(*it);
    for (StackTreeNode& c : node->children)
      if (FrameIdentity(c.frame) == identity) { child = &c; break; }
    if (child == nullptr) {
      node->children.push_back(StackTreeNode{*it, 0, 0, {}});
      child = &node->children.back();
    }
    child->inclusive_ns += ns;
    node = child;
  }
}

void Finalize(StackTreeNode* node, TimeNs total) {
  node->share = total > 0 ? static_cast<double>(node->inclusive_ns) / total : 0;
  std::sort(node->children.begin(), node->children.end(),
            [](const StackTreeNode& a, const StackTreeNode& b) { return a.inclusive_ns > b.inclusive_ns; });
  for (StackTreeNode& c : node->children) Finalize(&c, total);
}

}  // namespace


Analysis AnalysisBuilder::Build() {
  Analysis a;
  a.warnings = warnings_;
  CauseNs causes{};
  std::array<uint64_t, kNumCauses> dominant{};
  std::vector<Site> resume, after_sync;
  absl::flat_hash_map<std::string, Merged> stacks;
  std::array<absl::flat_hash_map<std::string, Merged>, kNumHostStates> state_stacks;
  CopyAccounting copies;
  double link_peak = 0;
  RecommendationContext ctx;
  bool any_samples = false, any_stacks = false, any_calls = false, any_states = false;
  bool multi = results_.size() > 1;

  a.intervals.histogram = IdleHistogramBuckets();
  for (size_t t = 0; t < results_.size(); ++t) {
    TraceResult& r = results_[t];
    a.losses.Add(r.info.losses);
    a.events += r.events;
    for (DeviceSummary d : r.devices) {
      d.trace = t;
      if (multi) d.label = absl::StrCat(d.label, " · ", r.info.Label());
      a.steady_idle_ns += d.steady_idle_ns;
      a.devices.push_back(std::move(d));
    }
    for (int i = 0; i < kNumCauses; ++i) {
      causes[i] += r.causes[i];
      dominant[i] += r.dominant[i];
    }
    for (int i = 0; i < kNumHostStates; ++i) a.host_work_states[i] += r.host_states[i];
    a.host_work_exact_ns += r.host_exact_ns;
    for (TraceResult::StateStack& s : r.state_stacks) {
      Merged& m = state_stacks[static_cast<int>(s.state)][StackKey(s.frames)];
      m.by_cause[static_cast<int>(Cause::kHostWork)] += s.ns;
      m.Add(std::move(s.frames), s.ns);
    }
    IntervalSummary& in = r.intervals;
    IntervalSummary& out = a.intervals;
    out.count += in.count;
    out.idle_ns += in.idle_ns;
    for (size_t b = 0; b < out.histogram.size() && b < in.histogram.size(); ++b) {
      out.histogram[b].count += in.histogram[b].count;
      out.histogram[b].idle_ns += in.histogram[b].idle_ns;
    }
    out.queued_before += in.queued_before;
    out.host_late += in.host_late;
    out.no_host_call += in.no_host_call;
    out.with_stream_wait += in.with_stream_wait;
    out.after_sync_idle_ns += in.after_sync_idle_ns;
    out.after_sync_count += in.after_sync_count;
    resume.insert(resume.end(), in.resume_sites.begin(), in.resume_sites.end());
    after_sync.insert(after_sync.end(), in.after_sync_sites.begin(), in.after_sync_sites.end());
    for (IntervalExample e : in.longest) {
      for (const DeviceSummary& d : a.devices)
        if (d.trace == t && e.device == absl::StrCat("GPU ", d.device)) e.device = d.label;
      out.longest.push_back(std::move(e));
    }
    for (TraceResult::ChargedStack& s : r.stacks) {
      Merged& m = stacks[StackKey(s.frames)];
      for (int i = 0; i < kNumCauses; ++i) m.by_cause[i] += s.by_cause[i];
      m.Add(std::move(s.frames), Sum(s.by_cause));
    }
    copies.Merge(r.copies);
    if (link_peak == 0) link_peak = r.link_peak;
    if (r.memory.peak_bytes > a.memory.peak_bytes) {
      a.memory.peak_bytes = r.memory.peak_bytes;
      a.memory.total_memory = r.peak_device_total_memory;
    }
    a.memory.allocations += r.memory.allocations;
    a.memory.frees += r.memory.frees;
    a.memory.host_allocations += r.memory.host_allocations;
    a.memory.oom_errors += r.memory.oom_errors;
    a.memory.peak_usage_bytes = std::max(a.memory.peak_usage_bytes, r.memory.peak_usage_bytes);
    ctx.launch_calls += r.launch_calls;
    ctx.launch_call_ns += r.launch_call_ns;
    any_samples |= r.has_samples;
    any_states |= r.has_sample_states;
    any_stacks |= r.has_stacks;
    any_calls |= r.has_api_calls;
    MergeNvtxRanges(r.nvtx_ranges, &a.nvtx_ranges);
    MergeGraphReplays(r.graphs, &a.graphs);
    for (KernelConfigStats& k : r.kernel_configs) {
      k.trace = t;
      a.kernel_configs.push_back(std::move(k));
    }
    a.traces.push_back(std::move(r.info));
  }
  // Launch configurations: the most under-filled time first (ties: the longest total, then by
  // trace, device and name, so that the order never depends on hashing).
  std::sort(a.kernel_configs.begin(), a.kernel_configs.end(), [](const KernelConfigStats& x, const KernelConfigStats& y) {
    if (x.underfilled_ns != y.underfilled_ns) return x.underfilled_ns > y.underfilled_ns;
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    if (x.trace != y.trace) return x.trace < y.trace;
    if (x.device != y.device) return x.device < y.device;
    if (x.name != y.name) return x.name < y.name;
    return std::make_tuple(x.config.grid[0], x.config.grid[1], x.config.grid[2], x.config.block[0],
                           x.config.block[1], x.config.block[2], x.config.registers_per_thread,
                           x.config.shared_memory_bytes) <
           std::make_tuple(y.config.grid[0], y.config.grid[1], y.config.grid[2], y.config.block[0],
                           y.config.block[1], y.config.block[2], y.config.registers_per_thread,
                           y.config.shared_memory_bytes);
  });

  FinalizeNvtxRanges(&a.nvtx_ranges);
  FinalizeGraphReplays(options_.top_sites, &a.graphs);

  // Causes: every cause, in report order; shares of the steady-state idle time.
  TimeNs total = Sum(causes);
  for (int i = 0; i < kNumCauses; ++i) {
    CauseShare c;
    c.cause = static_cast<Cause>(i);
    c.idle_ns = causes[i];
    c.share = total > 0 ? static_cast<double>(causes[i]) / total : 0;
    c.intervals = dominant[i];
    a.causes.push_back(c);
  }

  a.intervals.resume_sites = MergeSites(resume, total, options_.top_sites);
  a.intervals.after_sync_sites = MergeSites(after_sync, total, options_.top_sites);
  std::sort(a.intervals.longest.begin(), a.intervals.longest.end(),
            [](const IntervalExample& x, const IntervalExample& y) {
              return x.end_ns - x.start_ns > y.end_ns - y.start_ns;
            });
  if (a.intervals.longest.size() > options_.longest_intervals) a.intervals.longest.resize(options_.longest_intervals);

  // Stacks: top list and tree.
  std::vector<StackShare> all;
  a.stack_tree.frame.function = "all idle time";
  for (auto& [key, m] : stacks) {
    StackShare s;
    s.frames = m.Frames();
    s.by_cause = m.by_cause;
    s.idle_ns = Sum(m.by_cause);
    int best = 0;
    for (int i = 1; i < kNumCauses; ++i)
      if (m.by_cause[i] > m.by_cause[best]) best = i;
    s.cause = static_cast<Cause>(best);
    s.share = total > 0 ? static_cast<double>(s.idle_ns) / total : 0;
    all.push_back(std::move(s));
  }
  std::sort(all.begin(), all.end(), [](const StackShare& x, const StackShare& y) {
    if (x.idle_ns != y.idle_ns) return x.idle_ns > y.idle_ns;
    return StackKey(x.frames) < StackKey(y.frames);
  });
  // Heaviest first, so that a tree node shows the line of the heaviest stack through it.
  for (const StackShare& s : all) Insert(&a.stack_tree, s.frames, s.idle_ns);
  Finalize(&a.stack_tree, total);
  if (all.size() > options_.top_stacks) all.resize(options_.top_stacks);
  a.top_stacks = std::move(all);
  // Per host state: its top stacks (a few: the report lists them under the state's share).
  for (int st = 0; st < kNumHostStates; ++st) {
    std::vector<StackShare>& out = a.host_state_stacks[st];
    for (auto& [key, m] : state_stacks[st]) {
      StackShare s;
      s.frames = m.Frames();
      s.by_cause = m.by_cause;
      s.idle_ns = Sum(m.by_cause);
      s.cause = Cause::kHostWork;
      s.share = total > 0 ? static_cast<double>(s.idle_ns) / total : 0;
      out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(), [](const StackShare& x, const StackShare& y) {
      if (x.idle_ns != y.idle_ns) return x.idle_ns > y.idle_ns;
      return StackKey(x.frames) < StackKey(y.frames);
    });
    if (out.size() > std::min<size_t>(3, options_.top_stacks)) out.resize(std::min<size_t>(3, options_.top_stacks));
  }

  a.copies = copies.Summarize(link_peak);

  // Memory: share of the device, and an explanation when memory is near full while utilisation is low.
  MemorySummary& mem = a.memory;
  uint64_t peak = std::max(mem.peak_bytes, mem.peak_usage_bytes);
  if (mem.total_memory == 0)
    for (const TraceInfo& t : a.traces)
      for (const DeviceDescription& d : t.devices) mem.total_memory = std::max(mem.total_memory, d.total_memory);
  if (mem.total_memory > 0) mem.peak_share = static_cast<double>(peak) / mem.total_memory;
  double util = a.Utilization();
  if (mem.total_memory > 0 && mem.peak_share >= options_.memory_near_full && util < 0.5) {
    mem.explanation = absl::StrCat(
        "device memory peaked at ", FormatPercent(mem.peak_share), " (", FormatBytes(peak), " of ",
        FormatBytes(mem.total_memory), ") while GPU-Util was ", FormatPercent(util),
        ": memory in use says nothing about compute. Allocations stay resident (a caching "
        "allocator keeps freed blocks reserved), so a full device can be an idle one; the idle "
        "time is explained by the causes above.");
  }

  // Notes: where the trace carries no evidence for a finer answer.
  if (!any_calls)
    a.notes.push_back("the trace has no host API calls: idle time cannot be split by what the host was doing");
  else if (!any_stacks)
    a.notes.push_back("the trace has no stacks: idle time is attributed to API calls, not to code");
  // Host work whose samples or recorded waits gave a thread state (a PyTorch profiler trace has
  // neither). A trace without samples but with waits is split where the waits are.
  TimeNs stated = 0;
  for (int i = 1; i < kNumHostStates; ++i) stated += a.host_work_states[i];
  if (stated == 0 && causes[static_cast<int>(Cause::kHostWork)] > 0)
    a.notes.push_back(!any_samples  ? "host work is not split into CPU / I/O wait / lock wait / sleep: the trace has no samples"
                      : !any_states ? "host work is not split into CPU / I/O wait / lock wait / sleep: the trace has "
                                      "no thread states"
                                    // Samples inside CUDA calls never stand for host work (gap_classifier.cc).
                                    : "host work is not split into CPU / I/O wait / lock wait / sleep: no sample was "
                                      "taken in it (samples inside CUDA calls do not count), so all of it is unsampled");
  TimeNs other = causes[static_cast<int>(Cause::kOther)];
  if (other > 0)
    a.notes.push_back(absl::StrCat("'other' (", FormatDuration(other), ", ", FormatPercent(total ? double(other) / total : 0),
                                   "): ", a.intervals.no_host_call,
                                   " gaps ended by work with no recorded host call; the rest is time inside "
                                   "sync/query calls while the device was idle"));
  if (mem.total_memory == 0 && peak > 0)
    a.notes.push_back("the trace does not give the devices' memory size: no 'memory near full' check");

  a.input_workers = SummarizeInputWorkers(a.traces);
  a.recommendations = Recommend(a, ctx, options_);  // sees every launch configuration
  if (a.kernel_configs.size() > options_.top_kernel_configs) a.kernel_configs.resize(options_.top_kernel_configs);
  return a;
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

double Analysis::Utilization() const {
  TimeNs busy = 0, wall = 0;
  for (const DeviceSummary& d : devices) {
    busy += d.compute_busy_ns;
    wall += d.wall_ns;
  }
  return wall > 0 ? static_cast<double>(busy) / wall : 0;
}

double Analysis::SmCoverageUtilization() const {
  TimeNs covered = 0, wall = 0;
  for (const DeviceSummary& d : devices) {
    if (!d.has_fill) return -1;
    covered += d.sm_coverage_busy_ns;
    wall += d.wall_ns;
  }
  return wall > 0 ? static_cast<double>(covered) / wall : -1;
}

double Analysis::SteadyUtilization() const {
  TimeNs busy = 0, wall = 0;
  for (const DeviceSummary& d : devices) {
    busy += d.compute_busy_ns;
    wall += d.steady_wall_ns;
  }
  return wall > 0 ? static_cast<double>(busy) / wall : 0;
}

}  // namespace gs::analyzer
