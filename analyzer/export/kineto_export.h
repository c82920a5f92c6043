// kineto_export.h — `gsanalyze export --kineto`: one trace in the JSON dialect that the PyTorch
// profiler (Kineto) writes, so that TensorBoard's profiler plugin and Holistic Trace Analysis
// (HTA) load it as if torch.profiler had written it.
//
// The same walk as the Chrome export (trace_event_export.h), spelled as Kineto spells it:
//   top level  "otherData" (gsanalyze and the source .gstrace, export_marker.h), "schemaVersion",
//              "distributedInfo" {"rank", "world_size", ...} from the trace
//              header (rank 0 of 1 outside a job: HTA needs a rank), "traceEvents", then
//              "deviceProperties" (every device the trace announced, with its SM count, compute
//              capability and SM limits under cudaDeviceProp's names: kineto_launch_args.h),
//              "traceName", "displayTimeUnit": "ms", "baseTimeNanoseconds".
//   time       "ts" in µs (3 decimals) relative to the recording's start; baseTimeNanoseconds
//              is that start on CLOCK_REALTIME, so ts·1000 + base is Unix time in ns (HTA's
//              trace_event_timestamp_to_unixtime_ns).
//   host       pid = the process, tid = the OS thread. CUDA calls: cat "cuda_runtime", args
//              "correlation", "External id" (= correlation: there are no cpu_op events to point
//              at; it pairs a call with its GPU work as Kineto's does), "bytes"/"result"/"stack"
//              where known. NVTX ranges: cat "user_annotation" (Kineto's category for ranges
//              that a user opened). No "stream" arg on host events: HTA takes any event with
//              stream >= 0 and a correlation for GPU work.
//   device     pid = device index, tid = CUPTI stream id (Kineto's layout). cat "kernel" (also
//              for collectives: NCCL work is kernels), "gpu_memcpy" named "Memcpy HtoD
//              (Pinned -> Device)", "gpu_memset" named "Memset (Device)"; args "device",
//              "context", "stream", "correlation", "External id", for copies/memsets "bytes"
//              and "memory bandwidth (GB/s)", for kernels their launch configuration ("grid",
//              "block", "registers per thread", "shared memory": kineto_launch_args.h), so that
//              the export re-read by gsanalyze gives the same SM coverage and kernel_configs[].
//   flows      "ac2g" (cat and name), id = correlation, "s" on the call, "f" (bp "e") on the work.
//   idle       gsanalyze's steady-state idle intervals: cat "gpustall_idle" on the device's pid,
//              tid kIdleTidKineto, name = cause, no stream arg (so HTA's kernel-based breakdowns
//              ignore them; TensorBoard shows them as a track of their own).
// Not written: cpu_op/python_function events (the trace has call stacks, not operator spans),
// ProfilerStep#N annotations (HTA then analyses the whole trace instead of whole iterations),
// Kineto's own occupancy estimates ("blocks per SM", "est. achieved occupancy %"), the Chrome
// export's "SM coverage" counter track (a file HTA reads keeps to the event kinds Kineto writes).
// Kernel names are demangled as Kineto writes them, so a re-read report names them so too.
#ifndef GPUSTALL_ANALYZER_EXPORT_KINETO_EXPORT_H_
#define GPUSTALL_ANALYZER_EXPORT_KINETO_EXPORT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/options/options.h"
#include "analyzer/export/trace_event_export.h"

namespace gs::analyzer {

// Above every 32-bit CUPTI stream id, so the idle track never shares a stream's tid.
inline constexpr int64_t kIdleTidKineto = int64_t{1} << 32;

// Errors as ExportChromeTrace's.
absl::StatusOr<TraceEventExportStats> ExportKinetoTrace(const std::string& trace_path, std::ostream* out,
                                                        const AnalysisOptions& options = AnalysisOptions());

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_KINETO_EXPORT_H_
