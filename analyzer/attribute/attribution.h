// attribution.h — the attribution stage: each classified idle gap of one trace is charged to its
// causes, to the host stacks and call sites that explain it, and to the sampled thread states of
// host work; the longest gaps are kept as examples with a sentence of evidence.
//
// TraceAnalyzer feeds it every steady-state gap as the GapClassifier judged it (ChargeGap) and asks
// for the sums once the trace is read (Finish). Memory: one counter per distinct stack and site,
// and `AnalysisOptions::longest_intervals` examples — never proportional to the trace.
//
// Lifetimes: `options`, `tables` and `nvtx` must outlive the attribution; the tables are read at
// Finish (stacks are resolved to frames then, so traces merge by frames, not ids).
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_ATTRIBUTE_ATTRIBUTION_H_
#define GPUSTALL_ANALYZER_ATTRIBUTE_ATTRIBUTION_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/accounting/nvtx_ranges.h"
#include "analyzer/classify/gap_classifier.h"
#include "analyzer/model/recent_entries.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/options/options.h"
#include "analyzer/result/trace_result.h"

namespace gs::analyzer {

class IdleAttribution {
 public:
  // `nvtx`: idle time charged while NVTX ranges were open is handed to it (when enabled) so that
  // the ranges become outer frames of the charged stacks at Finish.
  IdleAttribution(const AnalysisOptions& options, const TraceTables& tables, NvtxAccounting* nvtx);
  IdleAttribution(const IdleAttribution&) = delete;
  IdleAttribution& operator=(const IdleAttribution&) = delete;

  // One steady-state gap of `device`. The verdict's pointers are read during the call only.
  void ChargeGap(uint32_t device, const IntervalVerdict& v);

  // One line saying why a gap got its verdict: the rule, its numbers, the split by cause.
  // `resume`/`preceding` are the verdict's calls (null when it has none).
  std::string Evidence(const IntervalVerdict& v, const ApiCall* resume, const ApiCall* preceding) const;

  // Fills `r`'s causes, dominant causes, host states, interval summary (histogram, sites, longest
  // examples with offsets from `t0`, the trace's first timestamp), charged stacks, state stacks
  // and NVTX ranges. Call once, after the last ChargeGap.
  void Finish(TimeNs t0, TraceResult* r);

 private:
  struct SiteAcc {
    TimeNs ns = 0;
    uint64_t count = 0;
    uint32_t function = 0;
  };
  struct Example {
    IntervalVerdict verdict;  // without charges; its pointers are null, the calls are copied:
    ApiCall resume, preceding;
    uint32_t device = 0;
  };

  // A stack's frames as every report shows them (stack_view.h: the interpreter's frames folded,
  // unsymbolised PCs of a module in one bucket), so that all outputs charge the same stacks.
  std::vector<FrameInfo> StackFrames(uint32_t stack) const;
  std::vector<FrameInfo> KeyFrames(uint64_t key) const;

  const AnalysisOptions& options_;
  const TraceTables& tables_;
  NvtxAccounting& nvtx_;

  CauseNs causes_{};
  std::array<uint64_t, kNumCauses> dominant_{};
  std::array<TimeNs, kNumHostStates> host_states_{};
  TimeNs host_exact_ns_ = 0;
  IntervalSummary intervals_;
  absl::flat_hash_map<uint64_t, CauseNs> charges_;
  std::array<absl::flat_hash_map<uint64_t, TimeNs>, kNumHostStates> state_charges_;  // host work
  absl::flat_hash_map<uint64_t, SiteAcc> resume_sites_, sync_sites_;
  // In front of charges_ and resume_sites_: consecutive gaps charge a few stacks in turn.
  RecentEntries<absl::flat_hash_map<uint64_t, CauseNs>> charge_cache_;
  RecentEntries<absl::flat_hash_map<uint64_t, SiteAcc>> resume_cache_;
  std::vector<Example> longest_;  // min-heap by length
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ATTRIBUTE_ATTRIBUTION_H_
