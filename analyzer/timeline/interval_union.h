// interval_union.h — the length of a union of intervals fed in non-decreasing start order.
//
// The busy timeline of a device is the union of its activities on all streams. Fed by start
// time, a union needs only its frontier (the latest end so far): an interval starting after the
// frontier opens a gap, one ending before it is nested and adds nothing. O(1) per interval,
// O(1) memory. Zero-length intervals move the frontier but add no time.
//
// Thread safety: none. Not copyable-by-accident concerns: a plain value.
#ifndef GPUSTALL_ANALYZER_TIMELINE_INTERVAL_UNION_H_
#define GPUSTALL_ANALYZER_TIMELINE_INTERVAL_UNION_H_

#include <algorithm>
#include <limits>

#include "analyzer/model/types.h"

namespace gs::analyzer {

class IntervalUnion {
 public:
  // Adds [start, end) (end < start is treated as zero length). Calls `on_new(a, b)` for the part
  // [a, b) not covered before (at most one piece, since starts are non-decreasing). Returns the
  // gap [frontier, start) this interval closes, as its length (0 if none or if it is the first).
  template <typename OnNew>
  TimeNs Add(TimeNs start, TimeNs end, OnNew&& on_new) {
    if (end < start) end = start;
    TimeNs gap = 0;
    if (!started_) {
      started_ = true;
      first_ = start;
      frontier_ = start;
    } else if (start > frontier_) {
      gap = start - frontier_;
    }
    TimeNs from = std::max(start, frontier_);
    if (end > from) {
      covered_ += end - from;
      on_new(from, end);
    }
    if (end > frontier_) frontier_ = end;
    return gap;
  }
  TimeNs Add(TimeNs start, TimeNs end) {
    return Add(start, end, [](TimeNs, TimeNs) {});
  }

  bool started() const { return started_; }
  TimeNs first_start() const { return first_; }
  TimeNs frontier() const { return frontier_; }   // end of the union so far
  TimeNs covered() const { return covered_; }     // total length of the union

 private:
  bool started_ = false;
  TimeNs first_ = 0;
  TimeNs frontier_ = 0;
  TimeNs covered_ = 0;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_TIMELINE_INTERVAL_UNION_H_
