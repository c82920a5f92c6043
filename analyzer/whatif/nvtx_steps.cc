#include "analyzer/whatif/nvtx_steps.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace gs::analyzer::whatif {

namespace {

constexpr size_t kMinSteps = 3;
constexpr double kMinCover = 0.8;

bool IsSeparator(char c) { return c == ' ' || c == '#' || c == '_' || c == '-' || c == ':' || c == '.'; }

}  // namespace

std::string StepNameKey(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  while (end > 0 && IsSeparator(name[end - 1])) --end;
  return name.substr(0, end);
}

NvtxSteps FindNvtxSteps(const std::vector<NvtxRange>& outermost, const TraceTables& tables) {
  // (thread, domain, name key) -> the ranges; std::map: the candidates are visited in one order.
  std::map<std::tuple<uint64_t, uint32_t, std::string>, std::vector<const NvtxRange*>> groups;
  for (const NvtxRange& r : outermost) {
    if (r.depth != 0 || r.end_ns <= r.start_ns || r.name == 0) continue;
    const std::string key = StepNameKey(tables.StringValue(r.name));
    if (key.empty()) continue;
    groups[{r.thread, r.domain, key}].push_back(&r);
  }
  NvtxSteps best;
  // The best candidate so far by (time covered, ranges, earliest first start), the start negated.
  std::tuple<TimeNs, size_t, TimeNs> best_key{0, 0, 0};
  for (auto& [key, ranges] : groups) {
    if (ranges.size() < kMinSteps) continue;
    std::sort(ranges.begin(), ranges.end(), [](const NvtxRange* x, const NvtxRange* y) {
      return x->start_ns != y->start_ns ? x->start_ns < y->start_ns : x->end_ns < y->end_ns;
    });
    TimeNs cover = 0;
    bool overlap = false;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (i > 0 && ranges[i]->start_ns < ranges[i - 1]->end_ns) overlap = true;
      cover += ranges[i]->end_ns - ranges[i]->start_ns;
    }
    const TimeNs span = ranges.back()->end_ns - ranges.front()->start_ns;
    if (overlap || static_cast<double>(cover) < kMinCover * static_cast<double>(span)) continue;
    const std::tuple<TimeNs, size_t, TimeNs> candidate{cover, ranges.size(), -ranges.front()->start_ns};
    if (!best.starts.empty() && candidate <= best_key) continue;
    best_key = candidate;
    best.starts.clear();
    for (const NvtxRange* r : ranges) best.starts.push_back(r->start_ns);
    best.first_name = tables.StringValue(ranges.front()->name);
    best.last_name = tables.StringValue(ranges.back()->name);
  }
  return best;
}

std::string DescribeNvtxSteps(const NvtxSteps& steps) {
  if (steps.first_name == steps.last_name) return absl::StrCat("NVTX range \"", steps.first_name, "\"");
  return absl::StrCat("NVTX ranges \"", steps.first_name, "\" to \"", steps.last_name, "\"");
}

}  // namespace gs::analyzer::whatif
