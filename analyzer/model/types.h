// types.h — the analysis' own in-memory records (the "model" layer).
//
// The importer (model/importer.h) turns decoded trace records into these; every analysis works on
// them only, so the analysis and its tests never depend on the file format. Plain values, cheap to
// copy; enum values are the schema's (proto/gstrace.proto), tied to it enumerator by enumerator in
// schema_enums.h, through which the importer converts.
#ifndef GPUSTALL_ANALYZER_MODEL_TYPES_H_
#define GPUSTALL_ANALYZER_MODEL_TYPES_H_

#include <cstdint>

namespace gs::analyzer {

// Nanoseconds on the trace's clock (host CLOCK_MONOTONIC). Signed so that differences are safe.
using TimeNs = int64_t;

// What a host API call does (mirrors gpustall.trace.ApiClass).
enum class ApiClass : uint8_t {
  kOther = 0,
  kLaunch = 1,
  kMemcpy = 2,
  kMemset = 3,
  kMalloc = 4,
  kFree = 5,
  kHostAlloc = 6,
  kHostFree = 7,
  kStreamSync = 8,
  kDeviceSync = 9,
  kEventSync = 10,
  kStreamWaitEvent = 11,
  kQuery = 12,
  kEventRecord = 13,
};

// Host memory kinds (mirrors gpustall.trace.MemKind = CUpti_ActivityMemoryKind).
enum class MemKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
};

// Direction of a copy, independent of whether it came from cudaMemcpyKind or CUPTI's kind.
enum class CopyDirection : uint8_t {
  kUnknown = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kDeviceToDevice = 3,
  kHostToHost = 4,
  kPeerToPeer = 5,
};
inline constexpr int kNumCopyDirections = 6;

// Kind of a GPU activity (mirrors gpustall.trace.ActivityKind).
enum class ActivityKind : uint8_t {
  kUnspecified = 0,
  kKernel = 1,
  kMemcpy = 2,
  kMemset = 3,
  kSync = 4,
  kMemoryAlloc = 5,
  kMemoryFree = 6,
  kCollective = 7,
};

// One host-side CUDA API call of one thread.
struct ApiCall {
  TimeNs enter_ns = 0;
  TimeNs exit_ns = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t address = 0;
  uint64_t thread = 0;          // OS tid
  uint32_t correlation = 0;     // 0: none
  uint32_t stack = 0;           // StackTable id; 0: no stack
  uint32_t function = 0;        // TraceTables function (API name) id; 0: unknown
  int32_t result = 0;           // cudaError_t
  uint32_t device = 0;
  ApiClass api_class = ApiClass::kOther;
  CopyDirection direction = CopyDirection::kUnknown;
  MemKind src_kind = MemKind::kUnknown;
  MemKind dst_kind = MemKind::kUnknown;
  bool async = false;
  // Its position among the trace's calls as they are delivered (the first is 0): set by whoever
  // reads the trace (TraceImporter, analyzer/import/), so that an observer that keeps the calls in
  // that order finds the one a verdict names by index (whatif/replay_observer.h).
  uint32_t sequence = 0;
};

// A kernel's launch configuration and resources (CUPTI's kernel record; Kineto's kernel args),
// interned per trace: TraceTables::LaunchConfigOf(GpuActivity::launch_config).
struct LaunchConfig {
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;   // 0: not said (ROCm traces)
  uint64_t shared_memory_bytes = 0;    // static + dynamic, per block
  bool has_resources = false;          // registers and shared memory were said
  uint64_t blocks() const { return uint64_t{grid[0]} * grid[1] * grid[2]; }
  uint64_t threads_per_block() const { return uint64_t{block[0]} * block[1] * block[2]; }
};

// One piece of GPU work (or a CUPTI sync/memory record), on the trace's clock.
struct GpuActivity {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  uint64_t bytes = 0;
  uint32_t correlation = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t name = 0;            // TraceTables string id of the kernel name; 0: none
  uint32_t launch_config = 0;   // kernels: TraceTables::LaunchConfigOf id; 0: not recorded
  ActivityKind kind = ActivityKind::kUnspecified;
  CopyDirection direction = CopyDirection::kUnknown;
  MemKind src_kind = MemKind::kUnknown;
  MemKind dst_kind = MemKind::kUnknown;
};

// A node of a CUDA graph (gstrace.proto GraphNode): created inside the API call with correlation
// id `correlation` (a kernel launched into a capturing stream), or a clone of `original` (an
// executable graph's node, which replayed kernels name).
struct GraphNode {
  uint64_t node = 0;
  uint64_t original = 0;  // 0: created, not cloned
  uint32_t correlation = 0;
};

// A periodic sample of one thread (the agent's sampler). `state` mirrors gpustall.trace.ThreadState.
struct Sample {
  TimeNs time_ns = 0;
  uint64_t thread = 0;
  uint32_t stack = 0;
  uint8_t state = 0;
};

// A blocking libc call of one thread (nanosleep, a condition variable or semaphore wait, read,
// recv, poll, ...) that blocked long enough for the agent to record it: its exact interval, what
// the thread was doing (`state` mirrors gpustall.trace.ThreadState: IDLE for sleeps, LOCK_WAIT,
// IO_WAIT) and the caller's stack. Where a sample is a guess about the time around it, a wait is
// a measurement of its own interval.
struct HostWait {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;            // >= start_ns
  uint64_t thread = 0;          // OS tid
  uint32_t stack = 0;           // StackTable id; 0: no stack
  uint32_t function = 0;        // TraceTables string id of the libc function; 0: unknown
  uint8_t state = 0;
};

// A closed NVTX range of one thread, push/pop or start/end; a mark has start == end.
// `name`/`domain` are TraceTables string ids (TraceTables::StringValue); domain 0 is NVTX's default.
struct NvtxRange {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  uint64_t thread = 0;          // OS tid of the thread that opened it
  uint32_t name = 0;
  uint32_t domain = 0;
  uint32_t category = 0;
  uint32_t color = 0;           // ARGB, 0 = none
  uint32_t depth = 0;           // push/pop nesting level (0 = outermost)
};

// Memory events that are not API calls (allocator hooks, usage levels, OOM).
enum class MemoryEventKind : uint8_t { kUnspecified = 0, kAlloc = 1, kFree = 2, kUsage = 3, kReserved = 4, kOom = 5 };
struct MemoryEvent {
  TimeNs time_ns = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint32_t device = 0;
  MemoryEventKind kind = MemoryEventKind::kUnspecified;
};

// cudaError_t values the analysis recognises.
inline constexpr int32_t kCudaErrorMemoryAllocation = 2;

// True for the calls whose return means "the device finished the work this thread waited for".
inline bool IsSynchronizing(const ApiCall& call) {
  switch (call.api_class) {
    case ApiClass::kStreamSync:
    case ApiClass::kDeviceSync:
    case ApiClass::kEventSync:
      return true;
    case ApiClass::kMemcpy:
      // A blocking device-to-host copy (e.g. tensor.item()) waits for all prior work on its stream.
      return !call.async && call.direction == CopyDirection::kDeviceToHost;
    default:
      return false;
  }
}

// True when the call's host side is pageable memory (the driver stages it through a pinned buffer).
inline bool IsPageableCopy(const ApiCall& call) {
  if (call.api_class != ApiClass::kMemcpy) return false;
  return (call.direction == CopyDirection::kHostToDevice && call.src_kind == MemKind::kPageable) ||
         (call.direction == CopyDirection::kDeviceToHost && call.dst_kind == MemKind::kPageable);
}

// Classes whose calls enqueue device work (the launch path).
inline bool IsEnqueue(ApiClass c) {
  return c == ApiClass::kLaunch || c == ApiClass::kMemcpy || c == ApiClass::kMemset ||
         c == ApiClass::kEventRecord || c == ApiClass::kStreamWaitEvent;
}

inline bool IsDeviceWork(ActivityKind k) {
  return k == ActivityKind::kKernel || k == ActivityKind::kMemcpy || k == ActivityKind::kMemset ||
         k == ActivityKind::kCollective;
}
inline bool IsCompute(ActivityKind k) { return k == ActivityKind::kKernel || k == ActivityKind::kCollective; }

// cudaMemcpyKind (API calls) to a direction; cudaMemcpyDefault (4) is unknown without pointers.
CopyDirection DirectionFromCudaMemcpyKind(uint32_t kind);
// CUpti_ActivityMemcpyKind (activities) to a direction.
CopyDirection DirectionFromCuptiMemcpyKind(uint32_t kind);
const char* CopyDirectionName(CopyDirection d);  // "H2D", "D2H", ...

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_MODEL_TYPES_H_
