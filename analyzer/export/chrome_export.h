// chrome_export.h — `gsanalyze export --chrome`: one trace as Chrome trace-event JSON.
//
// Track layout (pids/tids are what Perfetto groups by):
//   pid = the traced process's pid ("<label>"): one tid per host thread (OS tid, named from the
//         trace), API calls as "X" slices (cat "cuda_api"; args: correlation, bytes, stack as
//         frame strings leaf first), NVTX ranges as "X" slices (cat "nvtx").
//   pid = kGpuPidBase + device ("GPU d (name)"): tid 0 "GPU d idle" holds every steady-state idle
//         interval (name = cause, args = evidence, split by cause, after-sync site); tid 1 +
//         CUPTI stream id ("stream s") holds kernels/copies/memsets (cat "kernel"/"memcpy"/...;
//         kernels' args add their launch configuration, "grid", "block", "registers per thread",
//         "shared memory", as the PyTorch profiler names them); the counter "SM coverage" (ph "C",
//         args {"share"}) says how full the kernels kept the device, stepping at kernel
//         boundaries (fill_counter_track.h: its integral is the report's sm_coverage_busy_ns).
//   Flow arrows ("s" on the call, "f" with bp "e" on the activity) join each launch/copy/memset
//   call to its first GPU activity by correlation id.
//
// The walk (two streaming passes: records, then the analysis' idle intervals) is shared with the
// Kineto export: trace_event_export.h. This file is the Chrome dialect of it.
#ifndef GPUSTALL_ANALYZER_EXPORT_CHROME_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_CHROME_EXPORT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/options/options.h"
#include "analyzer/export/trace_event_export.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

inline constexpr int64_t kGpuPidBase = 1'000'000'000;
inline constexpr int64_t kIdleTid = 0;
inline int64_t GpuPid(uint32_t device) { return kGpuPidBase + device; }
inline int64_t StreamTid(uint32_t stream) { return int64_t{1} + stream; }

using ChromeExportStats = TraceEventExportStats;

// Errors as AnalyzeTraces' (not a trace, newer version, unreadable; one line naming the file),
// or an I/O error writing `out`. Nothing is written to `out` before the trace has been opened.
absl::StatusOr<ChromeExportStats> ExportChromeTrace(const std::string& trace_path, std::ostream* out,
                                                    const AnalysisOptions& options = AnalysisOptions());

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_CHROME_EXPORT_H_
