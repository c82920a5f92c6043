// internal.h — what the driver's source files share with each other (not exported).
//
// Ownership: every object (devices, streams, events, ops) is created once and, except for ops,
// never freed before exit: handles stay valid for tools that keep them, and process exit needs
// no teardown order.
#ifndef GPUSTALL_TESTS_SIMGPU_DRIVER_INTERNAL_H_
#define GPUSTALL_TESTS_SIMGPU_DRIVER_INTERNAL_H_

#include <string>

#include "driver/driver.h"

namespace simgpu {

// Extra facts about a reported op that CUPTI's record has no field for; they go to the truth log.
struct OpTruthExtra {
  const char* demangled = nullptr;  // kernels
  uint64_t submit_ns = 0;           // when the host call handed it to the device
  uint32_t submit_tid = 0;          // gettid() of the submitting thread
  bool fault = false;               // kernel raised the sticky error
  const char* api = nullptr;        // host call for host-side records
  // Device ops: the outermost API call that submitted it (CUPTI function name) and its domain
  // (1 driver, 2 runtime; 0 unknown). Truth log: submit_api, submit_domain.
  const char* submit_api = nullptr;
  int submit_domain = 0;
};

// Sends one record to the tool hooks (if installed) and to the truth log (if enabled).
void ReportOp(const SimgpuOpRecord& rec, const OpTruthExtra& extra);

// Truth log: opened at init when SIMGPU_TRUTH is set; Flush writes what is buffered.
void TruthOpen(const std::string& path);
void TruthFlush();
bool TruthFlushDue();  // enough is buffered to write it now
bool TruthEnabled();

// Timeline: creates the devices and starts the device thread (init.cc calls it once).
void TimelineStart(int devices);
// At exit: waits (bounded) for submitted work, then stops reporting.
void TimelineDrainAtExit();
// Returns once every op that ended by now is reported (simgpuDriverReportEnded).
void ReportEndedOps();

// Memory accounting per device, used by DeviceMalloc and the capacity setter.
size_t DeviceMemoryUsed(int device);
void FreeAllOnDevice(int device);  // cudaDeviceReset

// Kernel model: (re)reads SIMGPU_KERNEL_DURATIONS / SIMGPU_FAULT_KERNEL from the config.
uint64_t ModelKernelDuration(const std::string& mangled, const std::string& demangled,
                             bool* faults);
std::string Demangle(const char* name);
// Parses "2500", "2.5us", "3ms", "1s" into nanoseconds; exits with a message naming `var` if bad.
uint64_t ParseDurationNs(const char* var, const char* text);

// Copy bandwidths (bytes/s), adjustable at run time by simgpuSetCopyBandwidth.
double CopyBandwidth(int memcpy_kind, bool pinned);

// ---- stream capture and graphs: what timeline.cc and graphs.cc share ----------------------------

// timeline.cc: setting the graph `s` is capturing into (CapturingGraph, driver.h, reads it).
void SetCapturingGraph(Stream* s, Graph* g);
bool IsLegacyStream(const Stream* s);
// cudaSuccess when `s` is not capturing; else invalidates the capture and returns
// cudaErrorStreamCaptureUnsupported (the caller does nothing else).
cudaError_t RefuseWhileCapturing(Stream* s);
// Schedules one kernel on `s` without the launch call's host cost (a graph launch pays once);
// graph_id / graph_node_id go into its CUPTI record (0: not from a graph).
cudaError_t ScheduleKernel(Stream* s, const LaunchArgs& a, uint32_t corr, uint32_t graph_id,
                           uint64_t graph_node_id);
// Schedules a copy or memset node's op (`proto`, as the capture built it) on `s`, like
// ScheduleKernel.
cudaError_t ScheduleCapturedOp(Stream* s, const OpHandle& proto, uint32_t corr, uint32_t graph_id,
                               uint64_t graph_node_id);
// graphs.cc: appends a kernel node, or a copy or memset node (`op`, validated and timed but not
// scheduled; `node_type` a CUgraphNodeType), to the graph being captured; marks a capture invalid.
cudaError_t CaptureKernel(Graph* g, const LaunchArgs& a);
cudaError_t CaptureOp(Graph* g, std::shared_ptr<OpHandle> op, int node_type);
void InvalidateCapture(Graph* g);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_DRIVER_INTERNAL_H_
