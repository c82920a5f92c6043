#include "analyzer/whatif/what_ifs.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyzer/accounting/copy_accounting.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/model/median.h"

namespace gs::analyzer::whatif {

namespace {

constexpr size_t kHostWork = static_cast<size_t>(Cause::kHostWork);

class Predictor {
 public:
  Predictor(const ReplayGraph& graph, const std::vector<ClassifiedGap>& gaps, const TraceTables& tables,
            const std::array<double, kNumCopyDirections>& pinned_bandwidth, uint32_t input_workers)
      : g_(graph), calls_(graph.records().calls), work_(graph.records().work), gaps_(gaps), tables_(tables),
        pinned_bandwidth_(pinned_bandwidth), input_workers_(input_workers) {}

  void Run(std::vector<WhatIf>* out) {
    RemoveSync(out);
    Allocator(out);
    PinMemory(out);
    LaunchOverhead(out);
    Input(out);
  }

 private:
  WhatIf* Add(std::vector<WhatIf>* out, const char* kind, uint64_t changed, const ReplayChanges& changes,
              uint32_t workers = 0) {
    if (changed == 0) return nullptr;
    WhatIf w;
    w.kind = kind;
    w.workers = workers;
    w.changed = changed;
    w.figures = g_.Replay(changes);
    out->push_back(std::move(w));
    return &out->back();
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
    const TimeNs cost = !async_copies.empty() ? Median(async_copies)
                        : !launches.empty()   ? Median(launches)
                                              : ReplayChanges::kKeep;
    // Bytes per ns from pinned memory, per direction: as the copy accounting knows it, else the
    // model's multiple of what this trace's pageable copies that way had on the device.
    double bytes_per_ns[kNumCopyDirections] = {};
    double pageable_bytes[kNumCopyDirections] = {}, pageable_ns[kNumCopyDirections] = {};
    for (size_t w = 0; w < work_.size(); ++w) {
      const GpuActivity& a = work_[w];
      const int32_t c = g_.LaunchingCall(w);
      if (a.kind != ActivityKind::kMemcpy || a.end_ns <= a.start_ns || c < 0 ||
          !IsPageableCopy(calls_[static_cast<size_t>(c)]))
        continue;
      pageable_bytes[static_cast<int>(a.direction)] += static_cast<double>(a.bytes);
      pageable_ns[static_cast<int>(a.direction)] += static_cast<double>(a.end_ns - a.start_ns);
    }
    for (int d = 0; d < kNumCopyDirections; ++d) {
      if (pinned_bandwidth_[static_cast<size_t>(d)] > 0) {
        bytes_per_ns[d] = pinned_bandwidth_[static_cast<size_t>(d)] / 1e9;
      } else if (pageable_ns[d] > 0) {
        bytes_per_ns[d] = kPinnedOverPageable * pageable_bytes[d] / pageable_ns[d];
      }
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
      for (const int32_t launched : g_.LaunchedWork(i)) {
        const size_t w = static_cast<size_t>(launched);
        const int d = static_cast<int>(work_[w].direction);
        if (bytes_per_ns[d] > 0)
          changes.SetWorkDuration(w, static_cast<TimeNs>(static_cast<double>(work_[w].bytes) / bytes_per_ns[d]));
      }
    }
    Add(out, "pin_memory", changed, changes);
  }

  void LaunchOverhead(std::vector<WhatIf>* out) {
    // The shortest gap measured between a kernel and the next one queued behind it; none queued
    // (a launch-bound trace never gets ahead of its device): the device's own gap is unseen, and
    // taken as none.
    TimeNs shortest = 0;
    bool seen = false;
    for (size_t w = 0; w < work_.size(); ++w) {
      const int32_t p = g_.StreamPrevious(w);
      if (p < 0 || !g_.Queued(w) || work_[w].kind != ActivityKind::kKernel ||
          work_[static_cast<size_t>(p)].kind != ActivityKind::kKernel)
        continue;
      const TimeNs gap = std::max<TimeNs>(0, work_[w].start_ns - work_[static_cast<size_t>(p)].end_ns);
      if (!seen || gap < shortest) shortest = gap;
      seen = true;
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
      for (const int32_t w : g_.LaunchedWork(i)) changes.SetWorkGapAfterPrevious(static_cast<size_t>(w), shortest);
      ++changed;
    }
    Add(out, "launch_overhead", changed, changes);
  }

  void Input(std::vector<WhatIf>* out) {
    // The calls that ended host-bound gaps, and the host work before each that the gap waited on.
    absl::flat_hash_map<int32_t, TimeNs> host_work;
    TimeNs all_host_work = 0, lock_waits = 0;
    for (const ClassifiedGap& gap : gaps_) {
      if (gap.resume < 0 || gap.by_cause[kHostWork] <= 0 || g_.Nested(static_cast<size_t>(gap.resume))) continue;
      TimeNs& ns = host_work[gap.resume];
      ns = std::max(ns, gap.by_cause[kHostWork]);
      all_host_work += gap.by_cause[kHostWork];
      lock_waits += gap.lock_wait_ns;
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
    WhatIf* bound = Add(out, "input_pipeline", resumes.size(), free_input);
    // No worker processes, yet the thread mostly waited on a lock or queue for its input: the
    // producers are threads the trace does not show, and their pace is unknown.
    if (input_workers_ == 0 && 2 * lock_waits > all_host_work) {
      if (bound != nullptr) bound->producers_unseen = true;
      return;
    }
    // N workers, each batch one preparation, started when the first host-bound wait began (the
    // first batch's preparation, or the wait for it): the k-th host-bound resume takes batch k,
    // ready k / N + 1 preparations after that start.
    TimeNs per_batch = Median(production);
    if (input_workers_ > 0) {
      std::vector<TimeNs> intervals;
      for (size_t k = 1; k < resumes.size(); ++k) intervals.push_back(resumes[k].first - resumes[k - 1].first);
      if (intervals.empty()) return;
      per_batch = static_cast<TimeNs>(input_workers_) * Median(intervals);
    }
    const size_t first = static_cast<size_t>(resumes.front().second);
    const TimeNs t0 = calls_[first].enter_ns - std::min(g_.HostGap(first), host_work[resumes.front().second]);
    for (uint32_t n : kWorkerCounts) {
      if (n <= input_workers_) continue;
      ReplayChanges workers = free_input;
      for (size_t k = 0; k < resumes.size(); ++k)
        workers.SetNotBefore(static_cast<size_t>(resumes[k].second),
                             t0 + static_cast<TimeNs>(k / n + 1) * per_batch);
      Add(out, "input_workers", resumes.size(), workers, n);
    }
  }

  const ReplayGraph& g_;
  const std::vector<ApiCall>& calls_;
  const std::vector<GpuActivity>& work_;
  const std::vector<ClassifiedGap>& gaps_;
  const TraceTables& tables_;
  const std::array<double, kNumCopyDirections>& pinned_bandwidth_;
  const uint32_t input_workers_;
  absl::flat_hash_map<uint32_t, FrameInfo> sites_;
};

}  // namespace

std::vector<WhatIf> PredictFixes(const ReplayGraph& graph, const std::vector<ClassifiedGap>& gaps,
                                 const TraceTables& tables,
                                 const std::array<double, kNumCopyDirections>& pinned_bandwidth,
                                 uint32_t input_workers) {
  std::vector<WhatIf> out;
  Predictor(graph, gaps, tables, pinned_bandwidth, input_workers).Run(&out);
  return out;
}

}  // namespace gs::analyzer::whatif
