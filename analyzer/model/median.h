// median.h — the median of a set of times or durations: the upper one of an even count, 0 for an
// empty set (the callers that must tell "none" apart check for it first).
//
// Pure function; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_MODEL_MEDIAN_H_
#define GPUSTALL_ANALYZER_MODEL_MEDIAN_H_

#include <algorithm>
#include <vector>

#include "analyzer/model/types.h"

namespace gs::analyzer {

inline TimeNs Median(std::vector<TimeNs> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_MEDIAN_H_
