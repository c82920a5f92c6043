#include "agent/record/ring_recorder.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace gs {
namespace {

// Per-thread state. Trivially destructible (no __cxa_thread_atexit registration, which
// allocates) and initial-exec (no __tls_get_addr allocation on a thread's first access, even if
// libgsagent.so was dlopen'ed by the CUDA driver; it needs only a few bytes of the static TLS
// surplus glibc reserves for that).
struct ThreadSlot {
  ThreadRing* ring;
  uint64_t generation;
  bool busy;  // inside RecordApiCall: a re-entrant call (e.g. from a signal handler) returns
};
__attribute__((tls_model("initial-exec"))) thread_local ThreadSlot t_slot;

std::atomic<uint64_t> g_next_generation{1};

// pthread key destructor, on the exiting thread: the writer drains and recycles the ring.
// Other libraries' key destructors may run after ours and still make CUDA calls (a cuBLAS handle
// destroyed at thread exit); those must not write into a ring that the writer may already have
// handed to another thread, so this thread records nothing from here on.
void OnThreadExit(void* ring) {
  t_slot.busy = true;
  t_slot.ring = nullptr;
  if (ring != nullptr) RingPool::MarkExited(static_cast<ThreadRing*>(ring));
}

// Every record type that carries a stack has a 64-byte event first (ring.h).
constexpr size_t kEventBytes = 64;
static_assert(sizeof(ApiCallEvent) == kEventBytes && sizeof(HostWaitEvent) == kEventBytes,
              "one record layout for every stacked event");
constexpr size_t kRecordHeaderBytes = sizeof(RingRecordHeader) + kEventBytes;

// How far above the call site's stack pointer a return address is looked for (stack reuse).
constexpr uintptr_t kReuseScanBytes = 256 * 1024;

// The slot search and check read the thread's own live stack word by word, callers' locals and
// AddressSanitizer's redzones between them included: uninstrumented (tools/sanitize builds).
#define GS_READS_WHOLE_STACK __attribute__((no_sanitize_address))

// The index of an entry that still describes this call from `site`: same site, same limit, this
// epoch, every return address still in its slot. -1 otherwise. A site at one stack pointer may
// have several entries: different call chains of the same depth (two operators whose paths to the
// launch have frames of the same sizes) each keep their own.
GS_READS_WHOLE_STACK inline int FindReusable(const ThreadRing& ring, const CallSite& site, int max_pcs,
                                             uint32_t epoch) {
  const StackReuseTable& table = *ring.reuse;
  const int first = StackReuseTable::SetOf(site.pc, site.cfa) * StackReuseTable::kWays;
  for (int e = first; e < first + StackReuseTable::kWays; ++e) {
    const StackReuseTable::Entry& c = table.entries[e];
    if (c.site_pc != site.pc || c.site_cfa != site.cfa || c.count == 0) continue;
    if (c.max_pcs != max_pcs || c.epoch != epoch) continue;
    const StackReuseTable::Frames& f = table.frames[e];
    bool same = true;
    for (int i = 0; i < c.count && same; ++i) {
      same = *reinterpret_cast<const volatile uint64_t*>(f.slots[i]) == f.pcs[i];
    }
    if (same) return e;
  }
  return -1;
}

// After an unwind for a known site (FindReusable found no entry for this call): keeps `pcs` in an
// empty or stale way of the site's set, else the set's next way round robin, and finds each PC's
// slot, scanning up from the site's stack pointer inside the thread's stack. Leaves nothing to
// reuse if the stack does not start at the site, or a PC is not found (a frame whose return
// address is not on the stack). Returns the entry's index, or -1 if it was left empty.
GS_READS_WHOLE_STACK __attribute__((noinline)) int Remember(ThreadRing* ring, const uint64_t* pcs, int n, int max_pcs,
                                       const CallSite& site, uint32_t epoch) {
  StackReuseTable& table = *ring->reuse;
  const int set = StackReuseTable::SetOf(site.pc, site.cfa);
  const int first = set * StackReuseTable::kWays;
  int e = -1;
  for (int i = first; i < first + StackReuseTable::kWays && e < 0; ++i) {
    const StackReuseTable::Entry& c = table.entries[i];
    if (c.count == 0 || c.epoch != epoch || c.max_pcs != max_pcs) e = i;
  }
  if (e < 0) e = first + table.next[set]++ % StackReuseTable::kWays;
  StackReuseTable::Entry& c = table.entries[e];
  StackReuseTable::Frames& f = table.frames[e];
  c.count = 0;
  if (n <= 0 || n > StackReuseTable::kPcs || pcs[0] != site.pc) return -1;
  const uintptr_t slot0 = site.cfa - sizeof(uint64_t);
  if (ring->stack_high == 0 || slot0 < ring->stack_low || site.cfa > ring->stack_high) return -1;
  if (*reinterpret_cast<const uint64_t*>(slot0) != pcs[0]) return -1;
  uintptr_t end = ring->stack_high;
  if (end - slot0 > kReuseScanBytes) end = slot0 + kReuseScanBytes;
  f.slots[0] = slot0;
  f.pcs[0] = pcs[0];
  uintptr_t at = slot0 + sizeof(uint64_t);
  for (int i = 1; i < n; ++i) {
    while (at + sizeof(uint64_t) <= end && *reinterpret_cast<const uint64_t*>(at) != pcs[i])
      at += sizeof(uint64_t);
    if (at + sizeof(uint64_t) > end) return -1;
    f.slots[i] = at;
    f.pcs[i] = pcs[i];
    at += sizeof(uint64_t);
  }
  c.site_pc = site.pc;
  c.site_cfa = site.cfa;
  c.max_pcs = max_pcs;
  c.epoch = epoch;
  c.count = n;
  return e;
}

}  // namespace

RingRecorder::RingRecorder(RingPool* pool, const StackCapturer* stacks, int stack_depth,
                           size_t activity_capacity, PythonStackReader* python)
    : pool_(pool),
      stacks_(stacks),
      python_(python),
      depth_(stack_depth),
      generation_(g_next_generation.fetch_add(1, std::memory_order_relaxed)) {
  has_exit_key_ = pthread_key_create(&exit_key_, &OnThreadExit) == 0;
  activities_.Init(activity_capacity);
}

RingRecorder::~RingRecorder() {
  if (has_exit_key_) pthread_key_delete(exit_key_);
}

inline void RingRecorder::Record(RingRecordType type, const void* event, bool capture_stack, int skip_frames,
                                 const CallSite* site, bool claim_ring) {
  ThreadSlot& slot = t_slot;
  if (slot.busy || !enabled_.load(std::memory_order_relaxed)) return;
  slot.busy = true;
  ThreadRing* ring = slot.ring;
  if (__builtin_expect(ring == nullptr || slot.generation != generation_, 0)) ring = claim_ring ? ClaimRing() : nullptr;
  if (ring != nullptr) {
    const bool want_stack = capture_stack && stacks_->mode() != StackMode::kNone;
    // A non-Python process pays this one predictable branch (the reader's state is kNotPython).
    const bool want_python = capture_stack && python_ != nullptr && python_->enabled();
    // One frame more than kept, to tell a stack that ends at the limit from a truncated one.
    const int max_pcs = want_stack ? depth_ + 1 : 0;
    const int max_python = want_python ? kMaxPythonFrames : 0;
    uint8_t* p = ring->ring.BeginWrite(kRecordHeaderBytes +
                                       static_cast<size_t>(max_pcs + max_python) * sizeof(uint64_t));
    if (__builtin_expect(p == nullptr, 0)) {
      // Only this thread writes the counter: a plain increment, published relaxed.
      ring->dropped.store(ring->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      std::memcpy(p + sizeof(RingRecordHeader), event, kEventBytes);
      int n = 0;
      uint8_t flags = 0;
      uint8_t reuse_entry = 0;
      if (want_stack) {
        uint64_t* pcs = reinterpret_cast<uint64_t*>(p + kRecordHeaderBytes);
        const uint32_t epoch = reuse_epoch_.load(std::memory_order_relaxed);
        const int reuse = site != nullptr ? FindReusable(*ring, *site, max_pcs, epoch) : -1;
        if (reuse >= 0) {
          // The entry's PCs, not copied: the reader has them from the entry's defining record.
          n = ring->reuse->entries[reuse].count;
          ++ring->stack_reuses;
          flags = kRingFlagStackReused;
          reuse_entry = static_cast<uint8_t>(reuse);
        } else {
          // libunwind may set errno (its address checks use mincore/msync); the application must
          // never see that.
          const int saved_errno = errno;
          // skip_frames + 1: the first PC Capture reports is in this function.
          n = stacks_->Capture(pcs, max_pcs, skip_frames + 1, ring->stack_low, ring->stack_high);
          errno = saved_errno;
          ++ring->stack_unwinds;
          const int entry = site != nullptr ? Remember(ring, pcs, n, max_pcs, *site, epoch) : -1;
          if (entry >= 0) {
            flags = kRingFlagStackDefinesReuse;
            reuse_entry = static_cast<uint8_t>(entry);
          }
        }
        if (n > depth_) {
          n = depth_;
          flags |= kRingFlagStackTruncated;
        }
      }
      const int stored = (flags & kRingFlagStackReused) != 0 ? 0 : n;  // PCs in this record
      int py = 0;
      if (__builtin_expect(want_python, 0)) {
        // Right after the stored PCs (the writer derives the count from the record's size).
        bool py_truncated = false;
        const int saved_errno = errno;
        py = python_->Capture(
            reinterpret_cast<PythonFrameRef*>(p + kRecordHeaderBytes + static_cast<size_t>(stored) * sizeof(uint64_t)),
            kMaxPythonFrames, &py_truncated);
        errno = saved_errno;
        if (py_truncated) flags |= kRingFlagPythonTruncated;
      }
      auto* header = reinterpret_cast<RingRecordHeader*>(p);
      header->size = static_cast<uint32_t>(kRecordHeaderBytes + static_cast<size_t>(stored + py) * sizeof(uint64_t));
      header->type = type;
      header->flags = flags;
      header->count = static_cast<uint8_t>(n);  // at most the depth limit, 128
      header->reuse_entry = reuse_entry;
      ring->ring.CommitWrite(header->size);
      ring->recorded.store(ring->recorded.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }
  slot.busy = false;
}

void RingRecorder::RecordApiCall(const ApiCallEvent& event, bool capture_stack, int skip_frames) {
  Record(kRingApiCall, &event, capture_stack, skip_frames, nullptr, true);
}

void RingRecorder::RecordApiCallFrom(const ApiCallEvent& event, bool capture_stack, int skip_frames,
                                     const CallSite& site) {
  Record(kRingApiCall, &event, capture_stack, skip_frames, &site, true);
}

void RingRecorder::RecordHostWait(const HostWaitEvent& event, bool capture_stack, int skip_frames,
                                  const CallSite& site, bool any_thread) {
  Record(kRingHostWait, &event, capture_stack, skip_frames, &site, any_thread);
}

__attribute__((noinline)) ThreadRing* RingRecorder::ClaimRing() {
  const int saved_errno = errno;  // pthread_getattr_np reads /proc for the main thread
  ThreadRing* ring = ClaimRingUnguarded();
  errno = saved_errno;
  return ring;
}

ThreadRing* RingRecorder::ClaimRingUnguarded() {
  ThreadSlot& slot = t_slot;
  // A ring of an older recorder (before a fork-reset, or another test's) is not ours to use;
  // an older recorder's pool is leaked, never reused.
  slot.ring = nullptr;
  slot.generation = generation_;
  ThreadRing* ring = pool_->Claim();
  if (ring == nullptr) {
    // No ring: this record is dropped (counted by Claim); the next call tries again.
    slot.generation = 0;
    return nullptr;
  }
  ring->tid = static_cast<uint64_t>(syscall(SYS_gettid));
  ring->stack_low = ring->stack_high = 0;
  // Bounds for the fp walker, and for stack reuse's slot search in either mode.
  if (stacks_->mode() != StackMode::kNone)
    StackCapturer::CurrentThreadStackBounds(&ring->stack_low, &ring->stack_high);
  // A recycled ring: the previous owner's stacks are not this thread's.
  for (StackReuseTable::Entry& c : ring->reuse->entries) c.count = 0;
  pool_->Publish(ring);
  if (has_exit_key_) pthread_setspecific(exit_key_, ring);
  slot.ring = ring;
  return ring;
}

void RingRecorder::RecordGpuActivities(const GpuActivityEvent* activities, size_t count) {
  if (!enabled_.load(std::memory_order_relaxed)) return;
  activities_.Add(activities, count);
}

void RingRecorder::AddDropped(uint64_t cupti_dropped, uint64_t other_dropped) {
  cupti_dropped_.fetch_add(cupti_dropped, std::memory_order_relaxed);
  other_dropped_.fetch_add(other_dropped, std::memory_order_relaxed);
}

void RingRecorder::SetCaptureMode(const char* mode, const char* detail) {
  std::lock_guard<std::mutex> lock(mode_mu_);
  mode_.mode = mode != nullptr ? mode : "";
  mode_.detail = detail != nullptr ? detail : "";
  mode_changed_ = true;
}

void RingRecorder::SetCudaVersions(const char* cuda_runtime, uint32_t cupti_cuda_major, uint32_t cupti_version) {
  std::lock_guard<std::mutex> lock(mode_mu_);
  mode_.cuda_runtime = cuda_runtime != nullptr ? cuda_runtime : "";
  mode_.cupti_cuda_major = cupti_cuda_major;
  mode_.cupti_version = cupti_version;
  mode_changed_ = true;
}

bool RingRecorder::TakeCaptureMode(CaptureMode* out) {
  std::lock_guard<std::mutex> lock(mode_mu_);
  if (!mode_changed_) return false;
  *out = mode_;
  mode_changed_ = false;
  return true;
}

bool RingRecorder::CallingThreadInRecord() { return t_slot.busy; }

bool RingRecorder::CallingThreadHasRing() { return t_slot.ring != nullptr; }

void RingRecorder::DiscardPending() {
  for (size_t i = 0; i < pool_->ring_count(); ++i) {
    ThreadRing& ring = pool_->ring(i);
    const int state = ring.state.load(std::memory_order_acquire);
    if (state != ThreadRing::kOwned && state != ThreadRing::kExited) continue;
    ring.ring.Drain([](const RingRecordHeader&) {});
    if (state == ThreadRing::kExited) RingPool::Recycle(&ring);
  }
  std::vector<PendingActivity> stale;
  activities_.TakeAll(&stale);
}

}  // namespace gs
