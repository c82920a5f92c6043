// events.h — the fixed-size records that the capture side (shim/ interposers, CUPTI callbacks and
// activity buffers, the event-pair fallback) hands to the recorder.
//
// This header is the contract between "how calls are caught" (shim/, agent/cupti/) and "where
// records go" (agent/recorder, ring, writer). It holds plain data only: no CUDA types, so the
// recorder and its tests compile without CUDA headers, and records can be copied with memcpy into
// a preallocated ring.
#ifndef GPUSTALL_AGENT_RECORD_EVENTS_H_
#define GPUSTALL_AGENT_RECORD_EVENTS_H_

#include <cstdint>

namespace gs {

// Host memory kinds as the agent knows them. Values match CUpti_ActivityMemoryKind so that CUPTI
// records and interposer records agree without translation.
enum class MemKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
};

// Where an ApiCallEvent came from. An interposed call also seen by a CUPTI callback is recorded
// once, by the interposer, carrying CUPTI's correlation id.
enum class ApiSource : uint8_t {
  kInterposer = 1,     // shim/ wrapper (LD_PRELOAD)
  kCuptiCallback = 2,  // CUPTI runtime callback for a call the shim did not see
  kCuptiDriverCallback = 3,  // CUPTI driver callback: a driver call made outside any runtime call
};

// What an API call does, for the analysis (the name table in the trace says exactly which API).
enum class ApiClass : uint8_t {
  kOther = 0,
  kLaunch = 1,
  kMemcpy = 2,          // synchronous or async copy
  kMemset = 3,
  kMalloc = 4,          // device/managed/async allocation
  kFree = 5,
  kHostAlloc = 6,       // cudaMallocHost/cudaHostAlloc/cudaHostRegister
  kHostFree = 7,
  kStreamSync = 8,
  kDeviceSync = 9,
  kEventSync = 10,
  kStreamWaitEvent = 11,
  kQuery = 12,          // cudaStreamQuery/cudaEventQuery
  kEventRecord = 13,
};

// One host-side CUDA API call. 64 bytes; the stack (if captured) travels beside it in the ring.
struct ApiCallEvent {
  uint64_t enter_ns;        // CLOCK_MONOTONIC
  uint64_t exit_ns;
  uint64_t bytes;           // copies, memsets, allocations; 0 otherwise
  uint64_t stream;          // cudaStream_t as an integer (0: legacy default stream)
  uint64_t address;         // allocation/free address, copy destination, or kernel function
  uint32_t correlation_id;  // CUPTI's, when CUPTI is active; else the agent's own (high bit set)
  uint16_t api_id;          // index into the shim's API table, or the CUPTI (runtime/driver) cbid
  int16_t result;           // cudaError_t returned to the application
  ApiSource source;
  ApiClass api_class;
  uint8_t copy_kind;        // cudaMemcpyKind
  MemKind src_kind;
  MemKind dst_kind;
  uint8_t flags;            // ApiFlags
  uint16_t device;
  // The fields above take 56 bytes; this keeps the record at the 64 bytes the ring layout
  // assumes (and leaves room for a later field). Always zero for now.
  uint8_t reserved[8];
};
static_assert(sizeof(ApiCallEvent) == 64, "ApiCallEvent is a fixed-size ring record");

enum ApiFlags : uint8_t {
  kApiFlagAsync = 1 << 0,         // an *Async call
  kApiFlagPerThreadStream = 1 << 1,  // _ptsz/_ptds variant
};

// What a thread blocked in, for a HostWaitEvent. Values match the trace's ThreadState
// (writer/trace_enums.h ties them).
enum class HostWaitState : uint8_t {
  kIoWait = 4,    // read, recv, poll, select, epoll on files
  kLockWait = 5,  // condition variables, semaphores
  kIdle = 7,      // sleeps (and poll/select on no file)
};

// One blocking libc call that blocked at least GS_WAIT_MIN_US (shim/host_wait_interposers.cc).
// 64 bytes like ApiCallEvent, so that both share the ring record layout (ring.h); the stack
// travels beside it in the ring.
struct HostWaitEvent {
  uint64_t enter_ns;   // CLOCK_MONOTONIC, before the real call
  uint64_t exit_ns;    // after it returned
  uint16_t function;   // HostWaitFunction (agent/capture/host_wait/host_wait.h)
  HostWaitState state;
  uint8_t reserved[45];  // zero; room for later fields (the file descriptor's kind, ...)
};
static_assert(sizeof(HostWaitEvent) == 64, "HostWaitEvent is a fixed-size ring record");

enum class ActivityKind : uint8_t {
  kKernel = 1,
  kMemcpy = 2,
  kMemset = 3,
  kSync = 4,           // host synchronisation as CUPTI saw it
  kMemoryAlloc = 5,
  kMemoryFree = 6,
  kCollective = 7,
};

// Where a GpuActivityEvent's timing came from.
enum class ActivitySource : uint8_t {
  kCupti = 1,       // CUPTI activity record
  kEventPair = 2,   // fallback: cudaEvent pair recorded by the agent around intercepted work
};

// One piece of GPU work (or a CUPTI sync/memory record), already on CLOCK_MONOTONIC.
// Produced off the application's hot path (CUPTI buffer-completed callback, fallback poller).
struct GpuActivityEvent {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint64_t address;
  uint64_t graph_node_id;   // kernels, copies, memsets replayed by a graph launch: CUPTI's graphNodeId, else 0
  uint32_t correlation_id;
  uint32_t device;
  uint32_t stream_id;       // CUPTI stream id, or the agent's id for a cudaStream_t in fallback mode
  uint32_t context_id;
  uint32_t sync_type;       // CUpti_ActivitySynchronizationType for kSync
  ActivityKind kind;
  ActivitySource source;
  uint8_t copy_kind;        // CUpti_ActivityMemcpyKind
  MemKind src_kind;
  MemKind dst_kind;
  uint8_t flags;            // CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC
  uint8_t launch_flags;     // kernels: LaunchFlags bits (which of the launch fields below are set)
  uint8_t pad;
  // Kernels: the launch configuration and the kernel's resources (CUPTI's kernel record), for how
  // full the kernel kept its device (analyzer/occupancy/occupancy.h).
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t registers_per_thread;
  uint32_t static_shared_bytes;   // per block, from the kernel's image
  uint32_t dynamic_shared_bytes;  // per block, from the launch
  const char* name;         // kernel name; the recorder copies it before returning
};
// The fields take 104 bytes and `name` is 8-aligned, so the record is 112 bytes (it never goes
// through a ring: ActivityBuffer stores it in a vector).
static_assert(sizeof(GpuActivityEvent) == 112, "GpuActivityEvent is a fixed-size record");

// GpuActivityEvent::launch_flags.
enum LaunchFlags : uint8_t {
  kLaunchConfigKnown = 1,     // grid, block, dynamic_shared_bytes
  kLaunchResourcesKnown = 2,  // registers_per_thread, static_shared_bytes
};

// A CUDA graph node came to be (CUPTI's GRAPHNODE_CREATED / GRAPHNODE_CLONED resource callbacks,
// tests/simgpu/CUPTI_CORRELATION.md fact 10). Capture time only: rare, off every hot path.
struct GraphNodeEvent {
  uint64_t node_id;           // cuptiGetGraphNodeId
  uint64_t original_node_id;  // GRAPHNODE_CLONED: the node it copies; 0 for a created node
  uint64_t thread_id;         // the thread whose call made it
  uint64_t time_ns;
  uint32_t correlation_id;    // the API call it was made in (a capturing launch), 0 if none known
  uint32_t pad;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_EVENTS_H_
