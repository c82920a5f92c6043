#include "analyzer/export/trace_event_export.h"

#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/classify/stack_view.h"
#include "analyzer/export/chrome_trace_writer.h"
#include "analyzer/export/export_marker.h"
#include "analyzer/export/fill_counter_track.h"
#include "analyzer/export/imported_trace_export.h"
#include "analyzer/model/schema_enums.h"
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

// The records as written: host calls, device work, NVTX ranges, flows.
class RecordPass {
 public:
  RecordPass(ChromeTraceWriter* w, const TraceEventDialect& dialect, const TraceTables& model,
             TraceEventExportStats* stats)
      : w_(*w), d_(dialect), model_(model), stats_(*stats) {}

  void Begin(int64_t host_pid) { host_pid_ = host_pid; }
  void Chunk(const reader::ChunkEvents& events, const reader::InternTables& t) {
    for (const trace::ApiCallRecord& c : events.api_calls) Call(c, t);
    for (const trace::GpuActivityRecord& a : events.activities) Activity(a, t);
    for (const trace::NvtxRangeRecord& r : events.nvtx_ranges) Nvtx(r, t);
  }
  // After the last chunk: the tracks' names.
  void Finish(const reader::InternTables& t) {
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
  }
  const std::map<uint32_t, std::set<uint32_t>>& streams() const { return streams_; }

 private:
  // A stack's frames as the tables describe them now: kept while the tables stay as they were
  // (a frame symbolised later describes itself anew from then on).
  const std::string& StackJson(uint32_t stack, const reader::InternTables& t) {
    if (stacks_revision_ != t.revision()) {
      stacks_revision_ = t.revision();
      stacks_.clear();
    }
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
    if (c.thread_id != last_thread_ || threads_.empty()) {
      threads_.insert(c.thread_id);
      last_thread_ = c.thread_id;
    }
    std::string unknown;  // a function the tables do not name (its chunk was lost)
    std::string_view name = t.function_name(c.function);
    if (name.empty()) name = unknown = absl::StrCat("api#", c.function);
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
      PendingCall& pending = calls_[c.correlation_id];
      pending.end = here;
      pending.name.assign(name);
    }
  }

  void Activity(const trace::GpuActivityRecord& a, const reader::InternTables& t) {
    if (!IsDeviceWork(FromSchema(a.kind)) || (a.start_ns == 0 && a.end_ns == 0)) return;
    ++stats_.gpu_activities;
    if (a.device != last_device_ || a.stream != last_stream_ || streams_.empty()) {
      streams_[a.device].insert(a.stream);
      last_device_ = a.device;
      last_stream_ = a.stream;
    }
    FlowEnd here{d_.GpuPid(a.device), d_.StreamTid(a.stream), static_cast<TimeNs>(a.start_ns)};
    // The model's tables convert the chunk's launch configurations (defined in it or before).
    const LaunchConfig* config = a.launch_config != 0 ? model_.LaunchConfigOf(a.launch_config) : nullptr;
    w_.Complete(here.pid, here.tid, here.ts, static_cast<TimeNs>(a.end_ns - a.start_ns), d_.ActivityName(a, t),
                d_.ActivityCategory(a), d_.ActivityArgs(a, config));
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

  void Connect(uint32_t correlation, const FlowEnd& call, const FlowEnd& activity, std::string_view name) {
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
  const TraceTables& model_;
  TraceEventExportStats& stats_;
  int64_t host_pid_ = 0;
  absl::flat_hash_map<uint32_t, PendingCall> calls_;
  absl::flat_hash_map<uint32_t, FlowEnd> activities_;
  absl::flat_hash_map<uint32_t, std::string> stacks_;  // by stack, at stacks_revision_
  uint64_t stacks_revision_ = 0;
  absl::flat_hash_set<uint32_t> matched_;
  std::set<uint64_t> threads_;
  std::map<uint32_t, std::set<uint32_t>> streams_;
  uint64_t last_thread_ = 0;                        // in threads_ (unless it is empty)
  uint32_t last_device_ = 0, last_stream_ = 0;      // in streams_ (unless it is empty)
};

// An idle interval's args: the analysis's evidence, its causes, and the resuming call and its
// site, the synchronising call before it. The parts read from the tables (a call's name, a
// stack's site frame as reports show it: stack_view.h) are kept per function and stack while the
// tables stay as they were (reader::InternTables::revision): resolving a stack and finding its
// site for every interval was a third of an export's time, for the few stacks a job has.
class IdleArgsWriter {
 public:
  IdleArgsWriter(const TraceTables& tables, const reader::InternTables& reader_tables)
      : tables_(tables), reader_tables_(reader_tables) {}

  std::string Args(const IntervalVerdict& v, const TraceAnalyzer& analyzer) {
    if (revision_ != reader_tables_.revision()) {
      revision_ = reader_tables_.revision();
      resume_calls_.clear();
      resume_sites_.clear();
      after_syncs_.clear();
    }
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
      // Named as the report names its resume sites: the site frame of the stack as reports show
      // it, so a stripped library's frame reads "libjpeg.so.62+?" in both.
      auto [call, new_call] = resume_calls_.try_emplace(v.resume->function);
      if (new_call) call->second = absl::StrCat(",\"resume_call\":", JsonQuote(tables_.FunctionName(v.resume->function)));
      args += call->second;
      auto [site, new_site] = resume_sites_.try_emplace(v.resume->stack);
      if (new_site) {
        FrameInfo f = SiteFrame(ViewStack(tables_.ResolveStack(v.resume->stack)));
        if (!f.function.empty()) site->second = absl::StrCat(",\"resume_site\":", JsonQuote(f.function));
      }
      args += site->second;
    }
    if (v.after_sync && v.has_preceding) {
      auto [sync, inserted] = after_syncs_.try_emplace(uint64_t{v.preceding->function} << 32 | v.preceding->stack);
      if (inserted) {
        FrameInfo f = SiteFrame(ViewStack(tables_.ResolveStack(v.preceding->stack)));
        std::string site = tables_.FunctionName(v.preceding->function);
        if (!f.function.empty()) absl::StrAppend(&site, " at ", f.function);
        if (!f.file.empty()) absl::StrAppend(&site, " (", f.file, ":", f.line, ")");
        sync->second = absl::StrCat(",\"after_sync\":", JsonQuote(site));
      }
      args += sync->second;
    }
    args += "}";
    return args;
  }

 private:
  const TraceTables& tables_;
  const reader::InternTables& reader_tables_;
  uint64_t revision_ = 0;
  absl::flat_hash_map<uint32_t, std::string> resume_calls_;   // by function: ,"resume_call":...
  absl::flat_hash_map<uint32_t, std::string> resume_sites_;   // by stack: ,"resume_site":... or ""
  absl::flat_hash_map<uint64_t, std::string> after_syncs_;    // by function and stack
};

// The export as an observer of the one pass: the records as written go out as they are read,
// the idle intervals as the analysis classifies them (among the records: a viewer orders a file's
// events by time, track by track), then the devices' names. Nothing is held per event: a trace
// of 10 M events has millions of intervals.
class TraceEventObserver final : public TraceObserver {
 public:
  TraceEventObserver(std::ostream* out, const TraceEventDialect& dialect, std::string source)
      : out_(out), d_(dialect), source_(std::move(source)) {}

  void BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer& analyzer) override {
    if (importer.imported()) {  // another format: written from its model records
      imported_ = std::make_unique<ImportedTraceEventObserver>(
          out_, d_.ImportedAsKineto() ? ImportedExportLayout::kKineto : ImportedExportLayout::kChrome);
      imported_->BeginTrace(index, importer, analyzer);
      return;
    }
    importer_ = &importer;
    analyzer_ = &analyzer;
    const tr::TraceHeader& header = importer.reader().header();
    // First the marker that says gsanalyze wrote this from `source_` (export_marker.h).
    const std::string leading = d_.LeadingMembers(header);
    w_ = std::make_unique<ChromeTraceWriter>(
        out_, absl::StrCat(ExportMarkerMember(source_), leading.empty() ? "" : ",\n", leading));
    w_->set_time_origin(d_.TimeOrigin(header));
    const int64_t host_pid = header.pid();
    w_->ProcessName(host_pid, absl::StrCat("pid ", header.pid(), header.host_name().empty() ? "" : " on ",
                                           header.host_name()));
    w_->ProcessSortIndex(host_pid, 0);
    records_ = std::make_unique<RecordPass>(w_.get(), d_, importer.tables(), &stats_);
    idle_args_ = std::make_unique<IdleArgsWriter>(importer.tables(), importer.reader().tables());
    records_->Begin(host_pid);
    if (d_.FillCounter())
      fill_ = std::make_unique<FillCounterTrack>(w_.get(), [this](uint32_t device) { return d_.GpuPid(device); });
  }
  void OnChunk(const reader::ChunkEvents& events, const reader::InternTables& tables) override {
    records_->Chunk(events, tables);
  }
  RecordSink* records() override { return imported_ != nullptr ? imported_->records() : nullptr; }
  void OnIdleInterval(uint32_t device, const IntervalVerdict& v) override {
    if (imported_ != nullptr) return imported_->OnIdleInterval(device, v);
    devices_.insert(device);
    ++stats_.idle_intervals;
    stats_.idle_ns += v.length();
    w_->Complete(d_.GpuPid(device), d_.IdleTid(), v.start, v.length(), CauseName(v.cause), d_.IdleCategory(),
                 idle_args_->Args(v, *analyzer_));
  }
  void OnFillPiece(uint32_t device, const FillPiece& piece) override {
    if (imported_ != nullptr) return imported_->OnFillPiece(device, piece);
    if (fill_ != nullptr) fill_->Add(device, piece);
  }
  void EndTrace(size_t index, const TraceImporter& importer, const TraceResult& result) override {
    if (imported_ != nullptr) return imported_->EndTrace(index, importer, result);
    const reader::TraceReader& reader = importer.reader();
    records_->Finish(reader.tables());
    for (const auto& [device, streams] : records_->streams()) devices_.insert(device);
    if (fill_ != nullptr) {
      fill_->Finish();
      stats_.fill_samples = fill_->samples();
    }
    std::map<uint32_t, std::string> names;
    for (const tr::DeviceInfo& d : reader.devices()) names[d.index()] = d.name();
    for (uint32_t d : devices_) {
      const std::string& name = names[d];
      w_->ProcessName(d_.GpuPid(d),
                      absl::StrCat("GPU ", d, name.empty() ? "" : " (", name, name.empty() ? "" : ")"));
      w_->ProcessSortIndex(d_.GpuPid(d), 1 + d);
      w_->ThreadName(d_.GpuPid(d), d_.IdleTid(), absl::StrCat("GPU ", d, " idle"));
      w_->ThreadSortIndex(d_.GpuPid(d), d_.IdleTid(), -1);
    }
    closed_ = w_->Close(d_.TrailingMembers(reader.header(), importer.info().devices));
    stats_.events = w_->events();
  }

  // After the pass: the stats, or why the file could not be written.
  absl::StatusOr<TraceEventExportStats> Result() const {
    if (imported_ != nullptr) return imported_->Result();
    if (!closed_) return absl::InternalError("write failed");
    return stats_;
  }

 private:
  std::ostream* out_;
  const TraceEventDialect& d_;
  const std::string source_;  // the .gstrace's path
  const TraceImporter* importer_ = nullptr;
  const TraceAnalyzer* analyzer_ = nullptr;
  std::unique_ptr<ChromeTraceWriter> w_;
  std::unique_ptr<RecordPass> records_;
  std::unique_ptr<IdleArgsWriter> idle_args_;
  std::unique_ptr<FillCounterTrack> fill_;  // the dialect's FillCounter()
  TraceEventExportStats stats_;
  std::set<uint32_t> devices_;
  bool closed_ = false;
  std::unique_ptr<ImportedTraceEventObserver> imported_;  // a trace of another format
};

}  // namespace

absl::StatusOr<TraceEventExportStats> ExportTraceEvents(const std::string& trace_path, std::ostream* out,
                                                        const TraceEventDialect& dialect,
                                                        const AnalysisOptions& options) {
  TraceEventObserver observer(out, dialect, trace_path);
  AnalyzeHooks hooks;
  hooks.observers = {&observer};
  if (absl::StatusOr<Analysis> analysis = AnalyzeTraces({trace_path}, options, hooks); !analysis.ok()) {
    return analysis.status();
  }
  return observer.Result();
}

}  // namespace gs::analyzer
