// trace_event_export.h — one trace as trace-event JSON, in a dialect: the walk that both
// `export --chrome` (chrome_export.h) and `export --kineto` (kineto_export.h) share.
//
// The walk decides WHAT is written; a TraceEventDialect decides HOW it is spelled:
//   - host: one track per host thread of the traced process (pid = its pid, tid = OS tid), every
//     CUDA API call as an "X" slice, every NVTX range as an "X" slice;
//   - device: one track per (device, CUPTI stream) holding kernels/copies/memsets/collectives
//     (kernels with their launch configuration under the PyTorch profiler's arg names,
//     kineto_launch_args.h), one track per device holding gsanalyze's steady-state idle intervals
//     (name = cause, args = evidence), where the dialect asks for it a counter of how full the
//     kernels kept the device (fill_counter_track.h), process/thread names and sort indices;
//   - flows: one arrow from each launch/copy/memset call to the first GPU activity with its
//     correlation id.
// The dialect chooses the file's top-level members, the time base, pids/tids, categories, event
// names and args. How to add a dialect: (1) subclass TraceEventDialect in a file of its own,
// (2) give it an Export* entry point that calls ExportTraceEvents, (3) add a CLI flag in
// cli/args.cc and a branch in cli/commands/export_command.cc, (4) a structural test beside it.
//
// A trace of another format (a PyTorch profiler JSON, analyzer/import/) goes the same way, on the
// same pass, written from its model records (imported_trace_export.h).
//
// One pass over the file, AnalyzeTraces' own (an observer, analysis/trace_observer.h): the records
// as written (names, NVTX, flows) go out as they are read, and the idle intervals come from the
// analysis itself (the same gaps and verdicts as the report), held until the records are written.
// Memory: unmatched correlations, one rendered stack per distinct stack, the rendered idle
// intervals, the analysis' own. Thread safety: none (a dialect is immutable and may be shared).
#ifndef GPUSTALL_ANALYZER_EXPORT_TRACE_EVENT_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_TRACE_EVENT_EXPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzer/options/options.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"
#include "proto/records.h"

namespace gs::reader {
class InternTables;
}

namespace gs::analyzer {

struct TraceEventExportStats {
  uint64_t events = 0;           // JSON events written
  uint64_t api_calls = 0;
  uint64_t gpu_activities = 0;   // kernels, copies, memsets, collectives with times
  uint64_t flows = 0;            // s/f pairs
  uint64_t nvtx_ranges = 0;
  uint64_t idle_intervals = 0;
  TimeNs idle_ns = 0;
  uint64_t fill_samples = 0;     // "SM coverage" counter events (fill_counter_track.h)
};

class TraceEventDialect {
 public:
  virtual ~TraceEventDialect() = default;

  // Top-level JSON members ("\"key\":value,...", no trailing comma; "" for none) before and after
  // "traceEvents". The trailing ones see every device the trace announced (some arrive in chunks),
  // with the SM limits the model read from them.
  virtual std::string LeadingMembers(const gpustall::trace::TraceHeader& header) const = 0;
  virtual std::string TrailingMembers(const gpustall::trace::TraceHeader& header,
                                      const std::vector<DeviceDescription>& devices) const = 0;
  // Subtracted from every timestamp (CLOCK_MONOTONIC ns in the trace).
  virtual TimeNs TimeOrigin(const gpustall::trace::TraceHeader& header) const = 0;

  // Tracks.
  virtual int64_t GpuPid(uint32_t device) const = 0;
  virtual int64_t StreamTid(uint32_t stream) const = 0;
  virtual int64_t IdleTid() const = 0;

  // Categories.
  virtual std::string_view CallCategory(const trace::ApiCallRecord& call) const = 0;
  virtual std::string_view ActivityCategory(const trace::GpuActivityRecord& activity) const = 0;
  virtual std::string_view NvtxCategory() const = 0;
  virtual std::string_view IdleCategory() const = 0;
  virtual std::string_view FlowCategory() const = 0;

  // Event names. The default: the kernel's name, "Memcpy H2D", "Memset".
  virtual std::string ActivityName(const trace::GpuActivityRecord& activity,
                                   const reader::InternTables& tables) const;
  // The flow's name and id: Chrome names it after the call and numbers flows 1, 2, ... The name
  // is the call's or lives as long as the dialect.
  virtual std::string_view FlowName(std::string_view call_name) const { return call_name; }
  virtual uint64_t FlowId(uint32_t correlation, uint64_t sequence) const {
    (void)correlation;
    return sequence;
  }

  // Args objects ("{...}"). `stack_json` is the call's stack as a JSON array of frame strings
  // (leaf first), or "" when the call has none.
  // `config`: a kernel's launch configuration (null when the trace has none for it).
  virtual std::string CallArgs(const trace::ApiCallRecord& call, absl::string_view stack_json) const = 0;
  virtual std::string ActivityArgs(const trace::GpuActivityRecord& activity, const LaunchConfig* config) const = 0;

  // Whether each device gets the "SM coverage" counter track (fill_counter_track.h).
  virtual bool FillCounter() const { return false; }

  // A trace of another format (analyzer/import/: model records, not records as written) is
  // written by imported_trace_export.h, in Chrome's track layout or, when this is true, Kineto's.
  virtual bool ImportedAsKineto() const { return false; }
};

// Errors as AnalyzeTraces' (not a trace, newer version, unreadable; one line naming the file),
// or an I/O error writing `out`. Nothing is written to `out` before the trace has been opened.
absl::StatusOr<TraceEventExportStats> ExportTraceEvents(const std::string& trace_path, std::ostream* out,
                                                        const TraceEventDialect& dialect,
                                                        const AnalysisOptions& options = AnalysisOptions());

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_TRACE_EVENT_EXPORT_H_
