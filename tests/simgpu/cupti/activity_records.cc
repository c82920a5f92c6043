#include "activity_records.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "activity_buffers.h"
#include "release.h"
#include "timestamp_clock.h"

namespace simgpu_cupti {
namespace {

std::atomic<bool> g_kinds[CUPTI_ACTIVITY_KIND_COUNT];
std::atomic<bool> g_runtime_api[CUPTI_RUNTIME_TRACE_CBID_SIZE];
std::atomic<bool> g_driver_api[CUPTI_DRIVER_TRACE_CBID_SIZE];
std::atomic<int> g_thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
std::atomic<int64_t> g_next_grid_id{1};

bool On(CUpti_ActivityKind kind) { return g_kinds[kind].load(std::memory_order_relaxed); }

// Records are built in CUDA 13.0's struct for their kind and handed out in the layout of the
// release simgpu plays (release.h): a prefix of it, padding that 13.0 uses filled.
template <typename Record>
void Append(const Record& r) {
  static_assert(sizeof(Record) % 8 == 0, "CUPTI records are 8-byte aligned");
  Record out = r;
  FillReleasePadding(&out);
  const size_t size = RecordSize(out.kind);
  AppendRecord(&out, size != 0 && size <= sizeof(Record) ? size : sizeof(Record));
}

// Per-thread external correlation stacks; trivially destructible storage would be nicer, but a
// vector per kind keeps push/pop unbounded like real CUPTI and costs nothing when unused.
thread_local std::vector<uint64_t> t_external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

// CUPTI_ACTIVITY_KIND_MEMORY reports one record per allocation, at its release.
struct LiveAllocation {
  uint64_t start_ns;
  uint64_t bytes;
  uint32_t memory_kind, device_id, context_id;
};
std::mutex g_live_mu;
std::unordered_map<uint64_t, LiveAllocation>& LiveAllocations() {
  static auto* live = new std::unordered_map<uint64_t, LiveAllocation>;  // leaked: see buffers
  return *live;
}

void RecordKernel(const SimgpuOpRecord& op) {
  CUpti_ActivityKind kind = On(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                                ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                : CUPTI_ACTIVITY_KIND_KERNEL;
  if (!On(kind)) return;
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = kind;
  k.partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  k.partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  k.start = TimestampFromMonotonic(op.start_ns);
  k.end = TimestampFromMonotonic(op.end_ns);
  k.completed = k.end;  // no device-side launches: the kernel is complete when it ends
  k.deviceId = op.device_id;
  k.contextId = op.context_id;
  k.streamId = op.stream_id;
  k.gridX = op.grid[0];
  k.gridY = op.grid[1];
  k.gridZ = op.grid[2];
  k.blockX = op.block[0];
  k.blockY = op.block[1];
  k.blockZ = op.block[2];
  k.correlationId = op.correlation_id;
  k.gridId = g_next_grid_id.fetch_add(1, std::memory_order_relaxed);
  k.graphId = op.graph_id;          // 0 unless a graph launch replayed it (driver/graphs.cc)
  k.graphNodeId = op.graph_node_id;
  k.name = op.name;  // the driver's stable storage, as CUPTI owns its name strings
  k.queued = CUPTI_TIMESTAMP_UNKNOWN;
  k.submitted = CUPTI_TIMESTAMP_UNKNOWN;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  // What the kernel asked of an SM (tool_hooks.h): its cubin's registers and static shared
  // memory, the launch's dynamic shared memory, the carveout it ran with, whether it opted in
  // above 48 KiB. Local memory is not modelled (0).
  k.registersPerThread = static_cast<uint16_t>(op.registers_per_thread);
  k.staticSharedMemory = static_cast<int32_t>(op.static_shared_bytes);
  k.dynamicSharedMemory = static_cast<int32_t>(op.dynamic_shared_bytes);
  k.sharedMemoryExecuted = op.shared_memory_executed;
  k.shmemLimitConfig = op.shmem_limit_optin ? CUPTI_FUNC_SHMEM_LIMIT_OPTIN
                                            : CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
  k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  Append(k);
}

// The CUDA 12 flavour hands the same record out as a CUpti_ActivityKernel9 (release.h): the
// resource fields must sit where 12.x's struct has them.
#define SIMGPU_SAME_OFFSET(field)                                                  \
  static_assert(offsetof(CUpti_ActivityKernel9, field) ==                          \
                    offsetof(CUpti_ActivityKernel10, field) &&                     \
                offsetof(CUpti_ActivityKernel9, field) < sizeof(CUpti_ActivityKernel9), \
                "Kernel9 and Kernel10 differ at " #field)
SIMGPU_SAME_OFFSET(registersPerThread);
SIMGPU_SAME_OFFSET(staticSharedMemory);
SIMGPU_SAME_OFFSET(dynamicSharedMemory);
SIMGPU_SAME_OFFSET(sharedMemoryExecuted);
SIMGPU_SAME_OFFSET(shmemLimitConfig);
#undef SIMGPU_SAME_OFFSET

// Context id of each device, learned from the records themselves (simgpu: one context per
// device), for the peer side of MEMCPY2 records.
constexpr uint32_t kMaxDevices = 64;
std::atomic<uint32_t> g_context_of_device[kMaxDevices];
[[maybe_unused]] const bool kContextsUnknown = [] {
  for (auto& c : g_context_of_device) c.store(CUPTI_INVALID_CONTEXT_ID);
  return true;
}();

void LearnContext(const SimgpuOpRecord& op) {
  if (op.device_id < kMaxDevices) {
    g_context_of_device[op.device_id].store(op.context_id, std::memory_order_relaxed);
  }
}

uint32_t ContextOfDevice(uint32_t device) {
  return device < kMaxDevices ? g_context_of_device[device].load(std::memory_order_relaxed)
                              : CUPTI_INVALID_CONTEXT_ID;
}

// Peer copies are MEMCPY2 records in CUPTI, never MEMCPY ones.
void RecordPeerMemcpy(const SimgpuOpRecord& op) {
  if (!On(CUPTI_ACTIVITY_KIND_MEMCPY2)) return;
  CUpti_ActivityMemcpyPtoP4 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.copyKind = op.copy_kind;
  m.srcKind = op.src_kind;
  m.dstKind = op.dst_kind;
  m.flags = op.flags;
  m.bytes = op.bytes;
  m.start = TimestampFromMonotonic(op.start_ns);
  m.end = TimestampFromMonotonic(op.end_ns);
  m.deviceId = op.device_id;
  m.contextId = op.context_id;
  m.streamId = op.stream_id;
  bool peers_known = op.src_device_id != op.dst_device_id;
  m.srcDeviceId = peers_known ? op.src_device_id : op.device_id;
  m.dstDeviceId = peers_known ? op.dst_device_id : op.device_id;
  m.srcContextId = ContextOfDevice(m.srcDeviceId);
  m.dstContextId = ContextOfDevice(m.dstDeviceId);
  m.correlationId = op.correlation_id;
  m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  Append(m);
}

void RecordMemcpy(const SimgpuOpRecord& op) {
  if (op.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) return RecordPeerMemcpy(op);
  if (!On(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = op.copy_kind;
  m.srcKind = op.src_kind;
  m.dstKind = op.dst_kind;
  m.flags = op.flags;
  m.bytes = op.bytes;
  m.start = TimestampFromMonotonic(op.start_ns);
  m.end = TimestampFromMonotonic(op.end_ns);
  m.deviceId = op.device_id;
  m.contextId = op.context_id;
  m.streamId = op.stream_id;
  // correlationId: the submitting API call's (a runtime call and its nested driver call share
  // it). runtimeCorrelationId: "identical to the correlation ID in the runtime API activity
  // record that launched the memory copy" — none for a copy made directly through the driver.
  m.correlationId = op.correlation_id;
  m.runtimeCorrelationId = op.submit_domain == 1 ? 0 : op.correlation_id;
  m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  m.copyCount = 1;
  m.graphId = op.graph_id;  // 0 unless a graph launch replayed it (driver/graphs.cc)
  m.graphNodeId = op.graph_node_id;
  Append(m);
}

void RecordMemset(const SimgpuOpRecord& op) {
  if (!On(CUPTI_ACTIVITY_KIND_MEMSET)) return;
  CUpti_ActivityMemset4 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = op.memset_value;
  m.bytes = op.bytes;
  m.start = TimestampFromMonotonic(op.start_ns);
  m.end = TimestampFromMonotonic(op.end_ns);
  m.deviceId = op.device_id;
  m.contextId = op.context_id;
  m.streamId = op.stream_id;
  m.correlationId = op.correlation_id;
  m.flags = op.flags;
  m.memoryKind = static_cast<uint16_t>(op.memory_kind);
  m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  m.graphId = op.graph_id;
  m.graphNodeId = op.graph_node_id;
  Append(m);
}

void RecordSync(const SimgpuOpRecord& op) {
  if (!On(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) return;
  CUpti_ActivitySynchronization2 s;
  std::memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = static_cast<CUpti_ActivitySynchronizationType>(op.sync_type);
  s.start = TimestampFromMonotonic(op.start_ns);
  s.end = TimestampFromMonotonic(op.end_ns);
  s.correlationId = op.correlation_id;
  s.contextId = op.context_id;
  s.streamId = op.stream_id;
  s.cudaEventId = op.event_id;
  s.cudaEventSyncId = op.event_id == CUPTI_SYNCHRONIZATION_INVALID_VALUE
                          ? CUPTI_SYNCHRONIZATION_INVALID_VALUE
                          : op.correlation_id;
  s.returnValue = 0;
  Append(s);
}

void RecordMemory(const SimgpuOpRecord& op) {
  bool alloc = op.kind == SIMGPU_OP_MEMORY_ALLOC;
  if (On(CUPTI_ACTIVITY_KIND_MEMORY2)) {
    CUpti_ActivityMemory4 m;
    std::memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.memoryKind = static_cast<CUpti_ActivityMemoryKind>(op.memory_kind);
    m.correlationId = op.correlation_id;
    m.address = op.address;
    m.bytes = op.bytes;
    m.timestamp = TimestampFromMonotonic(op.start_ns);
    m.processId = static_cast<uint32_t>(getpid());
    m.deviceId = op.device_id;
    m.contextId = op.context_id;
    m.streamId = op.stream_id;  // CUPTI_INVALID_STREAM_ID unless stream-ordered (cudaMallocAsync)
    m.isAsync = op.stream_id != CUPTI_INVALID_STREAM_ID;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    Append(m);
  }
  // Tracked whenever MEMORY is on at allocation time, so a release can report its allocation.
  std::lock_guard<std::mutex> lock(g_live_mu);
  auto& live = LiveAllocations();
  if (alloc) {
    if (On(CUPTI_ACTIVITY_KIND_MEMORY)) {
      live[op.address] = {op.start_ns, op.bytes, op.memory_kind, op.device_id, op.context_id};
    }
    return;
  }
  auto it = live.find(op.address);
  if (it == live.end()) return;
  LiveAllocation a = it->second;
  live.erase(it);
  if (!On(CUPTI_ACTIVITY_KIND_MEMORY)) return;
  CUpti_ActivityMemory m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY;
  m.memoryKind = static_cast<CUpti_ActivityMemoryKind>(a.memory_kind);
  m.address = op.address;
  m.bytes = a.bytes;
  m.start = TimestampFromMonotonic(a.start_ns);
  m.end = TimestampFromMonotonic(op.start_ns);
  m.processId = static_cast<uint32_t>(getpid());
  m.deviceId = a.device_id;
  m.contextId = a.context_id;
  Append(m);
}

void RecordStream(const SimgpuOpRecord& op) {
  if (!On(CUPTI_ACTIVITY_KIND_STREAM)) return;
  CUpti_ActivityStream s;
  std::memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_STREAM;
  s.contextId = op.context_id;
  s.streamId = op.stream_id;
  // op.flags carries the cudaStreamCreateWithFlags flags (cudaStreamNonBlocking = 1).
  s.flag = (op.flags & 1u) != 0 ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING
                                : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
  s.correlationId = op.correlation_id;
  Append(s);
}

// CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: time spent in the tool's bufferRequested,
// charged to the thread that needed the buffer.
void RecordBufferRequestOverhead(uint64_t start_ns, uint64_t end_ns) {
  if (!On(CUPTI_ACTIVITY_KIND_OVERHEAD)) return;
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof(o));
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = static_cast<uint32_t>(getpid());
  o.objectId.pt.threadId = GetThreadIdType() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
                               ? static_cast<uint32_t>(syscall(SYS_gettid))  // gettid(): glibc 2.30
                               : static_cast<uint32_t>(pthread_self());
  o.start = TimestampFromMonotonic(start_ns);
  o.end = TimestampFromMonotonic(end_ns);
  o.correlationId = CUPTI_CORRELATION_ID_UNKNOWN;
  Append(o);
}

[[maybe_unused]] const bool kObserverInstalled =
    (SetBufferRequestObserver(RecordBufferRequestOverhead), true);

}  // namespace

bool DeviceOfContext(uint32_t context_id, uint32_t* device_id) {
  for (uint32_t d = 0; d < kMaxDevices; ++d) {
    if (context_id != CUPTI_INVALID_CONTEXT_ID && ContextOfDevice(d) == context_id) {
      *device_id = d;
      return true;
    }
  }
  return false;
}

void SetKindEnabled(CUpti_ActivityKind kind, bool enabled) {
  g_kinds[kind].store(enabled, std::memory_order_relaxed);
  // A later cuptiActivityEnable/Disable(RUNTIME|DRIVER) overrides the per-cbid settings.
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
    for (auto& on : g_runtime_api) on.store(enabled, std::memory_order_relaxed);
  } else if (kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    for (auto& on : g_driver_api) on.store(enabled, std::memory_order_relaxed);
  }
}

bool KindEnabled(CUpti_ActivityKind kind) { return On(kind); }

void DisableAllKinds() {
  for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; ++k) {
    SetKindEnabled(static_cast<CUpti_ActivityKind>(k), false);
  }
}

bool SetRuntimeApiRecorded(uint32_t cbid, bool enabled) {
  if (cbid == 0 || cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE) return false;
  g_runtime_api[cbid].store(enabled, std::memory_order_relaxed);
  return true;
}

bool SetDriverApiRecorded(uint32_t cbid, bool enabled) {
  if (cbid == 0 || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return false;
  g_driver_api[cbid].store(enabled, std::memory_order_relaxed);
  return true;
}

void SetThreadIdType(CUpti_ActivityThreadIdType type) { g_thread_id_type.store(type); }

CUpti_ActivityThreadIdType GetThreadIdType() {
  return static_cast<CUpti_ActivityThreadIdType>(g_thread_id_type.load());
}

void PushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  t_external_ids[kind].push_back(id);
}

bool PopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
  auto& ids = t_external_ids[kind];
  if (ids.empty()) return false;
  if (last_id != nullptr) *last_id = ids.back();
  ids.pop_back();
  return true;
}

void RecordApi(const SimgpuApiRecord& api) {
  bool runtime = api.domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  bool recorded = runtime ? (api.cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE &&
                             g_runtime_api[api.cbid].load(std::memory_order_relaxed))
                          : (api.cbid < CUPTI_DRIVER_TRACE_CBID_SIZE &&
                             g_driver_api[api.cbid].load(std::memory_order_relaxed));
  if (!recorded) return;
  if (On(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
    for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
      if (t_external_ids[kind].empty()) continue;
      CUpti_ActivityExternalCorrelation e;
      std::memset(&e, 0, sizeof(e));
      e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      e.externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
      e.externalId = t_external_ids[kind].back();
      e.correlationId = api.correlation_id;
      Append(e);
    }
  }
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof(a));
  a.kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = api.cbid;
  a.start = TimestampFromMonotonic(api.start_ns);
  a.end = TimestampFromMonotonic(api.end_ns);
  a.processId = api.process_id;
  // Real CUPTI's default thread id is pthread_self() (truncated to 32 bits); SYSTEM is gettid().
  // This hook runs on the calling thread, so pthread_self() is the caller's.
  a.threadId = GetThreadIdType() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
                   ? api.thread_id
                   : static_cast<uint32_t>(pthread_self());
  a.correlationId = api.correlation_id;
  a.returnValue = static_cast<uint32_t>(api.return_value);
  Append(a);
}

void RecordOp(const SimgpuOpRecord& op) {
  LearnContext(op);
  switch (op.kind) {
    case SIMGPU_OP_KERNEL:
    case SIMGPU_OP_COLLECTIVE:
      RecordKernel(op);
      break;
    case SIMGPU_OP_MEMCPY:
      RecordMemcpy(op);
      break;
    case SIMGPU_OP_MEMSET:
      RecordMemset(op);
      break;
    case SIMGPU_OP_SYNC:
      RecordSync(op);
      break;
    case SIMGPU_OP_MEMORY_ALLOC:
    case SIMGPU_OP_MEMORY_FREE:
      RecordMemory(op);
      break;
    case SIMGPU_OP_STREAM_CREATED:
      RecordStream(op);
      break;
  }
}

}  // namespace simgpu_cupti
