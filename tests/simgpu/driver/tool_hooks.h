/* tool_hooks.h — how simgpu's "driver" reports to a profiling tool (simgpu's libcupti.so.13).
 *
 * On a real system libcudart and libcupti both sit on libcuda.so.1, which fires API callbacks and
 * produces activity records. simgpu mirrors that shape: libsimgpu_driver.so holds the device
 * timeline; libcudart.so.13 (simgpu) reports every runtime API call through it; libcupti.so.13
 * (simgpu) installs these hooks and turns what it receives into real CUpti_* callbacks and records.
 *
 * All timestamps here are CLOCK_MONOTONIC nanoseconds (simgpuNowNs()); the CUPTI layer maps them
 * onto CUPTI's clock (CLOCK_REALTIME by default, or the registered timestamp callback).
 *
 * Threading: on_api and on_api_record run on the calling application thread; on_op runs on a
 * device thread. Hooks may be called concurrently and must be thread-safe. Hooks are installed
 * once (simgpuDriverSetToolHooks) and stay valid until replaced by NULL.
 */
#ifndef GPUSTALL_TESTS_SIMGPU_DRIVER_TOOL_HOOKS_H_
#define GPUSTALL_TESTS_SIMGPU_DRIVER_TOOL_HOOKS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One runtime or driver API call, seen at entry (site 0) and exit (site 1): the fields of
 * CUpti_CallbackData, plus the domain/cbid. A driver call made inside a runtime call (the runtime
 * implementing itself) is reported between that call's entry and exit, with its correlation id
 * (driver/api_scope.h). */
typedef struct SimgpuApiCallback {
  int site;                      /* CUPTI_API_ENTER (0) / CUPTI_API_EXIT (1) */
  int domain;                    /* CUPTI_CB_DOMAIN_RUNTIME_API (2) or DRIVER_API (1) */
  uint32_t cbid;                 /* real CUPTI cbid, e.g. CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 */
  const char* function_name;     /* e.g. "cudaMemcpy_v3020" as CUPTI reports it; static storage */
  const void* function_params;   /* pointer to the matching <api>_params struct; valid in the call.
                                  * NULL for APIs without arguments (cudaDeviceSynchronize, ...).
                                  * __cudaLaunchKernel(_ptsz)_v13000 (cbids 505/506) have no struct
                                  * in generated_cuda_runtime_api_meta.h: simgpu passes a
                                  * cudaLaunchKernel_v7000_params whose `func` is the cudaKernel_t. */
  void* function_return_value;   /* cudaError_t*; valid at exit only */
  const char* symbol_name;       /* kernel name for launches, else NULL */
  void* context;                 /* CUcontext handle of the simulated context */
  uint32_t context_uid;
  uint32_t correlation_id;       /* same value at enter and exit, and in every op it submitted */
  uint64_t* correlation_data;    /* per-call scratch shared between enter and exit */
} SimgpuApiCallback;

/* The runtime or driver API call as an activity (CUpti_ActivityAPI), emitted after its exit
 * callback. */
typedef struct SimgpuApiRecord {
  uint32_t cbid;
  int domain;
  uint64_t start_ns, end_ns;
  uint32_t process_id, thread_id;  /* thread_id: gettid() */
  uint32_t correlation_id;
  int32_t return_value;
} SimgpuApiRecord;

typedef enum SimgpuOpKind {
  SIMGPU_OP_KERNEL = 1,
  SIMGPU_OP_MEMCPY = 2,
  SIMGPU_OP_MEMSET = 3,
  SIMGPU_OP_SYNC = 4,          /* host synchronisation (CUpti_ActivitySynchronization2) */
  SIMGPU_OP_MEMORY_ALLOC = 5,  /* CUpti_ActivityMemory4, ALLOCATION */
  SIMGPU_OP_MEMORY_FREE = 6,   /* CUpti_ActivityMemory4, RELEASE */
  SIMGPU_OP_STREAM_CREATED = 7,
  SIMGPU_OP_COLLECTIVE = 8     /* a kernel whose start waited on other ranks */
} SimgpuOpKind;

/* One completed operation: a device op (kernel/memcpy/memset) when it finished on the device
 * timeline; a sync when the host came out of it; memory records at alloc/free time. */
typedef struct SimgpuOpRecord {
  SimgpuOpKind kind;
  const char* name;            /* kernel name (stable storage) or NULL */
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;          /* CUPTI stream id; 0xFFFFFFFF when not applicable */
  uint64_t start_ns, end_ns;   /* memory records: start_ns == end_ns == timestamp */
  uint64_t bytes;
  uint32_t correlation_id;
  uint8_t copy_kind;           /* CUpti_ActivityMemcpyKind */
  uint8_t src_kind, dst_kind;  /* CUpti_ActivityMemoryKind: PAGEABLE=1, PINNED=2, DEVICE=3, MANAGED=5 */
  uint8_t flags;               /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC etc. */
  uint32_t sync_type;          /* CUpti_ActivitySynchronizationType for SIMGPU_OP_SYNC */
  uint32_t event_id;           /* CUDA event id for event syncs, else 0xFFFFFFFF */
  int32_t grid[3], block[3];
  uint32_t memset_value;
  uint32_t memory_kind;        /* CUpti_ActivityMemoryKind for memory records and memsets */
  uint64_t address;
  uint64_t wait_ns;            /* collectives: time spent waiting for other ranks */
  /* Added by the cupti helper: peer copies (copy_kind PTOP = 10) become CUPTI MEMCPY2 records
   * (CUpti_ActivityMemcpyPtoP4), which name both devices. Left 0/0 (equal), libcupti reports
   * device_id for both. */
  uint32_t src_device_id, dst_device_id;
  /* Device ops: the domain of the outermost API call that submitted it (1 DRIVER_API for a
   * direct driver call, 2 RUNTIME_API for a runtime call, whose nested driver call shares its
   * correlation id); 0 when unknown. */
  int32_t submit_domain;
  /* Kernels replayed by a graph launch: CUPTI's graphId / graphNodeId (0 otherwise). */
  uint32_t graph_id;
  uint64_t graph_node_id;
  /* Kernels: what the launch asked of an SM (CUpti_ActivityKernel10's fields of these names).
   * registers_per_thread and static_shared_bytes: the kernel's, from its cubin (cuda/cubin.h) or
   * simgpuKernelResources, else 32 and 0; dynamic_shared_bytes: the launch's sharedMem argument;
   * shared_memory_executed: the shared memory carveout the launch ran with (the device's whole
   * per-SM shared memory); shmem_limit_optin: 1 when the kernel's shared memory limit was raised
   * above 48 KiB (cudaFuncAttributeMaxDynamicSharedMemorySize), CUPTI_FUNC_SHMEM_LIMIT_OPTIN. */
  uint32_t registers_per_thread;
  uint32_t static_shared_bytes;
  uint32_t dynamic_shared_bytes;
  uint32_t shared_memory_executed;
  uint8_t shmem_limit_optin;
} SimgpuOpRecord;

/* A node of a CUDA graph came to be, reported from inside the API call that made it, on the
 * calling thread (CUPTI's resource domain, tests/simgpu/CUPTI_CORRELATION.md fact 10):
 *   CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED (13): a kernel launched into a capturing stream became a
 *     node of the graph being captured (inside that launch call); also each node of an
 *     executable graph that cudaGraphInstantiate makes (inside it), just before
 *   CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED (20): that node is a copy of `original_node`.
 * Node and graph handles stay valid for the process's life (simgpu never frees them). */
typedef struct SimgpuGraphNodeEvent {
  uint32_t cbid;
  void* context;            /* CUcontext of the graph's device */
  void* graph;              /* CUgraph: the graph captured (or instantiated from) */
  void* graph_exec;         /* CUgraphExec for nodes made by an instantiation, else NULL */
  void* node;               /* CUgraphNode */
  void* original_node;      /* GRAPHNODE_CLONED: the node copied, else NULL */
  uint64_t node_id;         /* what cuptiGetGraphNodeId answers for `node` */
  uint64_t original_node_id;
  uint32_t graph_id;        /* what cuptiGetGraphId answers for `graph` */
  int node_type;            /* CUgraphNodeType: CU_GRAPH_NODE_TYPE_KERNEL (0) */
} SimgpuGraphNodeEvent;

typedef struct SimgpuToolHooks {
  void (*on_api)(const SimgpuApiCallback* cb);
  void (*on_api_record)(const SimgpuApiRecord* rec);
  void (*on_op)(const SimgpuOpRecord* op);
  void (*on_graph_node)(const SimgpuGraphNodeEvent* ev);  /* may be NULL */
} SimgpuToolHooks;

/* Installs (or, with NULL, removes) the hooks. Exported by libsimgpu_driver.so. */
void simgpuDriverSetToolHooks(const SimgpuToolHooks* hooks);

/* A fresh correlation id (never 0), as the driver assigns them. */
uint32_t simgpuDriverNextCorrelationId(void);

/* Returns once every op that has ended by now has gone to on_op (the device thread may report a
 * kernel's end late while no host thread waits: SIMGPU_COMPLETION_BATCH_NS). For
 * cuptiActivityFlushAll, which delivers every record of work completed on the device; referenced
 * weakly, like the queries below. No-op on the device thread (inside on_op). */
void simgpuDriverReportEnded(void);

/* Optional queries, added by the cupti helper for cuptiGetContextId / cuptiGetDeviceId /
 * cuptiGetStreamId(Ex). libcupti references them weakly: a driver that does not define them still
 * links, and those CUPTI calls then answer from what the hooks have shown so far.
 * Both return 0 on success and -1 when the handle is unknown; they may be called from any thread,
 * including from inside a hook.
 *   context: a CUcontext handle as passed in SimgpuApiCallback.context, or NULL for the calling
 *            thread's current context.
 *   stream:  a cudaStream_t/CUstream handle (NULL = the legacy default stream, or the per-thread
 *            stream when per_thread != 0; cudaStreamLegacy/cudaStreamPerThread are accepted too). */
int simgpuDriverContextInfo(void* context, uint32_t* context_id, uint32_t* device_id);
int simgpuDriverStreamId(void* context, void* stream, int per_thread, uint32_t* stream_id);

#ifdef __cplusplus
}  /* extern "C" */
#endif
#endif  /* GPUSTALL_TESTS_SIMGPU_DRIVER_TOOL_HOOKS_H_ */
