// nvtx_ranges.h — NVTX ranges in the analysis: GPU idle and busy time per range, and
// ranges as frames of the attributed stacks.
//
// Definitions (analyzer/JSON.md repeats them):
//   - The GPU is busy at t when any device of the trace's process runs device work (kernel, copy,
//     memset, collective) at t; idle otherwise. This includes the idle time before the first and
//     after the last device work, unlike the steady-state gaps the causes explain.
//   - A range instance's time is its wall duration [start, end) on the thread that opened it; its
//     busy time is busy ∩ [start, end), its idle time the rest. Per (domain, name), instances add
//     up; nested ranges are counted in each range that contains them (a "data" range inside
//     "step" counts for both), so the totals of different names do not add up to the wall.
//     Marks (zero-length ranges) are not in the table.
//   - Range frames: every idle nanosecond the causes charge to a thread T at time t (rules 1 and 2
//     of gap_classifier.h) gets the ranges open on T at t as synthetic outermost frames, outermost
//     range last in the leaf-first frame list, so the tree, top stacks and folded stacks read
//     "[nvtx] step > [nvtx] data > main > load_batch ...". A frame is
//     FrameInfo{function = "[nvtx] NAME" or "[nvtx DOMAIN] NAME", module = kNvtxFrameModule}.
//     Which ranges are open at t: those with start <= t < end, outermost = earliest start (for
//     overlapping start/end ranges that do not nest, earliest start first).
//
// Streaming: ranges arrive when they close, after the gaps inside them have been classified, so
// this keeps what it needs until Finish: the ranges themselves, the busy intervals (one per
// device-busy run, i.e. one per gap) and the charged segments (one per charge of a classified
// gap). All three are recorded only once `Enable()` was called (the trace says it captured NVTX)
// or the first range arrived: a trace without NVTX costs nothing. Memory therefore grows with the
// number of ranges and gaps of an NVTX trace (~16 bytes per gap, ~40 per charge, ~48 per range).
//
// Thread safety: none.
#ifndef GPUSTALL_ANALYZER_ACCOUNTING_NVTX_RANGES_H_
#define GPUSTALL_ANALYZER_ACCOUNTING_NVTX_RANGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/classify/cause.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

inline constexpr const char* kNvtxFrameModule = "[nvtx]";

// One row of the per-range table.
struct NvtxRangeStats {
  std::string domain;             // "" = NVTX's default domain
  std::string name;
  uint64_t count = 0;             // range instances
  TimeNs wall_ns = 0;             // sum of their durations
  TimeNs busy_ns = 0;             // GPU busy while they were open
  TimeNs idle_ns = 0;             // wall - busy
  double idle_share = 0;          // idle / wall
  uint64_t threads = 0;           // distinct threads that opened it (per trace, summed)
};

// A charged stack split by the NVTX ranges open when its time was charged.
struct NvtxChargedStack {
  uint64_t key = 0;               // the charge key (gap_classifier.h)
  std::vector<FrameInfo> ranges;  // range frames, innermost first (append to the leaf-first stack)
  CauseNs by_cause{};
};

class NvtxAccounting {
 public:
  void Enable() { enabled_ = true; }
  bool enabled() const { return enabled_; }

  void AddRange(const NvtxRange& range);
  // Device work [start, end), in (mostly) increasing start order.
  void AddBusy(TimeNs start, TimeNs end) {
    if (!enabled_ || end <= start) return;
    if (!busy_.empty() && start >= busy_.back().start) {
      if (start <= busy_.back().end) {
        if (end > busy_.back().end) busy_.back().end = end;
        return;
      }
    } else if (!busy_.empty()) {
      busy_sorted_ = false;
    }
    busy_.push_back({start, end});
  }
  // `ns` charged to `key`/`cause` for thread `thread` over [start, start + ns).
  void AddCharge(uint64_t thread, TimeNs start, TimeNs ns, uint64_t key, Cause cause) {
    if (enabled_ && ns > 0) segments_.push_back({start, start + ns, thread, key, cause});
  }

  struct Result {
    std::vector<NvtxRangeStats> ranges;       // by idle time, largest first
    std::vector<NvtxChargedStack> stacks;     // charges that fell inside ranges
    // What was moved into `stacks`: subtract from the plain charges of the same key.
    std::vector<std::pair<uint64_t, CauseNs>> moved;
  };
  // Resolves names through `tables`. Call once.
  Result Finish(const TraceTables& tables);

 private:
  struct Interval {
    TimeNs start, end;
  };
  struct Segment {
    TimeNs start, end;
    uint64_t thread;
    uint64_t key;
    Cause cause;
  };
  TimeNs BusyBefore(TimeNs t) const;  // busy time in (-inf, t)

  bool enabled_ = false;
  bool busy_sorted_ = true;
  std::vector<NvtxRange> ranges_;
  std::vector<Interval> busy_;
  std::vector<TimeNs> busy_prefix_;    // busy_prefix_[i] = busy time of busy_[0, i)
  std::vector<Segment> segments_;
};

// Merging traces: rows of the same (domain, name) add up; then shares and order (idle, largest
// first) are recomputed by FinalizeNvtxRanges.
void MergeNvtxRanges(const std::vector<NvtxRangeStats>& from, std::vector<NvtxRangeStats>* into);
void FinalizeNvtxRanges(std::vector<NvtxRangeStats>* rows);

// The frame that stands for a range in attributed stacks.
FrameInfo NvtxRangeFrame(const std::string& domain, const std::string& name);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ACCOUNTING_NVTX_RANGES_H_
