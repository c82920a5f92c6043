#include "analyzer/accounting/nvtx_ranges.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace gs::analyzer {

FrameInfo NvtxRangeFrame(const std::string& domain, const std::string& name) {
  FrameInfo f;
  f.function = domain.empty() ? absl::StrCat("[nvtx] ", name) : absl::StrCat("[nvtx ", domain, "] ", name);
  f.module = kNvtxFrameModule;
  return f;
}

void MergeNvtxRanges(const std::vector<NvtxRangeStats>& from, std::vector<NvtxRangeStats>* into) {
  for (const NvtxRangeStats& s : from) {
    auto it = std::find_if(into->begin(), into->end(), [&](const NvtxRangeStats& x) {
      return x.domain == s.domain && x.name == s.name;
    });
    if (it == into->end()) {
      into->push_back(s);
      continue;
    }
    it->count += s.count;
    it->wall_ns += s.wall_ns;
    it->busy_ns += s.busy_ns;
    it->idle_ns += s.idle_ns;
    it->threads += s.threads;
  }
}

void FinalizeNvtxRanges(std::vector<NvtxRangeStats>* rows) {
  for (NvtxRangeStats& s : *rows) s.idle_share = s.wall_ns > 0 ? static_cast<double>(s.idle_ns) / s.wall_ns : 0;
  std::sort(rows->begin(), rows->end(), [](const NvtxRangeStats& a, const NvtxRangeStats& b) {
    if (a.idle_ns != b.idle_ns) return a.idle_ns > b.idle_ns;
    return a.domain != b.domain ? a.domain < b.domain : a.name < b.name;
  });
}

void NvtxAccounting::AddRange(const NvtxRange& range) {
  enabled_ = true;  // a trace whose header did not say so still gets its ranges from here on
  ranges_.push_back(range);
}

TimeNs NvtxAccounting::BusyBefore(TimeNs t) const {
  // The first busy interval that ends after t; everything before it is wholly before t.
  auto it = std::upper_bound(busy_.begin(), busy_.end(), t,
                             [](TimeNs v, const Interval& i) { return v < i.end; });
  const size_t i = static_cast<size_t>(it - busy_.begin());
  TimeNs before = busy_prefix_[i];
  if (it != busy_.end() && it->start < t) before += t - it->start;
  return before;
}

NvtxAccounting::Result NvtxAccounting::Finish(const TraceTables& tables) {
  Result result;
  if (ranges_.empty()) return result;

  // Busy runs: sorted, merged, prefix sums.
  if (!busy_sorted_) {
    std::sort(busy_.begin(), busy_.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
    std::vector<Interval> merged;
    for (const Interval& i : busy_) {
      if (!merged.empty() && i.start <= merged.back().end) {
        merged.back().end = std::max(merged.back().end, i.end);
      } else {
        merged.push_back(i);
      }
    }
    busy_ = std::move(merged);
  }
  busy_prefix_.assign(busy_.size() + 1, 0);
  for (size_t i = 0; i < busy_.size(); ++i) busy_prefix_[i + 1] = busy_prefix_[i] + (busy_[i].end - busy_[i].start);

  // Labels: one per (domain, name) id pair.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> label_of;
  std::vector<NvtxRangeStats> labels;
  std::vector<FrameInfo> label_frames;
  absl::flat_hash_set<std::pair<uint32_t, uint64_t>> label_threads;
  std::vector<uint32_t> range_label(ranges_.size());
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const NvtxRange& r = ranges_[i];
    auto [it, inserted] = label_of.try_emplace({r.domain, r.name}, static_cast<uint32_t>(labels.size()));
    if (inserted) {
      NvtxRangeStats s;
      s.domain = tables.StringValue(r.domain);
      s.name = r.name != 0 ? tables.StringValue(r.name) : std::string();
      if (s.name.empty()) s.name = r.name != 0 ? absl::StrCat("string#", r.name) : "(unnamed)";
      label_frames.push_back(NvtxRangeFrame(s.domain, s.name));
      labels.push_back(std::move(s));
    }
    range_label[i] = it->second;
    if (r.end_ns <= r.start_ns) continue;  // marks
    NvtxRangeStats& s = labels[it->second];
    ++s.count;
    const TimeNs wall = r.end_ns - r.start_ns;
    const TimeNs busy = BusyBefore(r.end_ns) - BusyBefore(r.start_ns);
    s.wall_ns += wall;
    s.busy_ns += busy;
    s.idle_ns += wall - busy;
    if (label_threads.insert({it->second, r.thread}).second) ++s.threads;
  }
  for (NvtxRangeStats& s : labels)
    if (s.count > 0) result.ranges.push_back(s);
  FinalizeNvtxRanges(&result.ranges);

  // Range frames. Per thread, the time line cut where the set of open ranges changes; each piece
  // carries the interned path of open ranges (outermost first).
  struct Piece {
    TimeNs start, end;
    uint32_t path;  // index into paths (0 = none)
  };
  std::vector<std::vector<uint32_t>> paths(1);
  absl::flat_hash_map<std::vector<uint32_t>, uint32_t> path_of;
  absl::flat_hash_map<uint64_t, std::vector<Piece>> pieces;
  {
    absl::flat_hash_map<uint64_t, std::vector<size_t>> by_thread;
    for (size_t i = 0; i < ranges_.size(); ++i)
      if (ranges_[i].end_ns > ranges_[i].start_ns) by_thread[ranges_[i].thread].push_back(i);
    struct Event {
      TimeNs t;
      bool open;
      size_t range;
    };
    std::vector<Event> events;
    std::vector<size_t> open;
    std::vector<uint32_t> path;
    for (auto& [thread, indices] : by_thread) {
      events.clear();
      for (size_t i : indices) {
        events.push_back({ranges_[i].start_ns, true, i});
        events.push_back({ranges_[i].end_ns, false, i});
      }
      std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
      open.clear();
      std::vector<Piece>& out = pieces[thread];
      for (size_t e = 0; e < events.size();) {
        const TimeNs t = events[e].t;
        for (; e < events.size() && events[e].t == t; ++e) {
          if (events[e].open) {
            open.push_back(events[e].range);
          } else {
            open.erase(std::find(open.begin(), open.end(), events[e].range));
          }
        }
        if (open.empty() || e == events.size()) continue;
        std::sort(open.begin(), open.end(), [this](size_t a, size_t b) {
          const NvtxRange& x = ranges_[a];
          const NvtxRange& y = ranges_[b];
          if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
          if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
          return x.depth < y.depth;
        });
        path.clear();
        for (size_t r : open) path.push_back(range_label[r]);
        auto [it, inserted] = path_of.try_emplace(path, static_cast<uint32_t>(paths.size()));
        if (inserted) paths.push_back(path);
        out.push_back({t, events[e].t, it->second});
      }
    }
  }

  // Charged segments: the parts that fall inside pieces move to (key, path).
  absl::flat_hash_map<std::pair<uint64_t, uint32_t>, CauseNs> ranged;
  absl::flat_hash_map<uint64_t, CauseNs> moved;
  for (const Segment& s : segments_) {
    auto found = pieces.find(s.thread);
    if (found == pieces.end()) continue;
    const std::vector<Piece>& p = found->second;
    auto it = std::upper_bound(p.begin(), p.end(), s.start, [](TimeNs v, const Piece& x) { return v < x.end; });
    for (; it != p.end() && it->start < s.end; ++it) {
      const TimeNs ns = std::min(s.end, it->end) - std::max(s.start, it->start);
      if (ns <= 0) continue;
      ranged[{s.key, it->path}][static_cast<int>(s.cause)] += ns;
      moved[s.key][static_cast<int>(s.cause)] += ns;
    }
  }
  for (auto& [key_path, ns] : ranged) {
    NvtxChargedStack c;
    c.key = key_path.first;
    const std::vector<uint32_t>& path = paths[key_path.second];
    for (auto l = path.rbegin(); l != path.rend(); ++l) c.ranges.push_back(label_frames[*l]);
    c.by_cause = ns;
    result.stacks.push_back(std::move(c));
  }
  for (auto& [key, ns] : moved) result.moved.emplace_back(key, ns);
  return result;
}

}  // namespace gs::analyzer
