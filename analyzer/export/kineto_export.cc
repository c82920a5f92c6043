#include "analyzer/export/kineto_export.h"

#include <cxxabi.h>

#include <array>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/export/chrome_trace_writer.h"
#include "analyzer/export/kineto_launch_args.h"
#include "analyzer/reader/intern_tables.h"

namespace gs::analyzer {

namespace tr = gpustall::trace;

namespace {

// Kineto's spellings of CUPTI's memcpy kinds (CUpti_ActivityMemcpyKind, 0..10) and of our MemKind.
constexpr std::array<const char*, 11> kMemcpyKinds = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
const char* MemcpyKind(uint8_t k) { return k < kMemcpyKinds.size() ? kMemcpyKinds[k] : "Unknown"; }
const char* MemoryKind(tr::MemKind k) {
  switch (k) {
    case tr::MEM_KIND_PAGEABLE: return "Pageable";
    case tr::MEM_KIND_PINNED: return "Pinned";
    case tr::MEM_KIND_DEVICE: return "Device";
    case tr::MEM_KIND_ARRAY: return "Array";
    case tr::MEM_KIND_MANAGED: return "Managed";
    default: return "Unknown";
  }
}

class KinetoDialect final : public TraceEventDialect {
 public:
  bool ImportedAsKineto() const override { return true; }
  // distributedInfo's members carry a space after the colon: HTA finds a file's rank with the
  // regular expression "rank":\s+(\d+) before it parses anything (hta/common/trace_file.py).
  std::string LeadingMembers(const tr::TraceHeader& h) const override {
    std::string info = absl::StrCat("\"rank\": ", h.has_rank() ? h.rank() : 0, ", \"world_size\": ",
                                    h.has_world_size() ? h.world_size() : 1);
    if (h.has_local_rank()) absl::StrAppend(&info, ", \"local_rank\": ", h.local_rank());
    if (h.has_local_world_size()) absl::StrAppend(&info, ", \"local_world_size\": ", h.local_world_size());
    if (!h.job_id().empty()) absl::StrAppend(&info, ", \"job_id\": ", JsonQuote(h.job_id()));
    return absl::StrCat("\"schemaVersion\":1,\n\"distributedInfo\": {", info, "}");
  }
  std::string TrailingMembers(const tr::TraceHeader& h, const std::vector<DeviceDescription>& devices) const override {
    std::string props;
    for (const DeviceDescription& d : devices)
      absl::StrAppend(&props, props.empty() ? "" : ",", "\n", DevicePropertiesJson(d));
    return absl::StrCat("\"deviceProperties\":[", props, "],\n\"traceName\":",
                        JsonQuote(absl::StrCat("gpustall pid ", h.pid(), h.host_name().empty() ? "" : " on ",
                                               h.host_name())),
                        ",\n\"displayTimeUnit\":\"ms\",\n\"baseTimeNanoseconds\":", BaseTime(h));
  }
  TimeNs TimeOrigin(const tr::TraceHeader& h) const override {
    return HasWallClock(h) ? static_cast<TimeNs>(h.start_clock().monotonic_ns()) : 0;
  }

  int64_t GpuPid(uint32_t device) const override { return device; }
  int64_t StreamTid(uint32_t stream) const override { return stream; }
  int64_t IdleTid() const override { return kIdleTidKineto; }

  std::string_view CallCategory(const trace::ApiCallRecord&) const override { return "cuda_runtime"; }
  std::string_view ActivityCategory(const trace::GpuActivityRecord& a) const override {
    switch (a.kind) {
      case tr::ACTIVITY_KIND_MEMCPY: return "gpu_memcpy";
      case tr::ACTIVITY_KIND_MEMSET: return "gpu_memset";
      default: return "kernel";
    }
  }
  std::string_view NvtxCategory() const override { return "user_annotation"; }
  std::string_view IdleCategory() const override { return "gpustall_idle"; }
  std::string_view FlowCategory() const override { return "ac2g"; }

  std::string ActivityName(const trace::GpuActivityRecord& a, const reader::InternTables& t) const override {
    switch (a.kind) {
      case tr::ACTIVITY_KIND_MEMCPY:
        return absl::StrCat("Memcpy ", MemcpyKind(a.copy_kind), " (", MemoryKind(a.src_kind), " -> ",
                            MemoryKind(a.dst_kind), ")");
      case tr::ACTIVITY_KIND_MEMSET: return absl::StrCat("Memset (", MemoryKind(a.dst_kind), ")");
      default: return Demangled(TraceEventDialect::ActivityName(a, t));
    }
  }
  std::string_view FlowName(std::string_view) const override { return "ac2g"; }
  uint64_t FlowId(uint32_t correlation, uint64_t) const override { return correlation; }

  std::string CallArgs(const trace::ApiCallRecord& c, absl::string_view stack_json) const override {
    std::string args = absl::StrCat("{\"External id\":", c.correlation_id, ",\"correlation\":", c.correlation_id);
    if (c.bytes) absl::StrAppend(&args, ",\"bytes\":", c.bytes);
    if (c.result) absl::StrAppend(&args, ",\"result\":", c.result);
    if (!stack_json.empty()) absl::StrAppend(&args, ",\"stack\":", stack_json);
    return args + "}";
  }
  std::string ActivityArgs(const trace::GpuActivityRecord& a, const LaunchConfig* config) const override {
    std::string args = absl::StrCat("{\"External id\":", a.correlation_id, ",\"device\":", a.device,
                                    ",\"context\":", a.context, ",\"stream\":", a.stream,
                                    ",\"correlation\":", a.correlation_id);
    if (a.kind == tr::ACTIVITY_KIND_MEMCPY || a.kind == tr::ACTIVITY_KIND_MEMSET) {
      const uint64_t dur = a.end_ns > a.start_ns ? a.end_ns - a.start_ns : 0;
      // bytes per ns is GB/s
      absl::StrAppend(&args, ",\"bytes\":", a.bytes, ",\"memory bandwidth (GB/s)\":",
                      absl::StrFormat("%.6g", dur ? static_cast<double>(a.bytes) / dur : 0.0));
    }
    if (config != nullptr) AppendLaunchArgs(*config, &args);
    return args + "}";
  }

 private:
  // Kineto writes kernel names demangled ("normalize_batch(float*, int)"); CUPTI gives them mangled.
  static std::string Demangled(std::string name) {
    if (name.rfind("_Z", 0) != 0) return name;
    int status = 0;
    char* plain = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status == 0 && plain != nullptr) name = plain;
    std::free(plain);
    return name;
  }
  static bool HasWallClock(const tr::TraceHeader& h) {
    return h.has_start_clock() && h.start_clock().realtime_ns() != 0 && h.start_clock().monotonic_ns() != 0;
  }
  static uint64_t BaseTime(const tr::TraceHeader& h) { return HasWallClock(h) ? h.start_clock().realtime_ns() : 0; }
};

}  // namespace

absl::StatusOr<TraceEventExportStats> ExportKinetoTrace(const std::string& trace_path, std::ostream* out,
                                                        const AnalysisOptions& options) {
  static const KinetoDialect* const kDialect = new KinetoDialect();  // never destroyed
  return ExportTraceEvents(trace_path, out, *kDialect, options);
}

}  // namespace gs::analyzer
