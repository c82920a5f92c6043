#include "analyzer/export/trace_event_export.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/export/chrome_trace_writer.h"
#include "analyzer/model/importer.h"
#include "analyzer/reader/trace_reader.h"

namespace gs::analyzer {

namespace tr = gpustall::trace;

std::string TraceEventDialect::ActivityName(const trace::GpuActivityRecord& a,
                                            const reader::InternTables& t) const {
  switch (a.kind) {
    case tr::ACTIVITY_KIND_KERNEL:
      return a.name && t.has_string(a.name) ? t.string(a.name) : std::string("kernel");
    case tr::ACTIVITY_KIND_MEMCPY:
      return absl::StrCat("Memcpy ", CopyDirectionName(DirectionFromCuptiMemcpyKind(a.copy_kind)));
    case tr::ACTIVITY_KIND_MEMSET: return "Memset";
    default:
      return a.name && t.has_string(a.name) ? t.string(a.name) : std::string("collective");
  }
}

namespace {

constexpr size_t kMaxStackFrames = 24;  // keeps the file reasonable for deep Python stacks

struct FlowEnd {
  int64_t pid = 0, tid = 0;
  TimeNs ts = 0;
};

bool IsFlowSource(tr::ApiClass c) {
  return c == tr::API_CLASS_LAUNCH || c == tr::API_CLASS_MEMCPY || c == tr::API_CLASS_MEMSET;
}

// Pass 1: the records as written.
class RecordPass {
 public:
  RecordPass(ChromeTraceWriter* w, const TraceEventDialect& dialect, TraceEventExportStats* stats)
      : w_(*w), d_(dialect), stats_(*stats) {}

  absl::Status Run(reader::TraceReader* reader, int64_t host_pid) {
    host_pid_ = host_pid;
    reader::ChunkEvents events;
    while (true) {
      absl::StatusOr<bool> more = reader->Next(&events);
      if (!more.ok()) return more.status();
      if (!*more) break;
      const reader::InternTables& t = reader->tables();
      for (const trace::ApiCallRecord& c : events.api_calls) Call(c, t);
      for (const trace::GpuActivityRecord& a : events.activities) Activity(a, t);
      for (const trace::NvtxRangeRecord& r : events.nvtx_ranges) Nvtx(r, t);
    }
    const reader::InternTables& t = reader->tables();
    for (uint64_t tid : threads_) {
      const tr::ThreadInfo* info = t.thread(tid);
      std::string name = info && !info->name().empty() ? absl::StrCat(info->name(), " (", tid, ")")
                                                       : absl::StrCat("thread ", tid);
      w_.ThreadName(host_pid_, static_cast<int64_t>(tid), name);
    }
    for (const auto& [device, streams] : streams_) {
      for (uint32_t s : streams) {
        w_.ThreadName(d_.GpuPid(device), d_.StreamTid(s), absl::StrCat("stream ", s));
        w_.ThreadSortIndex(d_.GpuPid(device), d_.StreamTid(s), int64_t{1} + s);
      }
    }
    return absl::OkStatus();
  }
  const std::map<uint32_t, std::set<uint32_t>>& streams() const { return streams_; }

 private:
  const std::string& StackJson(uint32_t stack, const reader::InternTables& t) {
    auto [it, inserted] = stacks_.try_emplace(stack);
    if (inserted) {
      absl::Span<const uint32_t> frames = t.stack(stack);
      std::string& s = it->second;
      s = "[";
      for (size_t i = 0; i < frames.size() && i < kMaxStackFrames; ++i)
        absl::StrAppend(&s, i ? "," : "", JsonQuote(t.DescribeFrame(frames[i])));
      if (frames.size() > kMaxStackFrames) absl::StrAppend(&s, ",\"...\"");
      s += "]";
    }
    return it->second;
  }

  void Call(const trace::ApiCallRecord& c, const reader::InternTables& t) {
    ++stats_.api_calls;
    threads_.insert(c.thread_id);
    std::string name(t.function_name(c.function));
    if (name.empty()) name = absl::StrCat("api#", c.function);
    const auto tid = static_cast<int64_t>(c.thread_id);
    const auto enter = static_cast<TimeNs>(c.enter_ns);
    w_.Complete(host_pid_, tid, enter, static_cast<TimeNs>(c.exit_ns - c.enter_ns), name, d_.CallCategory(c),
                d_.CallArgs(c, c.stack ? absl::string_view(StackJson(c.stack, t)) : absl::string_view()));
    if (c.correlation_id == 0 || !IsFlowSource(c.api_class)) return;
    FlowEnd here{host_pid_, tid, enter};
    auto act = activities_.find(c.correlation_id);
    if (act != activities_.end()) {
      Connect(c.correlation_id, here, act->second, name);
      activities_.erase(act);
    } else {
      calls_[c.correlation_id] = {here, name};
    }
  }

  void Activity(const trace::GpuActivityRecord& a, const reader::InternTables& t) {
    if (!IsDeviceWork(static_cast<ActivityKind>(a.kind)) || (a.start_ns == 0 && a.end_ns == 0)) return;
    ++stats_.gpu_activities;
    streams_[a.device].insert(a.stream);
    FlowEnd here{d_.GpuPid(a.device), d_.StreamTid(a.stream), static_cast<TimeNs>(a.start_ns)};
    w_.Complete(here.pid, here.tid, here.ts, static_cast<TimeNs>(a.end_ns - a.start_ns), d_.ActivityName(a, t),
                d_.ActivityCategory(a), d_.ActivityArgs(a));
    if (a.correlation_id == 0) return;
    auto call = calls_.find(a.correlation_id);
    if (call != calls_.end()) {
      Connect(a.correlation_id, call->second.end, here, call->second.name);
      calls_.erase(call);
    } else if (!matched_.contains(a.correlation_id)) {
      activities_.try_emplace(a.correlation_id, here);  // the first activity of a call gets the arrow
    }
  }

  void Nvtx(const trace::NvtxRangeRecord& r, const reader::InternTables& t) {
    ++stats_.nvtx_ranges;
    threads_.insert(r.thread_id);
    std::string name = r.name && t.has_string(r.name) ? t.string(r.name) : std::string("(nvtx range)");
    std::string args = "{}";
    if (r.domain && t.has_string(r.domain)) args = absl::StrCat("{\"domain\":", JsonQuote(t.string(r.domain)), "}");
    w_.Complete(host_pid_, static_cast<int64_t>(r.thread_id), static_cast<TimeNs>(r.start_ns),
                static_cast<TimeNs>(r.end_ns - r.start_ns), name, d_.NvtxCategory(), args);
  }

  void Connect(uint32_t correlation, const FlowEnd& call, const FlowEnd& activity, const std::string& name) {
    ++stats_.flows;
    w_.Flow(d_.FlowId(correlation, stats_.flows), call.pid, call.tid, call.ts, activity.pid, activity.tid,
            activity.ts, d_.FlowName(name), d_.FlowCategory());
    // Later activities of the same call (a rare multi-part copy) get no second arrow. Recent
    // correlations only, so that memory stays bounded.
    if (matched_.size() >= (1u << 16)) matched_.clear();
    matched_.insert(correlation);
  }

  struct PendingCall {
    FlowEnd end;
    std::string name;
  };
  ChromeTraceWriter& w_;
  const TraceEventDialect& d_;
  TraceEventExportStats& stats_;
  int64_t host_pid_ = 0;
  absl::flat_hash_map<uint32_t, PendingCall> calls_;
  absl::flat_hash_map<uint32_t, FlowEnd> activities_;
  absl::flat_hash_map<uint32_t, std::string> stacks_;
  absl::flat_hash_set<uint32_t> matched_;
  std::set<uint64_t> threads_;
  std::map<uint32_t, std::set<uint32_t>> streams_;
};

std::string IdleArgs(const IntervalVerdict& v, const TraceTables& tables, const TraceAnalyzer& analyzer) {
  const std::string evidence = analyzer.Evidence(v, v.has_resume ? v.resume : nullptr,
                                                 v.has_preceding ? v.preceding : nullptr);
  std::string args = absl::StrCat("{\"evidence\":", JsonQuote(evidence), ",\"by_cause_ns\":{");
  bool first = true;
  for (int i = 0; i < kNumCauses; ++i) {
    if (v.by_cause[i] <= 0) continue;
    absl::StrAppend(&args, first ? "" : ",", "\"", CauseName(static_cast<Cause>(i)), "\":", v.by_cause[i]);
    first = false;
  }
  args += "}";
  if (v.has_resume) {
    FrameInfo f = SiteFrame(tables.ResolveStack(v.resume->stack));
    absl::StrAppend(&args, ",\"resume_call\":", JsonQuote(tables.FunctionName(v.resume->function)));
    if (!f.function.empty()) absl::StrAppend(&args, ",\"resume_site\":", JsonQuote(f.function));
  }
  if (v.after_sync && v.has_preceding) {
    FrameInfo f = SiteFrame(tables.ResolveStack(v.preceding->stack));
    std::string site = tables.FunctionName(v.preceding->function);
    if (!f.function.empty()) absl::StrAppend(&site, " at ", f.function);
    if (!f.file.empty()) absl::StrAppend(&site, " (", f.file, ":", f.line, ")");
    absl::StrAppend(&args, ",\"after_sync\":", JsonQuote(site));
  }
  args += "}";
  return args;
}

}  // namespace

absl::StatusOr<TraceEventExportStats> ExportTraceEvents(const std::string& trace_path, std::ostream* out,
                                                        const TraceEventDialect& dialect,
                                                        const AnalysisOptions& options) {
  absl::StatusOr<std::unique_ptr<TraceImporter>> importer = TraceImporter::Open(trace_path);
  if (!importer.ok()) return importer.status();
  absl::StatusOr<std::unique_ptr<reader::TraceReader>> reader = reader::TraceReader::Open(trace_path);
  if (!reader.ok()) return reader.status();

  TraceEventExportStats stats;
  const tr::TraceHeader& header = (*reader)->header();
  ChromeTraceWriter w(out, dialect.LeadingMembers(header));
  w.set_time_origin(dialect.TimeOrigin(header));
  const int64_t host_pid = header.pid();
  w.ProcessName(host_pid, absl::StrCat("pid ", header.pid(), header.host_name().empty() ? "" : " on ",
                                       header.host_name()));
  w.ProcessSortIndex(host_pid, 0);

  RecordPass records(&w, dialect, &stats);
  if (absl::Status s = records.Run(reader->get(), host_pid); !s.ok()) return s;

  // Pass 2: the idle intervals, from the analysis itself (the same gaps and verdicts as the report).
  std::set<uint32_t> devices;
  for (const auto& [device, streams] : records.streams()) devices.insert(device);
  const TraceTables& tables = (*importer)->tables();
  TraceAnalyzer analyzer(options, tables);
  analyzer.set_interval_observer([&](uint32_t device, const IntervalVerdict& v) {
    devices.insert(device);
    ++stats.idle_intervals;
    stats.idle_ns += v.length();
    w.Complete(dialect.GpuPid(device), dialect.IdleTid(), v.start, v.length(), CauseName(v.cause),
               dialect.IdleCategory(), IdleArgs(v, tables, analyzer));
  });
  if (absl::Status s = (*importer)->ReadAll(&analyzer); !s.ok()) return s;
  analyzer.Finish((*importer)->info());

  std::map<uint32_t, std::string> names;
  for (const tr::DeviceInfo& d : (*reader)->devices()) names[d.index()] = d.name();
  for (uint32_t d : devices) {
    const std::string& name = names[d];
    w.ProcessName(dialect.GpuPid(d),
                  absl::StrCat("GPU ", d, name.empty() ? "" : " (", name, name.empty() ? "" : ")"));
    w.ProcessSortIndex(dialect.GpuPid(d), 1 + d);
    w.ThreadName(dialect.GpuPid(d), dialect.IdleTid(), absl::StrCat("GPU ", d, " idle"));
    w.ThreadSortIndex(dialect.GpuPid(d), dialect.IdleTid(), -1);
  }
  if (!w.Close(dialect.TrailingMembers(header, (*reader)->devices()))) return absl::InternalError("write failed");
  stats.events = w.events();
  return stats;
}

}  // namespace gs::analyzer
