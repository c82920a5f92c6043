// driver.h — the simulated "CUDA driver" that simgpu's libcudart.so.13 sits on.
//
// This is simgpu's internal interface between libcudart.so.13 (thin: argument checks, API hooks,
// last-error state) and libsimgpu_driver.so (owns devices, memory, streams, events, the device
// timeline, the truth log and tool hooks). It is not a stable API for anything outside
// tests/simgpu; tools use tool_hooks.h, test programs use simgpu.h.
//
// Timeline model (see README.md): every operation's start and end are computed when it is
// submitted, from (submit time + device latency, its stream's ready time, legacy-default-stream
// and barrier rules, event waits). Durations are deterministic, so the whole schedule is known at
// submission. One device thread wakes at each op's start to move its bytes and at its end to
// report it (on_op hook, truth log) and mark it done. Host calls that block wait on a condition
// variable.
//
// Thread safety: every function here may be called from any thread.
#ifndef GPUSTALL_TESTS_SIMGPU_DRIVER_DRIVER_H_
#define GPUSTALL_TESTS_SIMGPU_DRIVER_DRIVER_H_

#include <driver_types.h>
#include <vector_types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "driver/tool_hooks.h"

#define SIMGPU_DRIVER_API __attribute__((visibility("default")))

namespace simgpu {

// ---- clock, config -------------------------------------------------------------------------

SIMGPU_DRIVER_API uint64_t NowNs();  // CLOCK_MONOTONIC
// Busy-waits (short host costs such as a launch call) or sleeps (long ones) until NowNs() >= t.
SIMGPU_DRIVER_API void WaitUntilNs(uint64_t t);

struct Config {
  int devices = 1;
  uint64_t memory_bytes = 80ull << 30;
  uint64_t kernel_ns = 10000;
  std::string kernel_durations;  // raw SIMGPU_KERNEL_DURATIONS
  uint64_t launch_host_ns = 5000;
  // An async copy's or memset's submission: a real PyTorch trace's pinned H2D cudaMemcpyAsync
  // took 5.0 us median against 7.0 for its cudaLaunchKernel, cudaMemsetAsync 7.0-7.5
  // (analyzer/import/kineto/testdata/multirank, both ranks): about three quarters of a launch
  // for a copy, a whole one for a memset; one setting for both, 4 us beside the launch's 5.
  uint64_t api_host_ns = 4000;
  uint64_t device_latency_ns = 2000;
  uint64_t copy_latency_ns = 1500;
  uint64_t stream_gap_ns = 0;
  // How late the device thread may report a kernel's end while no host thread waits for it
  // (timeline.cc, "Lazy completions"); 0: at its end, as every other op.
  uint64_t completion_batch_ns = 1000000;
  // SIMGPU_HOST_WAITS=block: host waits sleep until woken, as under
  // cudaDeviceScheduleBlockingSync, from the start (timeline.cc, "Host waits"); default spin.
  bool host_waits_block = false;
  uint64_t malloc_host_ns = 20000;
  uint64_t free_host_ns = 10000;
  uint64_t host_alloc_host_ns = 50000;
  double bw_h2d_pinned = 24e9, bw_d2h_pinned = 24e9;
  double bw_h2d_pageable = 8e9, bw_d2h_pageable = 6e9;
  double bw_d2d = 1.5e12, bw_peer = 50e9, bw_h2h = 10e9, bw_memset = 2e12;
  std::string truth_path;
  bool truth_api = false;  // SIMGPU_TRUTH_API=1: also log every runtime API call
  std::string fault_kernel;
  std::string injection_path;
};
// Parsed once from the environment (first use); malformed values stop the process with a message.
SIMGPU_DRIVER_API const Config& GetConfig();

// ---- initialisation ------------------------------------------------------------------------

// Driver initialisation (like cuInit): parse config, create devices, start the device thread, and
// call CUDA_INJECTION64_PATH's InitializeInjection() once, synchronously, before returning.
// Returns cudaErrorInitializationError in a child forked after initialisation.
SIMGPU_DRIVER_API cudaError_t EnsureInitialized();
SIMGPU_DRIVER_API int DeviceCount();
// The calling thread's current device (cudaSetDevice); 0 until set.
SIMGPU_DRIVER_API int CurrentDevice();
SIMGPU_DRIVER_API void SetCurrentDevice(int device);

// ---- device properties (device_properties.cc) --------------------------------------------------

// Shared memory limits of an H100 SXM (compute capability 9.0), which every simgpu device is;
// device_properties.cc cites the sources. Per block without opting in, per block at most
// (cudaFuncAttributeMaxDynamicSharedMemorySize), per SM, and what the driver reserves per block.
inline constexpr uint32_t kSharedMemPerBlock = 48u << 10;
inline constexpr uint32_t kSharedMemPerBlockOptin = 227u << 10;
inline constexpr uint32_t kSharedMemPerMultiprocessor = 228u << 10;
inline constexpr uint32_t kReservedSharedMemPerBlock = 1u << 10;

SIMGPU_DRIVER_API void FillDeviceProperties(cudaDeviceProp* p, int device);
// `attr` is a cudaDeviceAttr / CUdevice_attribute value; false for attributes simgpu does not model.
SIMGPU_DRIVER_API bool DeviceAttribute(int attr, int device, int* value);

// ---- kernels -------------------------------------------------------------------------------

// Registers per thread of a kernel whose cubin simgpu has not read (synthetic kernels, kernels
// registered without a readable fatbinary) and that nobody declared (simgpuKernelResources): 32,
// a count nvcc plausibly gives a small kernel, and one that never limits occupancy on its own
// (32 x 2048 resident threads = the 65536 registers of an SM). README.md, "Kernel resources".
inline constexpr uint32_t kDefaultRegistersPerThread = 32;

// What a kernel needs of an SM, as its cubin says (cuda/cubin.h) or simgpuKernelResources
// declares: CUPTI's registersPerThread and staticSharedMemory.
struct KernelResources {
  uint32_t registers_per_thread = kDefaultRegistersPerThread;
  uint32_t static_shared_bytes = 0;
};

struct KernelInfo {
  std::string name;       // mangled name as registered (CUPTI reports this)
  std::string demangled;  // for humans and SIMGPU_KERNEL_DURATIONS matching
  uint64_t duration_ns;   // from the model: exact (simgpuKernel), env override, or default
  bool faults;            // SIMGPU_FAULT_KERNEL matched: completing it raises a sticky error
  bool collective;        // simgpuCollective: completes when every rank's launch started
  std::string group;      // collectives: the group the ranks meet in (collective_rendezvous.h)
  // Resources (KernelResources) and cudaFuncAttributeMaxDynamicSharedMemorySize (-1: never set,
  // the default applies: MaxDynamicSharedBytes). Atomic: set by one thread while another launches.
  std::atomic<uint32_t> registers_per_thread{kDefaultRegistersPerThread};
  std::atomic<uint32_t> static_shared_bytes{0};
  std::atomic<int32_t> max_dynamic_shared_bytes{-1};
};
// Registers hostFun -> deviceName (from __cudaRegisterFunction), with what the registered
// fatbinary's cubin says of it (NULL: nothing readable, the defaults). Idempotent.
SIMGPU_DRIVER_API const KernelInfo* RegisterKernel(const void* host_fun, const char* device_name,
                                                   const KernelResources* resources = nullptr);
// A synthetic kernel of exact duration (simgpuKernel); same (name, ns) gives the same handle.
SIMGPU_DRIVER_API const KernelInfo* SyntheticKernel(const char* name, uint64_t duration_ns,
                                                    bool collective);
// The kernel `name` (mangled, from the cubin's symbol table) of a module loaded through the driver
// API (cuModuleLoadData); `module` is the CUmodule. Same (module, name) gives the same handle,
// which is also what FindKernel accepts (the CUfunction). Durations: the same model by name.
// `resources`: what the module's cubin says of it (NULL: the defaults).
SIMGPU_DRIVER_API const KernelInfo* ModuleKernel(const void* module, const char* name,
                                                 const KernelResources* resources = nullptr);
// Resolves a cudaLaunchKernel `func` (a registered host function, or a handle returned by
// SyntheticKernel / __cudaGetKernel). NULL if unknown.
SIMGPU_DRIVER_API const KernelInfo* FindKernel(const void* func);
// simgpuKernelResources: declares what the cubin of `func` (a handle FindKernel knows) would say.
// 0, or -1 for an unknown `func` or a value no cubin has (registers outside 1..255, static shared
// memory above the 48 KiB a kernel may declare statically).
SIMGPU_DRIVER_API int DeclareKernelResources(const void* func, int registers_per_thread,
                                             size_t static_shared_bytes);
// The most dynamic shared memory a launch of `k` may ask for: what
// cudaFuncAttributeMaxDynamicSharedMemorySize set, else the default, kSharedMemPerBlock - its
// static shared memory (0 when that is more). Source: cuda.h's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ("If the user-specified dynamic shared memory
// size is larger than this value, the launch will fail").
SIMGPU_DRIVER_API uint32_t MaxDynamicSharedBytes(const KernelInfo* k);
// cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, value) and
// cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): cudaErrorInvalidValue when
// value < 0 or value + static shared memory > kSharedMemPerBlockOptin (cuda_runtime_api.h: "The
// sum of this value and the function attribute sharedSizeBytes cannot exceed the device attribute
// cudaDevAttrMaxSharedMemoryPerBlockOptin").
SIMGPU_DRIVER_API cudaError_t SetMaxDynamicSharedBytes(const KernelInfo* k, int value);

// ---- device variables (__device__ / __constant__) ---------------------------------------------

// Registers a variable from __cudaRegisterVar: `host_var` is its host shadow (the `symbol`
// argument of cudaMemcpyToSymbol), `size` its size. Idempotent.
SIMGPU_DRIVER_API void RegisterSymbol(const void* host_var, const char* name, size_t size);
// The variable's device memory: allocated on first use (device 0), zero-filled (simgpu does not
// read the module image, so a `__device__ int x = 5;` starts at 0). cudaErrorInvalidSymbol if
// `host_var` was never registered.
SIMGPU_DRIVER_API cudaError_t SymbolAddress(const void* host_var, void** dev_ptr, size_t* size);

// ---- memory --------------------------------------------------------------------------------

enum class MemKind : uint8_t { kPageable = 1, kPinned = 2, kDevice = 3, kManaged = 5 };

struct PointerInfo {
  MemKind kind = MemKind::kPageable;
  int device = -1;           // owning device for device/managed memory
  uintptr_t base = 0;        // start of the allocation (0 for pageable)
  size_t size = 0;           // its size
  bool registered = false;   // pinned via cudaHostRegister (not owned by simgpu)
};
SIMGPU_DRIVER_API PointerInfo ClassifyPointer(const void* p);

// Each returns cudaSuccess or an error; none of them sets last-error state (the runtime does).
SIMGPU_DRIVER_API cudaError_t DeviceMalloc(int device, size_t size, bool managed, bool async,
                                           uint32_t corr, void** out);
// Releases device/managed memory now (the caller has synchronised as the API requires).
SIMGPU_DRIVER_API cudaError_t DeviceFree(void* p, uint32_t corr);
SIMGPU_DRIVER_API cudaError_t HostAllocPinned(size_t size, uint32_t corr, void** out);
SIMGPU_DRIVER_API cudaError_t HostFreePinned(void* p, uint32_t corr);
SIMGPU_DRIVER_API cudaError_t HostRegister(void* p, size_t size, uint32_t corr);
SIMGPU_DRIVER_API cudaError_t HostUnregister(void* p, uint32_t corr);
SIMGPU_DRIVER_API void MemInfo(int device, size_t* free_bytes, size_t* total_bytes);

// Virtual memory management (cuMemAddressReserve/Create/Map/Unmap/Release/AddressFree), as the
// CUDA driver API reference documents it and PyTorch's expandable segments use it: address ranges
// reserved without memory, physical allocations on a device (counted against its memory), and
// mappings of a whole allocation at offset 0 into a reserved range, which then is device memory
// for copies and kernels (ClassifyPointer). Sizes and addresses in multiples of
// kVmmGranularity. CUresult values (0 success). Memory records for these are not reported.
inline constexpr size_t kVmmGranularity = size_t{2} << 20;
SIMGPU_DRIVER_API int VmmReserve(size_t size, size_t alignment, uintptr_t* out);
SIMGPU_DRIVER_API int VmmFree(uintptr_t base, size_t size);
SIMGPU_DRIVER_API int VmmCreate(int device, size_t size, uint64_t* handle);
SIMGPU_DRIVER_API int VmmRelease(uint64_t handle);
SIMGPU_DRIVER_API int VmmMap(uintptr_t ptr, size_t size, size_t offset, uint64_t handle);
SIMGPU_DRIVER_API int VmmUnmap(uintptr_t ptr, size_t size);
// 0 when [ptr, ptr + size) is entirely mapped (cuMemSetAccess's precondition).
SIMGPU_DRIVER_API int VmmCheckMapped(uintptr_t ptr, size_t size);
SIMGPU_DRIVER_API int SetMemoryCapacity(size_t bytes);
SIMGPU_DRIVER_API int SetCopyBandwidth(int memcpy_kind, int pinned, double bytes_per_second);

// ---- streams and events ----------------------------------------------------------------------

struct Stream;  // the object behind a cudaStream_t (CUstream_st*) created by the runtime
struct Event;   // the object behind a cudaEvent_t

// Resolves a runtime stream argument: 0 (legacy, or per-thread when per_thread_default),
// cudaStreamLegacy, cudaStreamPerThread, or a created stream. NULL if invalid.
SIMGPU_DRIVER_API Stream* ResolveStream(int device, cudaStream_t s, bool per_thread_default);
SIMGPU_DRIVER_API Stream* CreateStream(int device, unsigned flags, int priority, uint32_t corr);
SIMGPU_DRIVER_API void DestroyStream(Stream* s);  // pending work still completes
SIMGPU_DRIVER_API cudaStream_t StreamHandle(Stream* s);
SIMGPU_DRIVER_API int StreamDevice(const Stream* s);
SIMGPU_DRIVER_API uint32_t StreamId(const Stream* s);  // CUPTI stream id
SIMGPU_DRIVER_API unsigned StreamFlags(const Stream* s);
SIMGPU_DRIVER_API int StreamPriority(const Stream* s);
SIMGPU_DRIVER_API bool StreamIdle(Stream* s);
// Blocks until all work submitted to `s` so far (for the legacy stream: and to every blocking
// stream of its device) has completed. Returns the device's sticky error, if any.
SIMGPU_DRIVER_API cudaError_t SynchronizeStream(Stream* s);
// Blocks until all work submitted to `device` so far has completed.
SIMGPU_DRIVER_API cudaError_t SynchronizeDevice(int device);
SIMGPU_DRIVER_API void SynchronizeAllDevices();

SIMGPU_DRIVER_API Event* CreateEvent(int device, unsigned flags);
SIMGPU_DRIVER_API bool IsEvent(const Event* e);
SIMGPU_DRIVER_API void DestroyEvent(Event* e);
SIMGPU_DRIVER_API cudaError_t RecordEvent(Event* e, Stream* s, uint32_t corr);
SIMGPU_DRIVER_API cudaError_t QueryEvent(Event* e);  // cudaSuccess / cudaErrorNotReady
SIMGPU_DRIVER_API cudaError_t SynchronizeEvent(Event* e);
SIMGPU_DRIVER_API cudaError_t EventElapsedMs(Event* start, Event* end, float* ms);
SIMGPU_DRIVER_API uint32_t EventId(const Event* e);
// The stream's later work starts no earlier than the event's last record completes.
SIMGPU_DRIVER_API cudaError_t StreamWaitEvent(Stream* s, Event* e);

// ---- device work ---------------------------------------------------------------------------

struct LaunchArgs {
  const KernelInfo* kernel;
  dim3 grid, block;
  size_t shared_mem;
};
SIMGPU_DRIVER_API cudaError_t SubmitKernel(Stream* s, const LaunchArgs& a, uint32_t corr);

struct CopyArgs {
  void* dst;
  const void* src;
  size_t width;            // bytes per row (1-D: the byte count)
  size_t height = 1;       // rows (1-D: 1)
  size_t dpitch = 0, spitch = 0;
  cudaMemcpyKind kind;     // as the caller passed it (cudaMemcpyDefault is resolved here)
  bool async;              // cudaMemcpyAsync family (CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
  int peer_src_device = -1, peer_dst_device = -1;  // cudaMemcpyPeer
};
// Validates and submits a copy. `*host_must_wait` tells the runtime the call is synchronous with
// respect to the host (sync copies, pageable staging, host<->host); `*op` is what to wait on.
struct OpHandle;
SIMGPU_DRIVER_API cudaError_t SubmitCopy(Stream* s, const CopyArgs& a, uint32_t corr,
                                         bool* host_must_wait, std::shared_ptr<OpHandle>* op);
SIMGPU_DRIVER_API cudaError_t SubmitMemset(Stream* s, void* dst, int value, size_t width,
                                           size_t height, size_t pitch, bool async, uint32_t corr,
                                           bool* host_must_wait, std::shared_ptr<OpHandle>* op);
// Stream-ordered free (cudaFreeAsync): memory is released when the stream reaches this point.
SIMGPU_DRIVER_API cudaError_t SubmitFreeAsync(Stream* s, void* p, uint32_t corr);
// cudaLaunchHostFunc / cudaStreamAddCallback: `fn(user)` runs on the device thread when the
// stream reaches it. Model: it takes no device time (later work in the stream is not delayed by
// how long `fn` runs), and like the real one it must not call CUDA.
SIMGPU_DRIVER_API cudaError_t SubmitHostFunc(Stream* s, void (*fn)(void*), void* user,
                                             uint32_t corr);
// Waits for one op submitted above; returns the device's sticky error if one arose.
SIMGPU_DRIVER_API cudaError_t WaitOp(const std::shared_ptr<OpHandle>& op);
// Device-wide ordering point (cudaMalloc, cudaHostAlloc, per the programming guide's "implicit
// synchronization"): work submitted later on any stream of `device` starts after all work
// submitted before.
SIMGPU_DRIVER_API void DeviceBarrier(int device);

// ---- stream capture and graphs (graphs.cc) -----------------------------------------------------
// What simgpu models (README.md, "Graphs"): capture of kernel launches on one stream into a
// graph of kernel nodes in stream order, instantiation, and replay. Copies, memsets, event
// records/waits, host functions and frees on a capturing stream are refused
// (cudaErrorStreamCaptureUnsupported) and invalidate the capture; so do synchronisations, as on a
// real GPU.

struct Graph;      // cudaGraph_t
struct GraphExec;  // cudaGraphExec_t
// cudaStreamBeginCapture: later launches on `s` become nodes of a new graph. Not on the legacy
// stream (cudaErrorStreamCaptureUnsupported); not twice (cudaErrorIllegalState).
SIMGPU_DRIVER_API cudaError_t BeginCapture(Stream* s, int mode);
// cudaStreamEndCapture: the captured graph (*graph), or cudaErrorStreamCaptureInvalidated with
// *graph = NULL after a refused operation; cudaErrorIllegalState when `s` is not capturing.
SIMGPU_DRIVER_API cudaError_t EndCapture(Stream* s, Graph** graph);
// cudaStreamCaptureStatus of `s` (None, Active, Invalidated); its capture's id when active.
SIMGPU_DRIVER_API int CaptureStatus(const Stream* s, unsigned long long* id);
// The graph `s` is capturing into, or NULL.
SIMGPU_DRIVER_API Graph* CapturingGraph(const Stream* s);
SIMGPU_DRIVER_API bool IsGraph(const Graph* g);
SIMGPU_DRIVER_API bool IsGraphExec(const GraphExec* e);
SIMGPU_DRIVER_API size_t GraphNodeCount(const Graph* g);
SIMGPU_DRIVER_API cudaError_t InstantiateGraph(Graph* g, GraphExec** exec);
// cudaGraphLaunch: the host pays one launch; every node is scheduled on `s` in order, its kernel
// record carrying the launch's correlation id, the graph's id and the node's id.
SIMGPU_DRIVER_API cudaError_t LaunchGraph(GraphExec* e, Stream* s, uint32_t corr);
SIMGPU_DRIVER_API cudaError_t DestroyGraph(Graph* g);
SIMGPU_DRIVER_API cudaError_t DestroyGraphExec(GraphExec* e);

// ---- errors ----------------------------------------------------------------------------------

// How host waits wait (timeline.cc, "Host waits"): true for cudaDeviceScheduleBlockingSync
// (they sleep until woken), false for the other schedules (they return on time).
SIMGPU_DRIVER_API void SetHostWaitsBlock(bool block);

// The device's sticky error (cudaSuccess if none): set when a faulting kernel completes.
SIMGPU_DRIVER_API cudaError_t StickyError(int device);

// Resets a device (cudaDeviceReset): waits for its work, destroys its streams, events and memory.
SIMGPU_DRIVER_API void ResetDevice(int device);

// ---- tool hooks and host-side records ----------------------------------------------------------

// The installed hooks, or NULL. The pointee stays valid for the life of the process.
SIMGPU_DRIVER_API const SimgpuToolHooks* CurrentHooks();
SIMGPU_DRIVER_API void* ContextHandle(int device);  // stands in for the CUcontext
SIMGPU_DRIVER_API uint32_t ContextId(int device);
// Emits a host synchronisation record (SIMGPU_OP_SYNC) to the hooks and the truth log.
SIMGPU_DRIVER_API void RecordSync(uint32_t sync_type, int device, const Stream* s, const Event* e,
                                  uint64_t start_ns, uint64_t end_ns, uint32_t corr);
// Appends one JSON object (without the trailing newline) to the truth log, if enabled.
SIMGPU_DRIVER_API void TruthAppend(const std::string& json_object);
// True when runtime API calls go to the truth log too (SIMGPU_TRUTH and SIMGPU_TRUTH_API=1).
SIMGPU_DRIVER_API bool TruthApiEnabled();

SIMGPU_DRIVER_API uint32_t CurrentTid();  // gettid(), cached per thread
// getpid(), cached per process: glibc stopped caching it (2.25), so each call is a system call,
// and simgpu needs it on every API call (fork detection) and every CUPTI API record. The cache
// is refreshed in the child of every fork() (pthread_atfork). Without it, the two records a
// subscribed tool adds per launch cost two system calls that NVIDIA's CUPTI does not make, and a
// profiler measured on simgpu looks dearer than it is.
SIMGPU_DRIVER_API uint32_t ProcessId();

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_DRIVER_DRIVER_H_
