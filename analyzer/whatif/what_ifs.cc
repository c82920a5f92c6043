#include "analyzer/whatif/what_ifs.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyzer/classify/site_frame.h"

namespace gs::analyzer::whatif {

namespace {

TimeNs Median(std::vector<TimeNs> v) {
  if (v.empty()) return ReplayChanges::kKeep;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

constexpr size_t kHostWork = static_cast<size_t>(Cause::kHostWork);

class Predictor {
 public:
  Predictor(const ReplayGraph& graph, const std::vector<ClassifiedGap>& gaps, const TraceTables& tables)
      : g_(graph), calls_(graph.records().calls), work_(graph.records().work), gaps_(gaps), tables_(tables) {
    call_work_.resize(calls_.size());
    for (size_t w = 0; w < work_.size(); ++w)
      if (const int32_t c = g_.LaunchingCall(w); c >= 0) call_work_[static_cast<size_t>(c)].push_back(w);
  }

  void Run(std::vector<WhatIf>* out) {
    RemoveSync(out);
    Allocator(out);
    PinMemory(out);
    LaunchOverhead(out);
    Input(out);
  }

 private:
  void Add(std::vector<WhatIf>* out, const char* kind, uint64_t changed, const ReplayChanges& changes,
           uint32_t workers = 0) {
    if (changed == 0) return;
    WhatIf w;
    w.kind = kind;
    w.workers = workers;
    w.changed = changed;
    w.figures = g_.Replay(changes);
    out->push_back(std::move(w));
  }

  const FrameInfo& SiteOf(uint32_t stack) {
    auto [it, added] = sites_.try_emplace(stack);
    if (added && stack != 0) it->second = SiteFrame(tables_.ResolveStack(stack));
    return it->second;
  }

  void RemoveSync(std::vector<WhatIf>* out) {
    // The recommendation's site: the sync site the most host work followed.
    std::vector<std::pair<uint32_t, TimeNs>> by_stack;
    absl::flat_hash_map<uint32_t, size_t> index;
    for (const ClassifiedGap& gap : gaps_) {
      if (!gap.after_sync || gap.preceding < 0) continue;
      const uint32_t stack = calls_[static_cast<size_t>(gap.preceding)].stack;
      auto [it, added] = index.try_emplace(stack, by_stack.size());
      if (added) by_stack.push_back({stack, 0});
      by_stack[it->second].second += gap.length;
    }
    if (by_stack.empty()) return;
    std::vector<std::pair<FrameInfo, TimeNs>> by_site;
    for (const auto& [stack, ns] : by_stack) {
      const FrameInfo& site = SiteOf(stack);
      auto it = std::find_if(by_site.begin(), by_site.end(), [&](const auto& s) { return s.first == site; });
      if (it == by_site.end()) {
        by_site.push_back({site, ns});
      } else {
        it->second += ns;
      }
    }
    const FrameInfo top = std::max_element(by_site.begin(), by_site.end(), [](const auto& x, const auto& y) {
                            return x.second < y.second;
                          })->first;
    ReplayChanges changes;
    uint64_t changed = 0;
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (!g_.Waits(i) || !(SiteOf(calls_[i].stack) == top)) continue;
      changes.DropWaits(i);
      ++changed;
    }
    Add(out, "remove_sync", changed, changes);
  }

  void Allocator(std::vector<WhatIf>* out) {
    ReplayChanges changes;
    uint64_t changed = 0;
    for (size_t i = 0; i < calls_.size(); ++i) {
      const ApiClass c = calls_[i].api_class;
      if (g_.Nested(i) || (c != ApiClass::kMalloc && c != ApiClass::kFree && c != ApiClass::kHostAlloc &&
                           c != ApiClass::kHostFree))
        continue;
      changes.SetCallCost(i, 0);
      changes.DropWaits(i);
      ++changed;
    }
    Add(out, "allocator", changed, changes);
  }

  void PinMemory(std::vector<WhatIf>* out) {
    std::vector<TimeNs> async_copies, launches;
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (g_.Nested(i)) continue;
      if (calls_[i].api_class == ApiClass::kMemcpy && calls_[i].async && !IsPageableCopy(calls_[i]))
        async_copies.push_back(g_.CallCost(i));
      if (calls_[i].api_class == ApiClass::kLaunch) launches.push_back(g_.CallCost(i));
    }
    TimeNs cost = Median(async_copies);
    if (cost == ReplayChanges::kKeep) cost = Median(launches);
    // Pinned bandwidth per direction, bytes per ns, from the trace's own pinned copies.
    double bytes[kNumCopyDirections] = {}, ns[kNumCopyDirections] = {};
    for (const GpuActivity& a : work_) {
      if (a.kind != ActivityKind::kMemcpy || a.end_ns <= a.start_ns) continue;
      const bool pinned = (a.direction == CopyDirection::kHostToDevice && a.src_kind == MemKind::kPinned) ||
                          (a.direction == CopyDirection::kDeviceToHost && a.dst_kind == MemKind::kPinned);
      if (!pinned) continue;
      bytes[static_cast<int>(a.direction)] += static_cast<double>(a.bytes);
      ns[static_cast<int>(a.direction)] += static_cast<double>(a.end_ns - a.start_ns);
    }
    ReplayChanges changes;
    uint64_t changed = 0;
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (g_.Nested(i) || !IsPageableCopy(calls_[i])) continue;
      if (cost != ReplayChanges::kKeep) changes.SetCallCost(i, cost);
      // An upload returns at once from pinned memory; a download the host reads still waits for
      // its copy (a non_blocking copy and a sync before the read), only a shorter one.
      if (calls_[i].direction == CopyDirection::kHostToDevice) changes.DropWaits(i);
      ++changed;
      const int d = static_cast<int>(calls_[i].direction);
      if (ns[d] <= 0 || bytes[d] <= 0) continue;
      for (size_t w : call_work_[i])
        changes.SetWorkDuration(w, static_cast<TimeNs>(static_cast<double>(work_[w].bytes) * ns[d] / bytes[d]));
    }
    Add(out, "pin_memory", changed, changes);
  }

  void LaunchOverhead(std::vector<WhatIf>* out) {
    // The shortest gap measured between a kernel and the next one queued behind it.
    TimeNs shortest = ReplayChanges::kKeep;
    for (size_t w = 0; w < work_.size(); ++w) {
      const int32_t p = g_.StreamPrevious(w), c = g_.LaunchingCall(w);
      if (p < 0 || c < 0 || work_[w].kind != ActivityKind::kKernel) continue;
      const GpuActivity& prev = work_[static_cast<size_t>(p)];
      if (prev.kind != ActivityKind::kKernel || prev.end_ns <= calls_[static_cast<size_t>(c)].enter_ns) continue;
      const TimeNs gap = std::max<TimeNs>(0, work_[w].start_ns - prev.end_ns);
      if (shortest == ReplayChanges::kKeep || gap < shortest) shortest = gap;
    }
    ReplayChanges changes;
    uint64_t changed = 0;
    for (size_t i = 0; i < calls_.size(); ++i) {
      const int32_t prev = g_.PreviousCall(i);
      if (prev < 0 || calls_[i].api_class != ApiClass::kLaunch ||
          calls_[static_cast<size_t>(prev)].api_class != ApiClass::kLaunch)
        continue;
      changes.SetCallCost(i, 0);
      changes.SetHostGap(i, 0);
      if (shortest != ReplayChanges::kKeep)
        for (size_t w : call_work_[i]) changes.SetWorkGapAfterPrevious(w, shortest);
      ++changed;
    }
    Add(out, "launch_overhead", changed, changes);
  }

  void Input(std::vector<WhatIf>* out) {
    // The calls that ended host-bound gaps, and the host work before each that the gap waited on.
    absl::flat_hash_map<int32_t, TimeNs> host_work;
    for (const ClassifiedGap& gap : gaps_) {
      if (gap.resume < 0 || gap.by_cause[kHostWork] <= 0 || g_.Nested(static_cast<size_t>(gap.resume))) continue;
      TimeNs& ns = host_work[gap.resume];
      ns = std::max(ns, gap.by_cause[kHostWork]);
    }
    if (host_work.empty()) return;
    std::vector<std::pair<TimeNs, int32_t>> resumes;  // (measured entry, call)
    std::vector<TimeNs> production;
    for (const auto& [call, ns] : host_work) {
      resumes.push_back({calls_[static_cast<size_t>(call)].enter_ns, call});
      production.push_back(ns);
    }
    std::sort(resumes.begin(), resumes.end());
    ReplayChanges free_input;
    for (const auto& [enter, call] : resumes) {
      const size_t i = static_cast<size_t>(call);
      free_input.SetHostGap(i, std::max<TimeNs>(0, g_.HostGap(i) - host_work[call]));
    }
    Add(out, "input_pipeline", resumes.size(), free_input);
    // N workers, each batch the median preparation. The first step's batch (before the first
    // steady-state gap: the analysis classifies none before the device first ran) is batch 0,
    // ready as the trace begins: the workers started one preparation earlier. The k-th
    // host-bound resume takes batch k + 1, ready (k + 1) / N + 1 preparations after that start.
    const TimeNs per_batch = Median(production);
    const TimeNs t0 = g_.Measured().start_ns - per_batch;
    for (uint32_t n : {1u, 2u, 4u, 8u, 16u}) {
      ReplayChanges workers = free_input;
      for (size_t k = 0; k < resumes.size(); ++k)
        workers.SetNotBefore(static_cast<size_t>(resumes[k].second),
                             t0 + static_cast<TimeNs>((k + 1) / n + 1) * per_batch);
      Add(out, "input_workers", resumes.size(), workers, n);
    }
  }

  const ReplayGraph& g_;
  const std::vector<ApiCall>& calls_;
  const std::vector<GpuActivity>& work_;
  const std::vector<ClassifiedGap>& gaps_;
  const TraceTables& tables_;
  std::vector<std::vector<size_t>> call_work_;
  absl::flat_hash_map<uint32_t, FrameInfo> sites_;
};

}  // namespace

std::vector<WhatIf> PredictFixes(const ReplayGraph& graph, const std::vector<ClassifiedGap>& gaps,
                                 const TraceTables& tables) {
  std::vector<WhatIf> out;
  Predictor(graph, gaps, tables).Run(&out);
  return out;
}

}  // namespace gs::analyzer::whatif
