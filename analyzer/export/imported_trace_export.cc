#include "analyzer/export/imported_trace_export.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/classify/cause.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/export/chrome_trace_writer.h"
#include "analyzer/export/kineto_export.h"
#include "analyzer/export/kineto_launch_args.h"
#include "analyzer/model/importer.h"

namespace gs::analyzer {

namespace {

constexpr size_t kMaxStackFrames = 24;

bool IsFlowSource(ApiClass c) { return c == ApiClass::kLaunch || c == ApiClass::kMemcpy || c == ApiClass::kMemset; }

}  // namespace

// Writes each record as it goes by on its way to the analysis (the pass delivers it there).
class ImportedTraceEventObserver::ExportSink final : public RecordSink {
 public:
  ExportSink(std::unique_ptr<ChromeTraceWriter> w, ImportedExportLayout layout, const TraceTables& tables,
             int64_t host_pid, TraceEventExportStats* stats)
      : writer_(std::move(w)), w_(*writer_), kineto_(layout == ImportedExportLayout::kKineto), t_(tables),
        host_pid_(host_pid), stats_(*stats) {}

  ChromeTraceWriter& writer() { return w_; }

  int64_t DevicePid(uint32_t device) const { return kineto_ ? int64_t{device} : GpuPid(device); }
  int64_t StreamTrack(uint32_t stream) const { return kineto_ ? int64_t{stream} : StreamTid(stream); }
  int64_t IdleTrack() const { return kineto_ ? kIdleTidKineto : kIdleTid; }

  void OnApiCall(const ApiCall& c) override {
    ++stats_.api_calls;
    threads_.insert(c.thread);
    const std::string name = t_.FunctionName(c.function);
    std::string args = absl::StrCat("{\"correlation\":", c.correlation);
    if (c.bytes) absl::StrAppend(&args, ",\"bytes\":", c.bytes);
    if (c.stack) absl::StrAppend(&args, ",\"stack\":", StackJson(c.stack));
    args += "}";
    const auto tid = static_cast<int64_t>(c.thread);
    w_.Complete(host_pid_, tid, c.enter_ns, c.exit_ns - c.enter_ns, name, kineto_ ? "cuda_runtime" : "cuda_api", args);
    if (c.correlation != 0 && IsFlowSource(c.api_class)) calls_[c.correlation] = {tid, c.enter_ns, name};
  }
  void OnActivity(const GpuActivity& a) override {
    if (!IsDeviceWork(a.kind)) return;
    ++stats_.gpu_activities;
    streams_[a.device].insert(a.stream);
    std::string name;
    const char* cat = "kernel";
    if (a.kind == ActivityKind::kMemcpy) {
      name = absl::StrCat("Memcpy ", CopyDirectionName(a.direction));
      cat = kineto_ ? "gpu_memcpy" : "memcpy";
    } else if (a.kind == ActivityKind::kMemset) {
      name = "Memset";
      cat = kineto_ ? "gpu_memset" : "memset";
    } else {
      name = t_.StringValue(a.name);
      if (name.empty()) name = "kernel";
    }
    std::string args = absl::StrCat("{\"correlation\":", a.correlation, ",\"stream\":", a.stream);
    if (kineto_) absl::StrAppend(&args, ",\"device\":", a.device);
    if (a.bytes) absl::StrAppend(&args, ",\"bytes\":", a.bytes);
    // The launch configuration under the PyTorch profiler's own arg names, so that a re-export
    // keeps what its readers (HTA, TensorBoard, gsanalyze) size kernels by.
    if (const LaunchConfig* c = a.launch_config ? t_.LaunchConfigOf(a.launch_config) : nullptr)
      AppendLaunchArgs(*c, &args);
    args += "}";
    const int64_t pid = DevicePid(a.device), tid = StreamTrack(a.stream);
    w_.Complete(pid, tid, a.start_ns, a.end_ns - a.start_ns, name, cat, args);
    if (a.correlation == 0) return;
    auto call = calls_.find(a.correlation);
    if (call == calls_.end()) return;
    w_.Flow(++flow_id_, host_pid_, call->second.tid, call->second.ts, pid, tid, a.start_ns, call->second.name,
            kineto_ ? "ac2g" : "launch");
    ++stats_.flows;
    calls_.erase(call);
  }
  void OnSample(const Sample&) override {}
  void OnMemoryEvent(const MemoryEvent&) override {}

  void Names(const TraceInfo& info) {
    for (uint64_t tid : threads_) {
      std::string name = t_.ThreadName(tid);
      w_.ThreadName(host_pid_, static_cast<int64_t>(tid), name.empty() ? absl::StrCat("thread ", tid) : name);
    }
    std::map<uint32_t, std::string> device_names;
    for (const DeviceDescription& d : info.devices) device_names[d.index] = d.name;
    for (const auto& [device, streams] : streams_) {
      const std::string& dn = device_names[device];
      w_.ProcessName(DevicePid(device), dn.empty() ? absl::StrCat("GPU ", device) : absl::StrCat("GPU ", device, " (", dn, ")"));
      w_.ThreadName(DevicePid(device), IdleTrack(), absl::StrCat("GPU ", device, " idle"));
      for (uint32_t s : streams) w_.ThreadName(DevicePid(device), StreamTrack(s), absl::StrCat("stream ", s));
    }
  }

 private:
  const std::string& StackJson(uint32_t stack) {
    auto [it, inserted] = stacks_.try_emplace(stack);
    if (inserted) {
      std::vector<FrameInfo> frames = t_.ResolveStack(stack);
      std::string& s = it->second;
      s = "[";
      for (size_t i = 0; i < frames.size() && i < kMaxStackFrames; ++i) {
        std::string f = frames[i].function;
        if (!frames[i].file.empty()) absl::StrAppend(&f, " (", frames[i].file, ":", frames[i].line, ")");
        absl::StrAppend(&s, i ? "," : "", JsonQuote(f));
      }
      if (frames.size() > kMaxStackFrames) absl::StrAppend(&s, ",\"...\"");
      s += "]";
    }
    return it->second;
  }
  struct PendingCall {
    int64_t tid;
    TimeNs ts;
    std::string name;
  };
  std::unique_ptr<ChromeTraceWriter> writer_;
  ChromeTraceWriter& w_;
  const bool kineto_;
  const TraceTables& t_;
  const int64_t host_pid_;
  TraceEventExportStats& stats_;
  uint64_t flow_id_ = 0;
  absl::flat_hash_map<uint32_t, PendingCall> calls_;
  absl::flat_hash_map<uint32_t, std::string> stacks_;
  std::set<uint64_t> threads_;
  std::map<uint32_t, std::set<uint32_t>> streams_;
};

ImportedTraceEventObserver::ImportedTraceEventObserver(std::ostream* out, ImportedExportLayout layout)
    : out_(out), layout_(layout) {}

ImportedTraceEventObserver::~ImportedTraceEventObserver() = default;

void ImportedTraceEventObserver::BeginTrace(size_t, const TraceImporter& importer, const TraceAnalyzer& analyzer) {
  analyzer_ = &analyzer;
  const TraceInfo& info = importer.info();
  std::string leading = "\"displayTimeUnit\":\"ns\"";
  if (layout_ == ImportedExportLayout::kKineto) {
    leading = absl::StrCat("\"schemaVersion\":1,\"distributedInfo\":{\"rank\":", info.rank.value_or(0), "}");
  }
  sink_ = std::make_unique<ExportSink>(std::make_unique<ChromeTraceWriter>(out_, leading), layout_, importer.tables(),
                                       info.pid, &stats_);
  if (layout_ == ImportedExportLayout::kChrome)
    fill_ = std::make_unique<FillCounterTrack>(&sink_->writer(), [this](uint32_t d) { return sink_->DevicePid(d); });
}

RecordSink* ImportedTraceEventObserver::records() { return sink_.get(); }

void ImportedTraceEventObserver::OnIdleInterval(uint32_t device, const IntervalVerdict& v) {
  ++stats_.idle_intervals;
  stats_.idle_ns += v.length();
  const std::string evidence =
      analyzer_->Evidence(v, v.has_resume ? v.resume : nullptr, v.has_preceding ? v.preceding : nullptr);
  const bool kineto = layout_ == ImportedExportLayout::kKineto;
  sink_->writer().Complete(sink_->DevicePid(device), sink_->IdleTrack(), v.start, v.length(), CauseName(v.cause),
                           kineto ? "gpustall_idle" : "idle", absl::StrCat("{\"evidence\":", JsonQuote(evidence), "}"));
}

void ImportedTraceEventObserver::OnFillPiece(uint32_t device, const FillPiece& piece) {
  if (fill_ != nullptr) fill_->Add(device, piece);
}

void ImportedTraceEventObserver::EndTrace(size_t, const TraceImporter& importer, const TraceResult&) {
  const TraceInfo& info = importer.info();
  ChromeTraceWriter& w = sink_->writer();
  if (fill_ != nullptr) {
    fill_->Finish();
    stats_.fill_samples = fill_->samples();
  }
  w.ProcessName(info.pid, absl::StrCat("pid ", info.pid));
  sink_->Names(info);
  std::string trailing;
  if (layout_ == ImportedExportLayout::kKineto) {
    // The devices as the PyTorch profiler describes them (cudaDeviceProp's field names), SM limits
    // included where the trace gave them, so that a re-export sizes kernels as the original did.
    std::string props;
    for (const DeviceDescription& d : info.devices)
      absl::StrAppend(&props, props.empty() ? "" : ",", "\n", DevicePropertiesJson(d));
    trailing = absl::StrCat("\"deviceProperties\":[", props, "]");
  }
  closed_ = w.Close(trailing);
  stats_.events = w.events();
}

absl::StatusOr<TraceEventExportStats> ImportedTraceEventObserver::Result() const {
  if (!closed_) return absl::InternalError("write failed");
  return stats_;
}

}  // namespace gs::analyzer
