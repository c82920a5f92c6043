#include "analyzer/analysis/multirank/summarize_trace.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/import/imported_trace.h"
#include "analyzer/model/importer.h"
#include "analyzer/reader/trace_reader.h"

namespace gs::analyzer {

namespace {

namespace tr = gpustall::trace;

constexpr size_t kMaxStacks = 20;
constexpr size_t kMaxFrames = 16;

struct Collective {
  uint32_t device;
  TimeNs start, end;
};

// Pass 1: identity from the header, collectives from the activities (by kind or NCCL name).
// The same from a trace of another format (analyzer/import/): identity from its TraceInfo.
absl::Status ReadImportedHeaderAndCollectives(const std::string& path, RankSummary* s,
                                              std::vector<Collective>* collectives) {
  absl::StatusOr<std::unique_ptr<TraceImporter>> importer = TraceImporter::Open(path);
  if (!importer.ok()) return importer.status();
  struct Sink final : RecordSink {
    const TraceTables* tables;
    std::vector<Collective>* out;
    void OnApiCall(const ApiCall&) override {}
    void OnSample(const Sample&) override {}
    void OnMemoryEvent(const MemoryEvent&) override {}
    void OnActivity(const GpuActivity& a) override {
      if (a.kind == ActivityKind::kCollective ||
          (a.kind == ActivityKind::kKernel && IsCollectiveKernelName(tables->StringValue(a.name))))
        out->push_back({a.device, a.start_ns, a.end_ns});
    }
  } sink;
  sink.tables = &(*importer)->tables();
  sink.out = collectives;
  if (absl::Status st = (*importer)->ReadAll(&sink); !st.ok()) return st;
  const TraceInfo& info = (*importer)->info();
  s->source = path;
  s->host_name = info.host;
  s->pid = info.pid;
  if (info.rank) s->rank = *info.rank;
  return absl::OkStatus();
}

absl::Status ReadHeaderAndCollectives(const std::string& path, RankSummary* s,
                                      std::vector<Collective>* collectives) {
  if (IsImportedTrace(path)) return ReadImportedHeaderAndCollectives(path, s, collectives);
  absl::StatusOr<std::unique_ptr<reader::TraceReader>> reader = reader::TraceReader::Open(path);
  if (!reader.ok()) return reader.status();
  const tr::TraceHeader& h = (*reader)->header();
  s->source = path;
  s->host_name = h.host_name();
  s->host_id = h.host_id();
  s->boot_id = h.boot_id();
  s->job_id = h.job_id();
  s->pid = h.pid();
  if (h.has_rank()) s->rank = h.rank();
  if (h.has_world_size()) s->world_size = h.world_size();
  s->trace_id = h.trace_id();
  s->clock_monotonic_ns = h.start_clock().monotonic_ns();
  s->clock_realtime_ns = h.start_clock().realtime_ns();
  s->clock_uncertainty_ns = h.start_clock().uncertainty_ns();
  reader::ChunkEvents events;
  absl::flat_hash_map<uint32_t, bool> collective_name;  // string id -> is a collective
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(&events);
    if (!more.ok()) return more.status();
    if (!*more) break;
    const reader::InternTables& t = (*reader)->tables();
    for (const gs::trace::GpuActivityRecord& a : events.activities) {
      bool is_collective = a.kind == tr::ACTIVITY_KIND_COLLECTIVE;
      if (!is_collective && a.kind == tr::ACTIVITY_KIND_KERNEL && a.name != 0) {
        auto [it, inserted] = collective_name.try_emplace(a.name, false);
        if (inserted && t.has_string(a.name)) it->second = IsCollectiveKernelName(t.string(a.name));
        is_collective = it->second;
      }
      if (is_collective && a.end_ns >= a.start_ns && a.start_ns > 0) {
        collectives->push_back({a.device, static_cast<TimeNs>(a.start_ns),
                                static_cast<TimeNs>(a.end_ns)});
      }
    }
  }
  return absl::OkStatus();
}

std::string FrameString(const FrameInfo& f) {
  if (f.file.empty()) return f.function;
  size_t slash = f.file.rfind('/');
  std::string file = slash == std::string::npos ? f.file : f.file.substr(slash + 1);
  return f.line ? absl::StrCat(f.function, " (", file, ":", f.line, ")")
                : absl::StrCat(f.function, " (", file, ")");
}

// Frames from the first one outside the runtime/agent (what the reports show as the site).
std::vector<std::string> FrameStrings(const std::vector<FrameInfo>& frames) {
  std::vector<std::string> out;
  for (size_t i = SiteFrameIndex(frames); i < frames.size() && out.size() < kMaxFrames; ++i) {
    out.push_back(FrameString(frames[i]));
  }
  return out;
}

struct Gap {
  uint32_t device;
  TimeNs start, end;
  std::vector<Charge> charges;
};

}  // namespace

absl::StatusOr<RankSummary> SummarizeTrace(const std::string& path, const AnalysisOptions& options,
                                           std::vector<IdleIntervalRow>* intervals,
                                           TraceStacks* stacks) {
  RankSummary s;
  std::vector<Collective> collectives;
  if (absl::Status st = ReadHeaderAndCollectives(path, &s, &collectives); !st.ok()) return st;

  // Pass 2: the per-trace analysis, observing every idle gap.
  absl::StatusOr<std::unique_ptr<TraceImporter>> importer = TraceImporter::Open(path);
  if (!importer.ok()) return importer.status();
  const TraceTables& tables = (*importer)->tables();
  TraceAnalyzer analyzer(options, tables);
  std::vector<Gap> gaps;
  analyzer.set_interval_observer([&](uint32_t device, const IntervalVerdict& v) {
    gaps.push_back({device, v.start, v.end, v.charges});
    if (intervals != nullptr) {
      IdleIntervalRow row;
      row.device = device;
      row.start_ns = v.start;
      row.end_ns = v.end;
      row.cause = v.cause;
      row.by_cause = v.by_cause;
      row.after_sync = v.after_sync && v.preceding != nullptr;
      if (row.after_sync) {
        row.after_sync_site = absl::StrCat(tables.FunctionName(v.preceding->function), " @ ",
                                           FrameString(SiteFrame(tables.ResolveStack(v.preceding->stack))));
      }
      TimeNs most = -1;
      for (const Charge& c : v.charges) {
        if (c.ns > most) {
          most = c.ns;
          row.stack_id = c.key;
        }
      }
      intervals->push_back(std::move(row));
    }
  });
  if (absl::Status st = (*importer)->ReadAll(&analyzer); !st.ok()) return st;
  TraceResult result = analyzer.Finish((*importer)->info());

  for (const DeviceSummary& d : result.devices) {
    ++s.devices;
    s.wall_ns += d.wall_ns;  // device time: utilisation over several devices is busy / this
    s.compute_busy_ns += d.compute_busy_ns;
    s.steady_wall_ns += d.steady_wall_ns;
    s.steady_idle_ns += d.steady_idle_ns;
    s.idle_intervals += d.idle_intervals;
  }
  s.idle_by_cause = result.causes;
  for (const Collective& c : collectives) s.collective_ns += c.end - c.start;

  // Steps: the collectives of the device that has the most, in time order.
  absl::flat_hash_map<uint32_t, size_t> per_device;
  uint32_t step_device = 0;
  size_t best = 0;
  for (const Collective& c : collectives) {
    size_t n = ++per_device[c.device];
    if (n > best || (n == best && c.device < step_device)) {
      best = n;
      step_device = c.device;
    }
  }
  std::vector<Collective> mine;
  for (const Collective& c : collectives) {
    if (c.device == step_device) mine.push_back(c);
  }
  std::sort(mine.begin(), mine.end(),
            [](const Collective& a, const Collective& b) { return a.start < b.start; });
  for (const Collective& c : mine) s.steps.push_back({c.start, c.end, 0, 0});

  // Charge each gap to the step whose window it falls in: (previous collective end, start].
  absl::flat_hash_map<uint64_t, RankStack> by_key;
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.start < b.start; });
  size_t k = 0;
  for (const Gap& g : gaps) {
    TimeNs length = g.end - g.start;
    for (const Charge& c : g.charges) {
      RankStack& st = by_key[c.key];
      st.idle_ns += c.ns;
    }
    if (g.device != step_device || length <= 0 || s.steps.empty()) continue;
    while (k < s.steps.size() && s.steps[k].collective_start_ns <= g.start) ++k;
    if (k == s.steps.size()) continue;  // after the last collective: not before any step
    RankStep& step = s.steps[k];
    TimeNs window_start = k > 0 ? s.steps[k - 1].collective_end_ns : INT64_MIN;
    TimeNs overlap = std::min(g.end, step.collective_start_ns) - std::max(g.start, window_start);
    if (overlap <= 0) continue;
    double fraction = static_cast<double>(overlap) / static_cast<double>(length);
    step.idle_ns += overlap;
    for (const Charge& c : g.charges) {
      if (!IsHostBound(c.cause)) continue;
      auto ns = static_cast<TimeNs>(static_cast<double>(c.ns) * fraction);
      step.host_bound_idle_ns += ns;
      by_key[c.key].step_host_bound_ns += ns;
    }
  }

  // Causes per stack (largest) and frames; then the top ones.
  absl::flat_hash_map<uint64_t, CauseNs> stack_causes;
  for (const Gap& g : gaps) {
    for (const Charge& c : g.charges) stack_causes[c.key][static_cast<int>(c.cause)] += c.ns;
  }
  std::vector<std::pair<uint64_t, RankStack>> ranked(by_key.begin(), by_key.end());
  for (auto& [key, st] : ranked) {
    const CauseNs& causes = stack_causes[key];
    st.cause = static_cast<Cause>(std::max_element(causes.begin(), causes.end()) - causes.begin());
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second.step_host_bound_ns != b.second.step_host_bound_ns)
      return a.second.step_host_bound_ns > b.second.step_host_bound_ns;
    if (a.second.idle_ns != b.second.idle_ns) return a.second.idle_ns > b.second.idle_ns;
    return a.first < b.first;
  });
  auto frames_of = [&](uint64_t key) {
    if (key == 0) return std::vector<std::string>{"(no host call recorded)"};
    if (key & kFunctionKeyBit) {
      return std::vector<std::string>{
          absl::StrCat(tables.FunctionName(static_cast<uint32_t>(key)), " (no stack)")};
    }
    std::vector<std::string> f = FrameStrings(tables.ResolveStack(static_cast<uint32_t>(key)));
    if (f.empty()) f.push_back(absl::StrCat("stack#", key, " (not in trace)"));
    return f;
  };
  for (auto& [key, st] : ranked) {
    if (s.stacks.size() == kMaxStacks) break;
    st.frames = frames_of(key);
    s.stacks.push_back(st);
  }
  if (stacks != nullptr) {
    for (const auto& [key, st] : ranked) (*stacks)[key] = frames_of(key);
  }
  return s;
}

}  // namespace gs::analyzer
