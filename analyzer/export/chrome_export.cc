#include "analyzer/export/chrome_export.h"

#include "absl/strings/str_cat.h"
#include "analyzer/export/chrome_trace_writer.h"
#include "analyzer/export/kineto_launch_args.h"

namespace gs::analyzer {

namespace tr = gpustall::trace;

namespace {

// Chrome's dialect: absolute CLOCK_MONOTONIC microseconds, GPUs on pids of their own far above
// real pids, stream tids shifted by one so that tid 0 can hold the idle track.
class ChromeDialect final : public TraceEventDialect {
 public:
  std::string LeadingMembers(const tr::TraceHeader&) const override { return "\"displayTimeUnit\":\"ns\""; }
  std::string TrailingMembers(const tr::TraceHeader&, const std::vector<DeviceDescription>&) const override {
    return "";
  }
  TimeNs TimeOrigin(const tr::TraceHeader&) const override { return 0; }

  int64_t GpuPid(uint32_t device) const override { return analyzer::GpuPid(device); }
  int64_t StreamTid(uint32_t stream) const override { return analyzer::StreamTid(stream); }
  int64_t IdleTid() const override { return kIdleTid; }

  std::string_view CallCategory(const trace::ApiCallRecord&) const override { return "cuda_api"; }
  std::string_view ActivityCategory(const trace::GpuActivityRecord& a) const override {
    switch (a.kind) {
      case tr::ACTIVITY_KIND_KERNEL: return "kernel";
      case tr::ACTIVITY_KIND_MEMCPY: return "memcpy";
      case tr::ACTIVITY_KIND_MEMSET: return "memset";
      default: return "collective";
    }
  }
  std::string_view NvtxCategory() const override { return "nvtx"; }
  std::string_view IdleCategory() const override { return "idle"; }
  std::string_view FlowCategory() const override { return "launch"; }

  std::string CallArgs(const trace::ApiCallRecord& c, absl::string_view stack_json) const override {
    std::string args = absl::StrCat("{\"correlation\":", c.correlation_id);
    if (c.bytes) absl::StrAppend(&args, ",\"bytes\":", c.bytes);
    if (c.result) absl::StrAppend(&args, ",\"result\":", c.result);
    if (!stack_json.empty()) absl::StrAppend(&args, ",\"stack\":", stack_json);
    return args + "}";
  }
  std::string ActivityArgs(const trace::GpuActivityRecord& a, const LaunchConfig* config) const override {
    std::string args = absl::StrCat("{\"correlation\":", a.correlation_id, ",\"stream\":", a.stream);
    if (a.bytes) absl::StrAppend(&args, ",\"bytes\":", a.bytes);
    if (config != nullptr) AppendLaunchArgs(*config, &args);
    return args + "}";
  }
  bool FillCounter() const override { return true; }
};

}  // namespace

absl::StatusOr<ChromeExportStats> ExportChromeTrace(const std::string& trace_path, std::ostream* out,
                                                    const AnalysisOptions& options) {
  static const ChromeDialect* const kDialect = new ChromeDialect();  // never destroyed
  return ExportTraceEvents(trace_path, out, *kDialect, options);
}

}  // namespace gs::analyzer
