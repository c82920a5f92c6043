// chrome_export.h — `gsanalyze export --chrome`: one trace as Chrome trace-event JSON.
//
// Track layout (pids/tids are what Perfetto groups by):
//   pid = the traced process's pid ("<label>"): one tid per host thread (OS tid, named from the
//         trace), API calls as "X" slices (cat "cuda_api"; args: correlation, bytes, stack as
//         frame strings leaf first), NVTX ranges as "X" slices (cat "nvtx").
//   pid = kGpuPidBase + device ("GPU d (name)"): tid 0 "GPU d idle" holds every steady-state idle
//         interval (name = cause, args = evidence, split by cause, after-sync site); tid 1 +
//         CUPTI stream id ("stream s") holds kernels/copies/memsets (cat "kernel"/"memcpy"/...).
//   Flow arrows ("s" on the call, "f" with bp "e" on the activity) join each launch/copy/memset
//   call to its first GPU activity by correlation id.
//
// Two streaming passes over the file: the records as they are (names, NVTX, flows), then the
// analysis itself for the idle intervals (TraceAnalyzer with an interval observer: the same gaps
// and verdicts as the report). Memory: unmatched
// correlations, one rendered stack per distinct stack, the analysis' sort window.
#ifndef GPUSTALL_ANALYZER_EXPORT_CHROME_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_CHROME_EXPORT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/analysis/options.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

inline constexpr int64_t kGpuPidBase = 1'000'000'000;
inline constexpr int64_t kIdleTid = 0;
inline int64_t GpuPid(uint32_t device) { return kGpuPidBase + device; }
inline int64_t StreamTid(uint32_t stream) { return int64_t{1} + stream; }

struct ChromeExportStats {
  uint64_t events = 0;           // JSON events written
  uint64_t api_calls = 0;
  uint64_t gpu_activities = 0;   // kernels, copies, memsets, collectives with times
  uint64_t flows = 0;            // s/f pairs
  uint64_t nvtx_ranges = 0;
  uint64_t idle_intervals = 0;
  TimeNs idle_ns = 0;
};

// Errors as AnalyzeTraces' (not a trace, newer version, unreadable; one line naming the file),
// or an I/O error writing `out`. Nothing is written to `out` before the trace has been opened.
absl::StatusOr<ChromeExportStats> ExportChromeTrace(const std::string& trace_path, std::ostream* out,
                                                    const AnalysisOptions& options = AnalysisOptions());

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_CHROME_EXPORT_H_
