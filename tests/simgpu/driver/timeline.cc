// timeline.cc — devices, streams, events and the device timeline in real time.
//
// Scheduling happens at submission, under one mutex: an op starts at the latest of
//   submit time + SIMGPU_DEVICE_LATENCY_NS, its stream's ready time (+ SIMGPU_STREAM_GAP_NS),
//   the device barrier (cudaMalloc/cudaHostAlloc), and, legacy default stream rules:
//     an op on the legacy stream waits for every blocking stream of its device;
//     an op on a blocking stream (created without cudaStreamNonBlocking, or a per-thread
//     default stream) waits for the legacy stream.
// and ends duration later. cudaStreamWaitEvent raises the stream's ready time to the event's
// time. Since every duration is known up front, the schedule never changes after submission.
//
// One device thread serves all devices. Each op wakes it twice: at its start it moves the op's
// bytes (so a large copy's memmove overlaps its modelled duration instead of adding to it), at
// its end it reports the op (hooks + truth) and marks it done. Events are handled in
// (time, seq) order; a dependent op starts no earlier than what it depends on ends and was
// submitted later, so bytes move in dependency order. An op submitted now starts in the future,
// so the order never goes back in time.
//
// Collectives (simgpuCollective) are the exception: an op's end is known only once every rank of
// its group has started the same launch (collective_rendezvous.h). Such an op is scheduled with
// its start, publishes it, and stays *untimed* until a resolver thread sees the rendezvous
// complete; it then ends at the latest rank's start + duration. Work that depends on an untimed
// op (later ops on its stream, the legacy-stream rules, a device barrier, a stream waiting on an
// event recorded behind it) is *deferred*: held in its device's FIFO, in submission order, and
// timed — from its own submit time, as if the end had been known — when what it waits for is
// timed. Work that depends on nothing untimed is scheduled at once, so other streams keep running
// while a collective waits, as on a real GPU.
//
// Lazy completions. A GPU finishes work without a host thread: nothing on the host wakes at each
// kernel's end. The device thread here does, to report the end (CUPTI's record, the truth log)
// and mark it done, and in a launch-bound loop of 2 us kernels that was a wake every few kernels,
// a quarter of the process's CPU (26,000 context switches in 1.6 s of CPU, workload_launch_bound
// --steps 1000): host CPU a real device does not take, and that competes with the application
// and the tools on a small machine. So the end of a kernel or an event record (nothing to move,
// no host code, no fault) may be reported up to SIMGPU_COMPLETION_BATCH_NS late (default 1 ms):
// the device thread sleeps until the oldest such end is that old and then reports every end due,
// in one wake, with the modelled times. What the host sees stays exact: while a host thread waits
// (a synchronize, WaitOp, exit) every end is handled on time (Timeline::waiters), a query
// (cudaStreamQuery, cudaEventQuery, cudaEventElapsedTime) finds work done once its end has passed,
// reported or not (a GPU's query reads a completion the device wrote; it does not wait: a query
// that waited for this thread's report returned milliseconds late on a loaded 2-core machine,
// idle inside cudaEventQuery that no host code had caused), unless an exact op is overdue (a
// fault must not be missed: DoneNowLocked), and cuptiActivityFlushAll first has every end so far
// reported (simgpuDriverReportEnded), as NVIDIA's flush delivers the records of all completed
// work. Only CUPTI's records between flushes come later, by up to that time, which CUPTI's
// buffering allows anyway (records reach the tool when a buffer completes).
//
// Host waits. CUDA's default scheduling, cudaDeviceScheduleAuto (CU_CTX_SCHED_AUTO), "uses a
// heuristic based on the number of active CUDA contexts in the process C and the number of
// logical processors in the system P. If C > P, then CUDA will yield to other OS threads when
// waiting for the device, otherwise CUDA will not yield while waiting for results and actively
// spin on the processor" (CUDA Runtime API, cudaSetDeviceFlags; the Driver API's cuCtxCreate
// alike): a synchronize returns within microseconds of the work's end. Two sleeps in series here
// (the device thread's until the end, then the waiter's until the device thread's notify) made
// it 30-50 us late on this project's 2-core virtual machines, 50-110 us with the agent, and a
// 32 KiB pageable copy (5 us on the device) a 50-80 us call: a timed sleep overruns by the
// thread's timer slack (50 us by default, prctl(2) PR_SET_TIMERSLACK), and a futex wake of a
// thread on an idle core takes 20-30 us there. So the device thread runs with a timer slack of
// 1 ns (its sleeps then overrun by ~25 us), and while a host thread waits (Timeline::waiters) it
// sleeps only until kHostWaitSpinNs before its next op's time and spins the rest, and the waiter
// likewise before the device thread's next wake
// (Timeline::device_wakes_at), spinning while the device thread works at most kHostWaitSpinNs
// at a time: the CPU spent is the last stretch of each wait, not the whole wait as CUDA's spin
// does. cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) keeps the sleeping wait
// (SetHostWaitsBlock), as NVIDIA's "block the CPU thread on a synchronization primitive" does.
// A query's or a flush's wait for the report of ends that have passed (Lazy completions) is no
// modelled wait and does not spin (AwaitReportLocked): a tool that polls events with
// cudaEventQuery, as the agent's event-pair fallback does, spun a core on it (that fallback's
// launch loop +124% CPU against +69% with sleeping waits, run_launch_cost_bench).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <mutex>
#include <queue>
#include <set>
#include <thread>
#include <vector>

#include <sys/prctl.h>

#include "driver/api_scope.h"
#include "driver/collective_rendezvous.h"
#include "driver/internal.h"
#include "driver/spinning_mutex.h"

namespace simgpu {

struct OpHandle {
  enum Kind { kKernel, kCopy, kMemset, kMarker, kFree, kHostFunc } kind;
  struct Device* dev = nullptr;
  Stream* stream = nullptr;
  uint64_t seq = 0, submit_ns = 0, start_ns = 0, end_ns = 0, duration_ns = 0;
  uint64_t wake_ns = 0;  // when the device thread next handles it: start, then end
  bool started = false;  // bytes moved; guarded by Timeline::mu
  // Its end may be reported late, while no host thread waits ("Lazy completions" above).
  bool lazy = false;
  uint32_t corr = 0, tid = 0;
  // The outermost API call that submitted it (api_scope.h): truth log submit_api/submit_domain.
  const char* submit_api = nullptr;
  int submit_domain = 0;
  bool done = false;  // guarded by Timeline::mu
  // kernel
  const KernelInfo* kernel = nullptr;
  dim3 grid, block;
  // Its resources when launched (a later simgpuKernelResources or cudaFuncSetAttribute does not
  // change a launch already made) and the launch's dynamic shared memory.
  uint32_t registers_per_thread = 0, static_shared_bytes = 0, dynamic_shared_bytes = 0;
  bool shmem_limit_optin = false;
  // copy / memset / free
  CopyArgs copy{};
  uint8_t copy_kind = 0, src_kind = 0, dst_kind = 0;
  int memset_value = 0;
  uint64_t bytes = 0;
  void* free_ptr = nullptr;
  void (*host_fn)(void*) = nullptr;
  void* host_fn_data = nullptr;
  // Scheduling state (guarded by Timeline::mu): `timed` once start and end are known; `deferred`
  // while it waits in its device's FIFO for an untimed op it depends on.
  bool timed = true;
  bool deferred = false;
  bool after_previous = false;  // its stream had work before it (SIMGPU_STREAM_GAP_NS)
  std::shared_ptr<OpHandle> wait_on;  // cudaStreamWaitEvent marker: the event's record
  // collectives
  CollectiveGroup* group = nullptr;
  uint64_t collective_index = 0;
  uint64_t wait_ns = 0;              // latest rank's start - this rank's start
  cudaError_t fail = cudaSuccess;    // the rendezvous failed: the device's sticky error
  // A node of a graph replay (graphs.cc): CUPTI's graphId / graphNodeId; 0 otherwise.
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

struct Stream {
  struct Device* dev;
  uint32_t id;
  unsigned flags;
  int priority;
  bool legacy;
  bool per_thread;
  uint64_t ready_ns = 0;
  std::shared_ptr<OpHandle> last;
  std::deque<OpHandle*> untimed;  // its ops not yet timed, in order (a suffix of the stream)
  std::atomic<Graph*> capture{nullptr};  // the graph it is capturing into (graphs.cc), or NULL
};

struct Event {
  struct Device* dev;
  unsigned flags;
  uint32_t id;
  std::shared_ptr<OpHandle> marker;  // the last record
};

struct Device {
  int index;
  Stream* legacy;
  std::vector<Stream*> streams;  // created and per-thread streams (not legacy), live
  uint64_t barrier_ns = 0;
  uint64_t all_ready_ns = 0;
  std::set<uint64_t> pending;    // seqs submitted and not yet done
  std::deque<std::shared_ptr<OpHandle>> deferred;  // submission order
  bool barrier_pending = false;  // a DeviceBarrier behind untimed work: its time is unknown
  uint64_t barrier_seq = 0;      // the first seq behind that barrier
  cudaError_t sticky = cudaSuccess;
  char context_object[64];       // its address is the CUcontext handle
};

namespace {

struct ByWakeTime {
  bool operator()(const std::shared_ptr<OpHandle>& a, const std::shared_ptr<OpHandle>& b) const {
    if (a->wake_ns != b->wake_ns) return a->wake_ns > b->wake_ns;
    return a->seq > b->seq;
  }
};

struct Timeline {
  SpinningMutex mu;
  std::condition_variable_any work_cv;  // device thread: new work
  std::condition_variable_any done_cv;  // host waiters: an op completed
  std::priority_queue<std::shared_ptr<OpHandle>, std::vector<std::shared_ptr<OpHandle>>, ByWakeTime>
      heap;
  // Lazy ops (their end only), apart: the device thread sleeps past the oldest one's end.
  std::priority_queue<std::shared_ptr<OpHandle>, std::vector<std::shared_ptr<OpHandle>>, ByWakeTime>
      lazy_heap;
  int waiters = 0;  // host threads waiting for an op's end (AwaitLocked): no end is reported late
  // Of them, the modelled waits (a synchronize, a blocking copy: Host waits), for which the device
  // thread spins; not a query's or a flush's wait for the report of an end that has passed.
  int host_waiters = 0;
  uint64_t last_wait_end_ns = 0;  // when the last Waiter finished (Host waits: the idle spin)
  int lazy_in_flight = 0;  // lazy ops taken off lazy_heap and not yet done
  std::atomic<uint32_t> device_pid{0};  // the process whose device thread serves this timeline
  uint64_t next_seq = 1;
  std::vector<Device*> devices;
  std::set<Stream*> live_streams;
  std::vector<Stream*> destroyed_streams;  // kept: queued ops still point at them
  // Event handles have a lock of their own (taken inside mu where both are needed, never the
  // other way round): checking one, at every event call, must not wait for the device thread,
  // which holds mu while it reports work; a driver's handle check does not wait for its GPU.
  SpinningMutex events_mu;
  std::set<const Event*> live_events;  // owned: deleted by DestroyEvent; guarded by events_mu
  std::atomic<uint32_t> next_stream_id{13};  // CUPTI-like: 7 is the NULL stream
  std::atomic<uint32_t> next_event_id{1};
  bool reporting = true;
  // When the sleeping device thread will next wake on its own (UINT64_MAX: idle, or busy).
  // Submitters wake it only for an op due earlier: back-to-back launches cost no futex wake.
  uint64_t device_wakes_at = 0;
  // Copy bandwidths, bytes/s: [kind 1..3][pinned 0/1].
  double bw[4][2] = {};
  // Collectives started and waiting for the other ranks; the resolver thread serves them.
  std::vector<std::shared_ptr<OpHandle>> unresolved;
  std::condition_variable_any resolver_cv;
  bool resolver_running = false;
};

Timeline& T() {
  static Timeline* t = new Timeline;  // never freed: the device thread outlives static dtors
  return *t;
}

bool IsBlocking(const Stream* s) { return !s->legacy && !(s->flags & cudaStreamNonBlocking); }

// True when `s` has an untimed op submitted before `seq`.
bool BlockedBefore(const Stream* s, uint64_t seq) {
  return !s->untimed.empty() && s->untimed.front()->seq < seq;
}

bool AnyStreamBlockedBefore(const Device* d, uint64_t seq) {
  if (BlockedBefore(d->legacy, seq)) return true;
  for (const Stream* other : d->streams) {
    if (BlockedBefore(other, seq)) return true;
  }
  return false;
}

// A device barrier behind untimed work is placed once that work is timed.
void SettleBarrierLocked(Device* d) {
  if (d->barrier_pending && !AnyStreamBlockedBefore(d, d->barrier_seq)) {
    d->barrier_pending = false;
    d->barrier_ns = std::max(d->barrier_ns, d->all_ready_ns);
  }
}

// Whether `op` depends on an op whose end is not known yet.
bool MustDeferLocked(const OpHandle& op) {
  const Stream* s = op.stream;
  const Device* d = s->dev;
  if (BlockedBefore(s, op.seq)) return true;
  if (d->barrier_pending && op.seq >= d->barrier_seq) return true;
  if (op.wait_on && !op.wait_on->timed) return true;
  if (s->legacy) {
    for (const Stream* other : d->streams) {
      if (IsBlocking(other) && BlockedBefore(other, op.seq)) return true;
    }
  } else if (IsBlocking(s) && BlockedBefore(d->legacy, op.seq)) {
    return true;
  }
  return false;
}

void StartResolverLocked();

// A kernel that raises the device's sticky error at its end.
bool Faults(const OpHandle& op) {
  return op.kind == OpHandle::kKernel && (op.kernel->faults || op.fail != cudaSuccess);
}

// When the device thread must handle `op` (see "Lazy completions" above). Caller holds T().mu.
uint64_t DueLocked(const OpHandle& op) {
  return op.lazy && T().waiters == 0 ? op.wake_ns + GetConfig().completion_batch_ns : op.wake_ns;
}

// Computes start/end of an op whose dependencies are all timed, and queues it (a collective of a
// multi-rank group: publishes its start and waits for the resolver instead). Caller holds T().mu.
void TimeLocked(const std::shared_ptr<OpHandle>& op) {
  Timeline& t = T();
  const Config& c = GetConfig();
  Stream* s = op->stream;
  Device* d = s->dev;
  if (op->deferred) {
    s->untimed.pop_front();  // it is the front: nothing before it on `s` is untimed
    op->deferred = false;
  }
  if (op->wait_on) s->ready_ns = std::max(s->ready_ns, op->wait_on->end_ns);
  uint64_t start = op->submit_ns + c.device_latency_ns;
  start = std::max(start, s->ready_ns + (op->after_previous ? c.stream_gap_ns : 0));
  start = std::max(start, d->barrier_ns);
  if (s->legacy) {
    for (Stream* other : d->streams) {
      if (IsBlocking(other)) start = std::max(start, other->ready_ns);
    }
  } else if (IsBlocking(s)) {
    start = std::max(start, d->legacy->ready_ns);
  }
  op->start_ns = start;
  if (op->group != nullptr) {
    // The collective occupies its stream from `start` until every rank has started it.
    op->timed = false;
    s->untimed.push_front(op.get());
    PublishCollectiveStart(op->group, op->collective_index, start);
    t.unresolved.push_back(op);
    StartResolverLocked();
    return;
  }
  op->timed = true;
  op->end_ns = start + op->duration_ns;
  s->ready_ns = op->end_ns;
  d->all_ready_ns = std::max(d->all_ready_ns, op->end_ns);
  // Only ops that touch memory or run host code need the device thread at their start.
  op->started = op->kind == OpHandle::kKernel || op->kind == OpHandle::kMarker;
  op->wake_ns = op->started ? op->end_ns : op->start_ns;
  // A kernel that faults sets the device's sticky error at its end: never late.
  op->lazy = c.completion_batch_ns > 0 && op->started && !Faults(*op);
  (op->lazy ? t.lazy_heap : t.heap).push(op);
  if (DueLocked(*op) < t.device_wakes_at) {
    t.device_wakes_at = 0;  // it is awake until it sleeps again and says until when
    t.work_cv.notify_one();
  }
}

// Queues `op`: timed at once, or deferred behind the untimed work it depends on. Caller holds
// T().mu.
void ScheduleLocked(const std::shared_ptr<OpHandle>& op) {
  Timeline& t = T();
  Stream* s = op->stream;
  Device* d = s->dev;
  op->dev = d;
  op->seq = t.next_seq++;
  op->after_previous = s->last != nullptr;
  s->last = op;
  d->pending.insert(op->seq);
  SettleBarrierLocked(d);
  if (MustDeferLocked(*op)) {
    op->timed = false;
    op->deferred = true;
    s->untimed.push_back(op.get());
    d->deferred.push_back(op);
    return;
  }
  TimeLocked(op);
}

// Times every deferred op whose dependencies became timed, in submission order, until nothing
// changes (an event on one device can hold a stream of another). Caller holds T().mu.
void RetryDeferredLocked() {
  Timeline& t = T();
  for (bool progress = true; progress;) {
    progress = false;
    for (Device* d : t.devices) {
      std::deque<std::shared_ptr<OpHandle>> fifo;
      fifo.swap(d->deferred);
      for (auto& op : fifo) {
        SettleBarrierLocked(d);
        if (MustDeferLocked(*op)) {
          d->deferred.push_back(std::move(op));
        } else {
          TimeLocked(op);
          progress = true;
        }
      }
    }
  }
}

// Ends a collective: at the latest rank's start + duration, or, when the rendezvous failed, now
// with the device's sticky error. Caller holds T().mu.
void ResolveLocked(const std::shared_ptr<OpHandle>& op, bool ok, uint64_t latest_start_ns) {
  Timeline& t = T();
  Stream* s = op->stream;
  Device* d = s->dev;
  if (ok) {
    uint64_t begin = std::max(latest_start_ns, op->start_ns);
    op->wait_ns = begin - op->start_ns;
    op->end_ns = begin + op->duration_ns;
  } else {
    op->fail = cudaErrorLaunchTimeout;
    op->end_ns = std::max(NowNs(), op->start_ns);
    op->wait_ns = op->end_ns - op->start_ns;
  }
  op->timed = true;
  if (!s->untimed.empty() && s->untimed.front() == op.get()) s->untimed.pop_front();
  s->ready_ns = std::max(s->ready_ns, op->end_ns);
  d->all_ready_ns = std::max(d->all_ready_ns, op->end_ns);
  op->started = true;
  op->wake_ns = op->end_ns;
  t.heap.push(op);
  t.device_wakes_at = 0;
  t.work_cv.notify_one();
  RetryDeferredLocked();
}

// The resolver thread: waits on each started collective's rendezvous (oldest first) and ends it.
void ResolverMain() {
  Timeline& t = T();
  std::unique_lock<SpinningMutex> lock(t.mu);
  for (;;) {
    if (t.unresolved.empty()) {
      t.resolver_cv.wait(lock);
      continue;
    }
    std::shared_ptr<OpHandle> op = t.unresolved.front();
    lock.unlock();
    uint64_t latest = 0;
    // Short waits, then the next one: a collective of another group may complete first.
    RendezvousState state = AwaitCollective(op->group, op->collective_index, 10000000, &latest);
    if (state == RendezvousState::kPending && NowNs() >= op->start_ns + CollectiveTimeoutNs()) {
      std::fprintf(stderr,
                   "simgpu: collective %s launch %llu: not every rank arrived within "
                   "SIMGPU_COLLECTIVE_TIMEOUT; failing it (cudaErrorLaunchTimeout)\n",
                   op->kernel->group.c_str(),
                   static_cast<unsigned long long>(op->collective_index));
      AbortCollectiveGroup(op->group, op->collective_index);
      state = RendezvousState::kFailed;
    }
    lock.lock();
    if (state == RendezvousState::kPending) {
      // Look at the others first: rotate.
      t.unresolved.erase(t.unresolved.begin());
      t.unresolved.push_back(op);
      continue;
    }
    t.unresolved.erase(std::find(t.unresolved.begin(), t.unresolved.end(), op));
    ResolveLocked(op, state == RendezvousState::kComplete, latest);
  }
}

void StartResolverLocked() {
  Timeline& t = T();
  if (!t.resolver_running) {
    t.resolver_running = true;
    std::thread(ResolverMain).detach();  // runs until the process exits
  }
  t.resolver_cv.notify_one();
}

void MoveBytes(const OpHandle& op) {
  switch (op.kind) {
    case OpHandle::kCopy: {
      auto* dst = static_cast<char*>(op.copy.dst);
      auto* src = static_cast<const char*>(op.copy.src);
      for (size_t row = 0; row < op.copy.height; ++row) {
        std::memmove(dst + row * op.copy.dpitch, src + row * op.copy.spitch, op.copy.width);
      }
      break;
    }
    case OpHandle::kMemset: {
      auto* dst = static_cast<char*>(op.copy.dst);
      for (size_t row = 0; row < op.copy.height; ++row) {
        std::memset(dst + row * op.copy.dpitch, op.memset_value, op.copy.width);
      }
      break;
    }
    case OpHandle::kFree:
      DeviceFree(op.free_ptr, op.corr);
      break;
    case OpHandle::kHostFunc:
      op.host_fn(op.host_fn_data);
      break;
    default:
      break;
  }
}

void ReportCompleted(const OpHandle& op, bool fault) {
  SimgpuOpRecord r{};
  OpTruthExtra x;
  x.submit_ns = op.submit_ns;
  x.submit_tid = op.tid;
  x.fault = fault;
  x.submit_api = op.submit_api;
  x.submit_domain = op.submit_domain;
  r.submit_domain = op.submit_domain;
  r.device_id = static_cast<uint32_t>(op.dev->index);
  r.context_id = ContextId(op.dev->index);
  r.stream_id = op.stream->id;
  r.start_ns = op.start_ns;
  r.end_ns = op.end_ns;
  r.correlation_id = op.corr;
  r.event_id = 0xFFFFFFFFu;
  switch (op.kind) {
    case OpHandle::kKernel:
      r.kind = op.kernel->collective ? SIMGPU_OP_COLLECTIVE : SIMGPU_OP_KERNEL;
      r.wait_ns = op.wait_ns;
      r.name = op.kernel->name.c_str();
      x.demangled = op.kernel->demangled.c_str();
      r.grid[0] = static_cast<int32_t>(op.grid.x);
      r.grid[1] = static_cast<int32_t>(op.grid.y);
      r.grid[2] = static_cast<int32_t>(op.grid.z);
      r.block[0] = static_cast<int32_t>(op.block.x);
      r.block[1] = static_cast<int32_t>(op.block.y);
      r.block[2] = static_cast<int32_t>(op.block.z);
      r.graph_id = op.graph_id;
      r.graph_node_id = op.graph_node_id;
      r.registers_per_thread = op.registers_per_thread;
      r.static_shared_bytes = op.static_shared_bytes;
      r.dynamic_shared_bytes = op.dynamic_shared_bytes;
      r.shared_memory_executed = kSharedMemPerMultiprocessor;
      r.shmem_limit_optin = op.shmem_limit_optin ? 1 : 0;
      break;
    case OpHandle::kCopy:
      r.kind = SIMGPU_OP_MEMCPY;
      r.graph_id = op.graph_id;
      r.graph_node_id = op.graph_node_id;
      r.bytes = op.bytes;
      r.copy_kind = op.copy_kind;
      r.src_kind = op.src_kind;
      r.dst_kind = op.dst_kind;
      r.flags = op.copy.async ? 1 : 0;  // CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC
      break;
    case OpHandle::kMemset:
      r.kind = SIMGPU_OP_MEMSET;
      r.graph_id = op.graph_id;
      r.graph_node_id = op.graph_node_id;
      r.bytes = op.bytes;
      r.memset_value = static_cast<uint32_t>(op.memset_value);
      r.memory_kind = op.dst_kind;
      r.flags = op.copy.async ? 1 : 0;  // CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC
      break;
    default:
      return;  // markers and stream-ordered frees are not device activity
  }
  ReportOp(r, x);
}

thread_local bool t_device_thread = false;

// Host waits (above): how long before a wake the sleeping stops (twice the device thread's
// usual overrun), and the spin's step.
constexpr uint64_t kHostWaitSpinNs = 50000;
constexpr uint64_t kSpinStepNs = 2000;
std::atomic<bool> g_host_waits_block{false};

bool HostWaitsSpin() {
  return !GetConfig().host_waits_block && !g_host_waits_block.load(std::memory_order_relaxed);
}

std::chrono::steady_clock::time_point SteadyAt(uint64_t ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

void DeviceThreadMain() {
  t_device_thread = true;
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // Host waits (above); this thread's own setting
  Timeline& t = T();
  std::unique_lock<SpinningMutex> lock(t.mu);
  // Lazy ops that ended by this time are handled now (set once the oldest one is due, so that
  // they go together, in one wake, and not one by one as each becomes due).
  uint64_t lazy_through = 0;
  // Since when the queues have been empty, while this thread spins on them (Host waits: a loop
  // of blocking calls, such as pageable copies, submits the next op a few microseconds after the
  // last one's end; a sleep here would add a wake-up to each). Only after a host wait: a loop
  // that never waits would lose a core to it each time the device catches up with the host.
  uint64_t idle_since = 0;
  for (;;) {
    if (t.heap.empty() && t.lazy_heap.empty()) {
      const uint64_t now = NowNs();
      const bool after_wait = t.host_waiters > 0 || now - t.last_wait_end_ns < kHostWaitSpinNs;
      if (HostWaitsSpin() && after_wait && (idle_since == 0 || now - idle_since < kHostWaitSpinNs)) {
        if (idle_since == 0) idle_since = now;
        lock.unlock();
        WaitUntilNs(now + kSpinStepNs);
        lock.lock();
        continue;
      }
      lock.unlock();
      TruthFlush();  // idle: a good moment to write the truth log
      lock.lock();
      if (t.heap.empty() && t.lazy_heap.empty()) {
        t.device_wakes_at = UINT64_MAX;
        t.work_cv.wait_for(lock, std::chrono::milliseconds(100));
        t.device_wakes_at = 0;
      }
      continue;
    }
    idle_since = 0;
    const uint64_t now = NowNs();
    if (!t.lazy_heap.empty() && DueLocked(*t.lazy_heap.top()) <= now) lazy_through = now;
    // The earliest op to handle now: exact ones when they are due, lazy ones through
    // `lazy_through`, in (time, seq) order between them.
    const bool exact_ready = !t.heap.empty() && t.heap.top()->wake_ns <= now;
    const bool lazy_ready = !t.lazy_heap.empty() && t.lazy_heap.top()->wake_ns <= lazy_through;
    if (!exact_ready && !lazy_ready) {
      uint64_t wake = UINT64_MAX;
      if (!t.heap.empty()) wake = t.heap.top()->wake_ns;
      if (!t.lazy_heap.empty()) wake = std::min(wake, DueLocked(*t.lazy_heap.top()));
      // A host thread waits: on time, as the GPU is (Host waits, above). In short steps, so that
      // work submitted meanwhile for an earlier time is seen.
      const bool spin = t.host_waiters > 0 && HostWaitsSpin();
      if (spin && wake <= now + kHostWaitSpinNs) {
        lock.unlock();
        WaitUntilNs(std::min(wake, now + kSpinStepNs));
        lock.lock();
        continue;
      }
      t.device_wakes_at = wake;
      t.work_cv.wait_until(lock, SteadyAt(spin ? wake - kHostWaitSpinNs : wake));
      t.device_wakes_at = 0;
      continue;
    }
    const bool take_lazy = lazy_ready && (!exact_ready || ByWakeTime()(t.heap.top(), t.lazy_heap.top()));
    auto& from = take_lazy ? t.lazy_heap : t.heap;
    std::shared_ptr<OpHandle> op = from.top();
    from.pop();
    if (take_lazy) ++t.lazy_in_flight;
    Device* d = op->dev;
    // Work queued behind a fault never runs, as on a real device whose context is corrupted.
    bool dropped = d->sticky != cudaSuccess;
    if (!op->started) {
      op->started = true;
      lock.unlock();
      if (!dropped) MoveBytes(*op);
      lock.lock();
      op->wake_ns = op->end_ns;
      t.heap.push(op);
      continue;
    }
    cudaError_t fault_error = op->fail != cudaSuccess ? op->fail : cudaErrorIllegalAddress;
    bool fault = !dropped && Faults(*op);
    bool reporting = t.reporting;
    lock.unlock();
    if (!dropped && reporting) ReportCompleted(*op, fault);  // before `done`: a sync sees it
    if (TruthFlushDue()) TruthFlush();
    lock.lock();
    if (fault) d->sticky = fault_error;
    op->done = true;
    if (op->lazy) --t.lazy_in_flight;
    d->pending.erase(op->seq);
    t.done_cv.notify_all();
  }
}

Stream* NewStreamLocked(Device* d, unsigned flags, int priority, bool per_thread) {
  auto* s = new Stream{d, T().next_stream_id++, flags, priority, false, per_thread, 0, nullptr, {}};
  d->streams.push_back(s);
  T().live_streams.insert(s);
  return s;
}

void ReportStreamCreated(Stream* s, uint32_t corr) {
  SimgpuOpRecord r{};
  r.kind = SIMGPU_OP_STREAM_CREATED;
  r.device_id = static_cast<uint32_t>(s->dev->index);
  r.context_id = ContextId(s->dev->index);
  r.stream_id = s->id;
  r.start_ns = r.end_ns = NowNs();
  r.correlation_id = corr;
  r.event_id = 0xFFFFFFFFu;
  r.flags = static_cast<uint8_t>(s->flags);
  OpTruthExtra x;
  x.submit_ns = r.start_ns;
  x.submit_tid = CurrentTid();
  x.api = s->per_thread ? "per-thread default stream" : "cudaStreamCreate";
  ReportOp(r, x);
}

Stream* PerThreadStream(int device) {
  static thread_local std::vector<Stream*> mine;
  if (mine.size() <= static_cast<size_t>(device)) mine.resize(device + 1, nullptr);
  if (mine[device] == nullptr) {
    Timeline& t = T();
    {
      std::lock_guard<SpinningMutex> lock(t.mu);
      mine[device] = NewStreamLocked(t.devices[device], 0, 0, true);
    }
    ReportStreamCreated(mine[device], 0);
  }
  return mine[device];
}

// A host thread waiting for ends, for its lifetime (held with T().mu): while one waits, no op's
// end is reported late, and a device thread asleep past a lazy op's end is woken to report it.
// `host_wait`: a modelled wait (Timeline::host_waiters), not one for a report.
class Waiter {
 public:
  explicit Waiter(bool host_wait) : host_wait_(host_wait) {
    Timeline& t = T();
    ++t.waiters;
    if (host_wait_) ++t.host_waiters;
    if (t.device_wakes_at != 0) {
      t.device_wakes_at = 0;
      t.work_cv.notify_one();
    }
  }
  ~Waiter() {
    Timeline& t = T();
    --t.waiters;
    if (host_wait_) {
      --t.host_waiters;
      t.last_wait_end_ns = NowNs();
    }
  }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

 private:
  const bool host_wait_;
};

// Waits (holding `lock`) until `done()`, as a Waiter: spinning near the device thread's next
// wake and while it works, sleeping otherwise (Host waits, above).
template <typename Done>
void AwaitLocked(std::unique_lock<SpinningMutex>& lock, Done done) {
  if (done()) return;
  Waiter waiter(/*host_wait=*/true);
  Timeline& t = T();
  if (!HostWaitsSpin()) {
    t.done_cv.wait(lock, done);
    return;
  }
  uint64_t spin_since = 0;
  while (!done()) {
    const uint64_t now = NowNs();
    const uint64_t device_wakes_at = t.device_wakes_at;  // 0: awake; UINT64_MAX: nothing queued
    if (device_wakes_at == UINT64_MAX) {
      // Nothing on the device's queue: what this waits for is deferred (a collective's
      // rendezvous, an event not recorded yet) and comes from another thread.
      spin_since = 0;
      t.done_cv.wait(lock);
    } else if (device_wakes_at != 0 && device_wakes_at > now + kHostWaitSpinNs) {
      spin_since = 0;
      t.done_cv.wait_until(lock, SteadyAt(device_wakes_at - kHostWaitSpinNs));
    } else if (spin_since == 0 || now - spin_since < kHostWaitSpinNs) {
      if (spin_since == 0) spin_since = now;
      lock.unlock();
      WaitUntilNs(now + kSpinStepNs);
      lock.lock();
    } else {
      // The device thread has been busy for a while (a large copy's bytes): sleep a stretch.
      spin_since = 0;
      t.done_cv.wait_until(lock, SteadyAt(now + kHostWaitSpinNs));
    }
  }
}

// Waits (holding `lock`) until `done()` for the device thread's report of ends that have passed
// (a flush, the exit's drain, a query behind an overdue op): no modelled wait, so no spin either.
template <typename Done>
void AwaitReportLocked(std::unique_lock<SpinningMutex>& lock, Done done) {
  if (done()) return;
  Waiter waiter(/*host_wait=*/false);
  T().done_cv.wait(lock, done);
}

// Waits (holding `lock`) until every op in `ops` is done.
void WaitAllLocked(std::unique_lock<SpinningMutex>& lock,
                   const std::vector<std::shared_ptr<OpHandle>>& ops) {
  for (const auto& op : ops) {
    if (op) AwaitLocked(lock, [&] { return op->done; });
  }
}

// Whether `op` is done as the host sees it now: a lazy op is once its end has passed, whether
// the device thread has reported it yet or not (Lazy completions, above). Unless an exact op is
// overdue: a fault (a device's sticky error) is set when the device thread handles its kernel,
// so then the report is waited for, as a late fault must not read as success.
bool DoneNowLocked(std::unique_lock<SpinningMutex>& lock, const std::shared_ptr<OpHandle>& op) {
  if (op->done) return true;
  const uint64_t now = NowNs();
  if (!op->lazy || !op->timed || op->end_ns > now) return false;
  const Timeline& t = T();
  if (t.heap.empty() || t.heap.top()->wake_ns > now) return true;
  AwaitReportLocked(lock, [&] { return op->done; });
  return true;
}

std::vector<std::shared_ptr<OpHandle>> StreamFrontierLocked(Stream* s) {
  std::vector<std::shared_ptr<OpHandle>> ops{s->last};
  if (s->legacy) {
    for (Stream* other : s->dev->streams) {
      if (IsBlocking(other)) ops.push_back(other->last);
    }
  }
  return ops;
}

std::shared_ptr<OpHandle> NewOp(OpHandle::Kind kind, Stream* s, uint32_t corr) {
  auto op = std::make_shared<OpHandle>();
  op->kind = kind;
  op->stream = s;
  op->corr = corr;
  op->tid = CurrentTid();
  const ApiFrame& api = OutermostApi();
  op->submit_api = api.name;
  op->submit_domain = api.domain;
  return op;
}

uint64_t CopyDurationNs(size_t bytes, double bandwidth) {
  return GetConfig().copy_latency_ns +
         static_cast<uint64_t>(static_cast<double>(bytes) / bandwidth * 1e9);
}

bool DeviceAccessible(MemKind k) {
  return k == MemKind::kDevice || k == MemKind::kManaged || k == MemKind::kPinned;
}

// [p, p + extent) must lie inside a known allocation when p is simgpu memory.
bool InBounds(const PointerInfo& info, const void* p, size_t extent) {
  if (info.base == 0) return true;  // pageable host memory: the caller's responsibility
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return a + extent <= info.base + info.size;
}

}  // namespace

// ---- setup -------------------------------------------------------------------------------------

void TimelineStart(int devices) {
  Timeline& t = T();
  const Config& c = GetConfig();
  t.bw[cudaMemcpyHostToDevice][1] = c.bw_h2d_pinned;
  t.bw[cudaMemcpyHostToDevice][0] = c.bw_h2d_pageable;
  t.bw[cudaMemcpyDeviceToHost][1] = c.bw_d2h_pinned;
  t.bw[cudaMemcpyDeviceToHost][0] = c.bw_d2h_pageable;
  t.bw[cudaMemcpyDeviceToDevice][0] = t.bw[cudaMemcpyDeviceToDevice][1] = c.bw_d2d;
  t.bw[cudaMemcpyHostToHost][0] = t.bw[cudaMemcpyHostToHost][1] = c.bw_h2h;
  for (int i = 0; i < devices; ++i) {
    auto* d = new Device;
    d->index = i;
    d->legacy = new Stream{d, 7, 0, 0, true, false, 0, nullptr, {}};
    t.devices.push_back(d);
  }
  t.device_pid.store(ProcessId(), std::memory_order_release);
  std::thread(DeviceThreadMain).detach();  // runs until the process exits
}

void TimelineDrainAtExit() {
  Timeline& t = T();
  std::unique_lock<SpinningMutex> lock(t.mu);
  uint64_t deadline = NowNs() + 30ull * 1000000000ull;  // a runaway queue must not hang exit
  {
    Waiter waiter(/*host_wait=*/false);  // every end on time from here
    for (Device* d : t.devices) {
      while (!d->pending.empty() && NowNs() < deadline) {
        t.done_cv.wait_for(lock, std::chrono::milliseconds(50));
      }
    }
  }
  t.reporting = false;  // the tool may be finalised after us
}

void ReportEndedOps() {
  if (t_device_thread) return;  // inside a hook: it cannot wait for itself
  Timeline& t = T();
  // Not started, or a forked child (threads do not survive fork): no device thread to wait for.
  if (t.device_pid.load(std::memory_order_acquire) != ProcessId()) return;
  std::unique_lock<SpinningMutex> lock(t.mu);
  const uint64_t now = NowNs();
  AwaitReportLocked(lock, [&] {
    return t.lazy_in_flight == 0 && (t.lazy_heap.empty() || t.lazy_heap.top()->wake_ns > now);
  });
}

double CopyBandwidth(int memcpy_kind, bool pinned) {
  std::lock_guard<SpinningMutex> lock(T().mu);
  return T().bw[memcpy_kind][pinned ? 1 : 0];
}

int SetCopyBandwidth(int memcpy_kind, int pinned, double bytes_per_second) {
  if (memcpy_kind < 1 || memcpy_kind > 3 || !(bytes_per_second > 0)) return -1;
  if (EnsureInitialized() != cudaSuccess) return -1;
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (memcpy_kind == cudaMemcpyDeviceToDevice) {
    T().bw[memcpy_kind][0] = T().bw[memcpy_kind][1] = bytes_per_second;
  } else {
    T().bw[memcpy_kind][pinned ? 1 : 0] = bytes_per_second;
  }
  return 0;
}

void* ContextHandle(int device) {
  Timeline& t = T();
  if (device < 0 || static_cast<size_t>(device) >= t.devices.size()) return nullptr;
  return t.devices[device]->context_object;
}

uint32_t ContextId(int device) { return static_cast<uint32_t>(device) + 1; }

namespace {
thread_local int t_current_device = 0;

// The device whose context handle is `context` (NULL: the calling thread's), or -1.
int DeviceOfContext(void* context) {
  Timeline& t = T();
  if (context == nullptr) return t_current_device;
  for (Device* d : t.devices) {
    if (static_cast<void*>(d->context_object) == context) return d->index;
  }
  return -1;
}
}  // namespace

int CurrentDevice() { return t_current_device; }
void SetCurrentDevice(int device) { t_current_device = device; }

void SetHostWaitsBlock(bool block) { g_host_waits_block.store(block, std::memory_order_relaxed); }

cudaError_t StickyError(int device) {
  Timeline& t = T();
  std::lock_guard<SpinningMutex> lock(t.mu);
  if (device < 0 || static_cast<size_t>(device) >= t.devices.size()) return cudaSuccess;
  return t.devices[device]->sticky;
}

// ---- streams -------------------------------------------------------------------------------------

Stream* ResolveStream(int device, cudaStream_t s, bool per_thread_default) {
  Timeline& t = T();
  if (device < 0 || static_cast<size_t>(device) >= t.devices.size()) return nullptr;
  if (s == nullptr) {
    return per_thread_default ? PerThreadStream(device) : t.devices[device]->legacy;
  }
  if (s == cudaStreamLegacy) return t.devices[device]->legacy;
  if (s == cudaStreamPerThread) return PerThreadStream(device);
  auto* candidate = reinterpret_cast<Stream*>(s);
  std::lock_guard<SpinningMutex> lock(t.mu);
  return t.live_streams.count(candidate) ? candidate : nullptr;
}

Stream* CreateStream(int device, unsigned flags, int priority, uint32_t corr) {
  Timeline& t = T();
  Stream* s;
  {
    std::lock_guard<SpinningMutex> lock(t.mu);
    s = NewStreamLocked(t.devices[device], flags, priority, false);
  }
  ReportStreamCreated(s, corr);
  return s;
}

void DestroyStream(Stream* s) {
  Timeline& t = T();
  std::lock_guard<SpinningMutex> lock(t.mu);
  t.live_streams.erase(s);
  auto& v = s->dev->streams;
  v.erase(std::remove(v.begin(), v.end(), s), v.end());
  t.destroyed_streams.push_back(s);
}

cudaStream_t StreamHandle(Stream* s) { return reinterpret_cast<cudaStream_t>(s); }
int StreamDevice(const Stream* s) { return s->dev->index; }
uint32_t StreamId(const Stream* s) { return s->id; }
unsigned StreamFlags(const Stream* s) { return s->flags; }
int StreamPriority(const Stream* s) { return s->priority; }

bool StreamIdle(Stream* s) {
  std::unique_lock<SpinningMutex> lock(T().mu);
  for (const auto& op : StreamFrontierLocked(s)) {
    if (op && !DoneNowLocked(lock, op)) return false;
  }
  return true;
}

cudaError_t SynchronizeStream(Stream* s) {
  // Synchronous calls are not permitted on a capturing stream, and they invalidate the capture
  // (CUDA Programming Guide, "Stream Capture": prohibited and unhandled operations).
  if (cudaError_t e = RefuseWhileCapturing(s)) return e;
  Timeline& t = T();
  std::unique_lock<SpinningMutex> lock(t.mu);
  WaitAllLocked(lock, StreamFrontierLocked(s));
  return s->dev->sticky;
}

cudaError_t SynchronizeDevice(int device) {
  Timeline& t = T();
  std::unique_lock<SpinningMutex> lock(t.mu);
  Device* d = t.devices[device];
  uint64_t target = t.next_seq - 1;  // everything submitted before this call
  AwaitLocked(lock, [&] { return d->pending.empty() || *d->pending.begin() > target; });
  return d->sticky;
}

void SynchronizeAllDevices() {
  for (int i = 0; i < DeviceCount(); ++i) SynchronizeDevice(i);
}

void DeviceBarrier(int device) {
  Timeline& t = T();
  std::lock_guard<SpinningMutex> lock(t.mu);
  Device* d = t.devices[device];
  if (AnyStreamBlockedBefore(d, t.next_seq)) {
    d->barrier_pending = true;  // placed when the untimed work before it is timed
    d->barrier_seq = t.next_seq;
    return;
  }
  d->barrier_ns = std::max(d->barrier_ns, d->all_ready_ns);
}

// ---- events ------------------------------------------------------------------------------------

Event* CreateEvent(int device, unsigned flags) {
  Timeline& t = T();
  auto* e = new Event{t.devices[device], flags, t.next_event_id++, nullptr};
  std::lock_guard<SpinningMutex> lock(t.events_mu);
  t.live_events.insert(e);
  return e;
}

bool IsEvent(const Event* e) {
  std::lock_guard<SpinningMutex> lock(T().events_mu);
  return T().live_events.count(e) != 0;
}

void DestroyEvent(Event* e) {
  // Nothing keeps a reference to an event: a stream that waited on it copied its time.
  std::lock_guard<SpinningMutex> lock(T().events_mu);
  if (T().live_events.erase(e)) delete e;
}

uint32_t EventId(const Event* e) { return e->id; }

cudaError_t RecordEvent(Event* e, Stream* s, uint32_t corr) {
  if (e->dev != s->dev) return cudaErrorInvalidResourceHandle;
  if (cudaError_t c = RefuseWhileCapturing(s)) return c;
  auto op = NewOp(OpHandle::kMarker, s, corr);
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  ScheduleLocked(op);
  e->marker = op;
  return cudaSuccess;
}

cudaError_t QueryEvent(Event* e) {
  std::unique_lock<SpinningMutex> lock(T().mu);
  if (e->dev->sticky != cudaSuccess) return e->dev->sticky;
  return !e->marker || DoneNowLocked(lock, e->marker) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t SynchronizeEvent(Event* e) {
  std::unique_lock<SpinningMutex> lock(T().mu);
  WaitAllLocked(lock, {e->marker});
  return e->dev->sticky;
}

cudaError_t EventElapsedMs(Event* start, Event* end, float* ms) {
  std::unique_lock<SpinningMutex> lock(T().mu);
  if ((start->flags & cudaEventDisableTiming) || (end->flags & cudaEventDisableTiming)) {
    return cudaErrorInvalidResourceHandle;
  }
  if (!start->marker || !end->marker) return cudaErrorInvalidResourceHandle;
  if (!DoneNowLocked(lock, start->marker) || !DoneNowLocked(lock, end->marker)) return cudaErrorNotReady;
  double diff = static_cast<double>(end->marker->end_ns) - static_cast<double>(start->marker->end_ns);
  *ms = static_cast<float>(diff / 1e6);
  return cudaSuccess;
}

cudaError_t StreamWaitEvent(Stream* s, Event* e) {
  if (cudaError_t c = RefuseWhileCapturing(s)) return c;
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (!e->marker) return cudaSuccess;  // never recorded: nothing to wait for
  // A zero-length marker that starts no earlier than the record ends (TimeLocked) makes the wait
  // visible to cudaStreamSynchronize/Query on `s`, and defers it while the record is untimed.
  auto op = NewOp(OpHandle::kMarker, s, 0);
  op->wait_on = e->marker;
  op->submit_ns = NowNs();
  ScheduleLocked(op);
  return cudaSuccess;
}

// ---- device work ---------------------------------------------------------------------------------

cudaError_t SubmitKernel(Stream* s, const LaunchArgs& a, uint32_t corr) {
  // The host pays for the launch call itself (real launches cost 5-20 us of CPU).
  WaitUntilNs(NowNs() + GetConfig().launch_host_ns);
  // On a capturing stream the launch becomes a node of the graph: nothing runs (graphs.cc).
  if (Graph* g = s->capture.load(std::memory_order_acquire)) return CaptureKernel(g, a);
  return ScheduleKernel(s, a, corr, 0, 0);
}

Graph* CapturingGraph(const Stream* s) { return s->capture.load(std::memory_order_acquire); }

void SetCapturingGraph(Stream* s, Graph* g) { s->capture.store(g, std::memory_order_release); }

bool IsLegacyStream(const Stream* s) { return s->legacy; }

cudaError_t RefuseWhileCapturing(Stream* s) {
  Graph* g = s->capture.load(std::memory_order_acquire);
  if (g == nullptr) return cudaSuccess;
  InvalidateCapture(g);
  return cudaErrorStreamCaptureUnsupported;
}

cudaError_t ScheduleKernel(Stream* s, const LaunchArgs& a, uint32_t corr, uint32_t graph_id,
                           uint64_t graph_node_id) {
  auto op = NewOp(OpHandle::kKernel, s, corr);
  op->graph_id = graph_id;
  op->graph_node_id = graph_node_id;
  op->kernel = a.kernel;
  op->grid = a.grid;
  op->block = a.block;
  op->registers_per_thread = a.kernel->registers_per_thread.load(std::memory_order_relaxed);
  op->static_shared_bytes = a.kernel->static_shared_bytes.load(std::memory_order_relaxed);
  op->dynamic_shared_bytes = static_cast<uint32_t>(a.shared_mem);  // validated: at most 227 KiB
  // CUPTI_FUNC_SHMEM_LIMIT_OPTIN: "User has opted for a higher dynamic shared memory limit"
  // (cupti_activity.h), i.e. the kernel may use more than the default 48 KiB per block.
  op->shmem_limit_optin =
      uint64_t{op->static_shared_bytes} + MaxDynamicSharedBytes(a.kernel) > kSharedMemPerBlock;
  op->duration_ns = a.kernel->duration_ns;
  if (a.kernel->collective) {
    op->group = AttachCollectiveGroup(a.kernel->group);  // NULL: a world of one rank
    if (op->group) op->collective_index = NextCollectiveIndex(op->group);
  }
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (s->dev->sticky != cudaSuccess) return s->dev->sticky;
  ScheduleLocked(op);
  return cudaSuccess;
}

cudaError_t ScheduleCapturedOp(Stream* s, const OpHandle& proto, uint32_t corr, uint32_t graph_id,
                               uint64_t graph_node_id) {
  auto op = NewOp(proto.kind, s, corr);
  op->graph_id = graph_id;
  op->graph_node_id = graph_node_id;
  op->copy = proto.copy;
  op->copy_kind = proto.copy_kind;
  op->src_kind = proto.src_kind;
  op->dst_kind = proto.dst_kind;
  op->memset_value = proto.memset_value;
  op->bytes = proto.bytes;
  op->duration_ns = proto.duration_ns;
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (s->dev->sticky != cudaSuccess) return s->dev->sticky;
  ScheduleLocked(op);
  return cudaSuccess;
}

cudaError_t SubmitCopy(Stream* s, const CopyArgs& a, uint32_t corr, bool* host_must_wait,
                       std::shared_ptr<OpHandle>* out) {
  *host_must_wait = false;
  out->reset();
  // On a capturing stream an async copy becomes a node of the graph (graphs.cc); a synchronous
  // one is prohibited and invalidates the capture.
  Graph* const capturing = s->capture.load(std::memory_order_acquire);
  if (capturing != nullptr && !a.async) return RefuseWhileCapturing(s);
  if (a.width == 0 || a.height == 0) return cudaSuccess;
  size_t dpitch = a.height > 1 ? a.dpitch : a.width;
  size_t spitch = a.height > 1 ? a.spitch : a.width;
  if (dpitch < a.width || spitch < a.width) return cudaErrorInvalidPitchValue;
  if (a.dst == nullptr || a.src == nullptr) return cudaErrorInvalidValue;
  PointerInfo dst = ClassifyPointer(a.dst), src = ClassifyPointer(a.src);
  bool src_dev = src.kind == MemKind::kDevice || src.kind == MemKind::kManaged;
  bool dst_dev = dst.kind == MemKind::kDevice || dst.kind == MemKind::kManaged;
  int kind = a.kind;
  switch (a.kind) {
    case cudaMemcpyDefault:
      kind = src_dev ? (dst_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                     : (dst_dev ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
      break;
    case cudaMemcpyHostToDevice:
      if (!DeviceAccessible(dst.kind)) return cudaErrorInvalidValue;
      break;
    case cudaMemcpyDeviceToHost:
      if (!DeviceAccessible(src.kind)) return cudaErrorInvalidValue;
      break;
    case cudaMemcpyDeviceToDevice:
      if (!DeviceAccessible(src.kind) || !DeviceAccessible(dst.kind)) return cudaErrorInvalidValue;
      break;
    case cudaMemcpyHostToHost:
      break;
    default:
      return cudaErrorInvalidMemcpyDirection;
  }
  size_t dextent = (a.height - 1) * dpitch + a.width, sextent = (a.height - 1) * spitch + a.width;
  if (!InBounds(dst, a.dst, dextent) || !InBounds(src, a.src, sextent)) {
    return cudaErrorInvalidValue;
  }
  auto op = NewOp(OpHandle::kCopy, s, corr);
  op->copy = a;
  op->copy.dpitch = dpitch;
  op->copy.spitch = spitch;
  op->bytes = static_cast<uint64_t>(a.width) * a.height;
  op->src_kind = static_cast<uint8_t>(src.kind);
  op->dst_kind = static_cast<uint8_t>(dst.kind);
  bool peer = a.peer_src_device >= 0 && a.peer_dst_device >= 0 &&
              a.peer_src_device != a.peer_dst_device;
  bool pageable = false;
  double bw;
  switch (kind) {
    case cudaMemcpyHostToDevice:
      pageable = src.kind == MemKind::kPageable;
      op->copy_kind = 1;  // CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
      bw = CopyBandwidth(kind, !pageable);
      break;
    case cudaMemcpyDeviceToHost:
      pageable = dst.kind == MemKind::kPageable;
      op->copy_kind = 2;  // DTOH
      bw = CopyBandwidth(kind, !pageable);
      break;
    case cudaMemcpyDeviceToDevice:
      op->copy_kind = peer ? 10 : 8;  // PTOP : DTOD
      bw = peer ? GetConfig().bw_peer : CopyBandwidth(kind, true);
      break;
    default:
      op->copy_kind = 9;  // HTOH
      bw = GetConfig().bw_h2h;
      break;
  }
  op->duration_ns = CopyDurationNs(op->bytes, bw);
  // Host blocking (NVIDIA's "API synchronization behavior"): sync copies block unless
  // device-to-device; async copies block when pageable memory must be staged (H2D: the host
  // copies into a staging buffer at pageable speed; D2H: fully synchronous) and host<->host.
  if (!a.async) {
    *host_must_wait = kind != cudaMemcpyDeviceToDevice;
  } else {
    *host_must_wait = pageable || kind == cudaMemcpyHostToHost;
    WaitUntilNs(NowNs() + GetConfig().api_host_ns);
  }
  if (capturing != nullptr) {
    // A node runs nothing now. Copies the host must take part in (pageable staging,
    // host-to-host) are not modelled as nodes: refused, as other unmodelled operations are.
    if (*host_must_wait) {
      *host_must_wait = false;
      return RefuseWhileCapturing(s);
    }
    return CaptureOp(capturing, op, 1);  // CU_GRAPH_NODE_TYPE_MEMCPY
  }
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (s->dev->sticky != cudaSuccess) return s->dev->sticky;
  ScheduleLocked(op);
  *out = op;
  return cudaSuccess;
}

cudaError_t SubmitMemset(Stream* s, void* dst, int value, size_t width, size_t height,
                         size_t pitch, bool async, uint32_t corr, bool* host_must_wait,
                         std::shared_ptr<OpHandle>* out) {
  *host_must_wait = false;
  out->reset();
  Graph* const capturing = s->capture.load(std::memory_order_acquire);  // as SubmitCopy
  if (capturing != nullptr && !async) return RefuseWhileCapturing(s);
  if (width == 0 || height == 0) return cudaSuccess;
  if (height > 1 && pitch < width) return cudaErrorInvalidPitchValue;
  size_t p = height > 1 ? pitch : width;
  PointerInfo info = ClassifyPointer(dst);
  if (!DeviceAccessible(info.kind) || !InBounds(info, dst, (height - 1) * p + width)) {
    return cudaErrorInvalidValue;
  }
  auto op = NewOp(OpHandle::kMemset, s, corr);
  op->copy.dst = dst;
  op->copy.width = width;
  op->copy.height = height;
  op->copy.dpitch = p;
  op->copy.async = async;
  op->memset_value = value & 0xff;
  op->bytes = static_cast<uint64_t>(width) * height;
  op->dst_kind = static_cast<uint8_t>(info.kind);
  op->duration_ns = CopyDurationNs(op->bytes, GetConfig().bw_memset);
  // "The synchronous memset functions are asynchronous with respect to the host except when
  // the target is pinned host memory or a Unified Memory region."
  *host_must_wait = !async && (info.kind == MemKind::kPinned || info.kind == MemKind::kManaged);
  if (async) WaitUntilNs(NowNs() + GetConfig().api_host_ns);
  if (capturing != nullptr) return CaptureOp(capturing, op, 2);  // CU_GRAPH_NODE_TYPE_MEMSET
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (s->dev->sticky != cudaSuccess) return s->dev->sticky;
  ScheduleLocked(op);
  *out = op;
  return cudaSuccess;
}

cudaError_t SubmitFreeAsync(Stream* s, void* p, uint32_t corr) {
  if (cudaError_t c = RefuseWhileCapturing(s)) return c;
  PointerInfo info = ClassifyPointer(p);
  if (info.base != reinterpret_cast<uintptr_t>(p) ||
      (info.kind != MemKind::kDevice && info.kind != MemKind::kManaged)) {
    return cudaErrorInvalidValue;
  }
  auto op = NewOp(OpHandle::kFree, s, corr);
  op->free_ptr = p;
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  ScheduleLocked(op);
  return cudaSuccess;
}

cudaError_t SubmitHostFunc(Stream* s, void (*fn)(void*), void* user, uint32_t corr) {
  if (cudaError_t c = RefuseWhileCapturing(s)) return c;
  auto op = NewOp(OpHandle::kHostFunc, s, corr);
  op->host_fn = fn;
  op->host_fn_data = user;
  op->submit_ns = NowNs();
  std::lock_guard<SpinningMutex> lock(T().mu);
  if (s->dev->sticky != cudaSuccess) return s->dev->sticky;
  ScheduleLocked(op);
  return cudaSuccess;
}

cudaError_t WaitOp(const std::shared_ptr<OpHandle>& op) {
  if (!op) return cudaSuccess;
  std::unique_lock<SpinningMutex> lock(T().mu);
  WaitAllLocked(lock, {op});
  return op->dev->sticky;
}

void ResetDevice(int device) {
  SynchronizeDevice(device);
  Timeline& t = T();
  {
    std::lock_guard<SpinningMutex> lock(t.mu);
    Device* d = t.devices[device];
    for (Stream* s : d->streams) {
      if (!s->per_thread) {
        t.live_streams.erase(s);
        t.destroyed_streams.push_back(s);
      }
    }
    d->streams.erase(std::remove_if(d->streams.begin(), d->streams.end(),
                                    [](Stream* s) { return !s->per_thread; }),
                     d->streams.end());
    std::lock_guard<SpinningMutex> events_lock(t.events_mu);
    for (auto it = t.live_events.begin(); it != t.live_events.end();) {
      if ((*it)->dev == d) {
        delete *it;
        it = t.live_events.erase(it);
      } else {
        ++it;
      }
    }
  }
  FreeAllOnDevice(device);
}

void RecordSync(uint32_t sync_type, int device, const Stream* s, const Event* e,
                uint64_t start_ns, uint64_t end_ns, uint32_t corr) {
  SimgpuOpRecord r{};
  r.kind = SIMGPU_OP_SYNC;
  r.device_id = static_cast<uint32_t>(device);
  r.context_id = ContextId(device);
  r.stream_id = s ? s->id : 0xFFFFFFFFu;
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.correlation_id = corr;
  r.sync_type = sync_type;
  r.event_id = e ? e->id : 0xFFFFFFFFu;
  OpTruthExtra x;
  x.submit_ns = start_ns;
  x.submit_tid = CurrentTid();
  ReportOp(r, x);
}

}  // namespace simgpu

extern "C" {

__attribute__((visibility("default"))) int simgpuDriverContextInfo(void* context,
                                                                   uint32_t* context_id,
                                                                   uint32_t* device_id) {
  int device = simgpu::DeviceOfContext(context);
  if (device < 0 || device >= static_cast<int>(simgpu::T().devices.size())) return -1;
  if (context_id) *context_id = simgpu::ContextId(device);
  if (device_id) *device_id = static_cast<uint32_t>(device);
  return 0;
}

__attribute__((visibility("default"))) int simgpuDriverStreamId(void* context, void* stream,
                                                                int per_thread,
                                                                uint32_t* stream_id) {
  int device = simgpu::DeviceOfContext(context);
  if (device < 0) return -1;
  simgpu::Stream* s =
      simgpu::ResolveStream(device, static_cast<cudaStream_t>(stream), per_thread != 0);
  if (s == nullptr) return -1;
  if (stream_id) *stream_id = s->id;
  return 0;
}

}  // extern "C"
