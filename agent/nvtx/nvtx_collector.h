// nvtx_collector.h — NVTX ranges, marks and thread names, from the application's threads to the
// trace. nvtx_injection.h fills NVTX's callback tables with functions that call the
// collector; the TraceWriter drains it as a ChunkContributor.
//
// Hot path (an NVTX call on an application thread): one thread-local pointer, one clock read, a
// bounded copy of the message into the thread's preallocated range stack (push) or one record
// into the thread's SPSC ring (pop, end, mark). No malloc, no lock, no system call, no I/O.
// The only slow paths are a thread's first NVTX call (it claims a slot of the pool with one CAS,
// one gettid, one pthread_setspecific) and the registration calls (domain create, register
// string), which allocate and never free: the handles they return must stay valid for ever.
//
// Limits, each overflow counted (Stats.other_dropped, and nvtx_* counters here), never blocking:
//   kMaxThreads threads with NVTX activity alive at once; kMaxDepth open push/pop ranges per
//   thread (deeper pushes are not recorded, their pops are matched by count); kMaxNameBytes bytes
//   of a message (longer ones are cut); kRingBytes of closed ranges per thread between two drains
//   (10 ms); kStartEndSlots start/end ranges open at once in the process.
//
// Before the agent is active. The agent activates at the first CUDA call, but NVTX calls may come
// first. Ranges are recorded from the first NVTX call whatever the agent's state: they wait in the
// rings (bounded; a full ring drops) and the first drain after activation writes them, so a range
// opened before activation and closed after it has its true start. Nothing is written if the
// agent never activates.
//
// Push/pop ranges belong to the thread that pushed them; start/end ranges to the thread that
// started them (the record is written by the ending thread, with the starter's tid). A mark is a
// range of zero duration.
//
// Fork: the child keeps the forking thread's open ranges and forgets everything else (the other
// threads are gone; records still in rings belong to the parent's trace).
//
// Thread safety: the Nvtx* functions from any thread at any time; DrainInto/AddStats on the
// writer thread (serialised by the Agent's writer mutex). The collector lives in static storage,
// constant-initialised, and is never destroyed (calls may race with exit).
#ifndef GPUSTALL_AGENT_NVTX_NVTX_COLLECTOR_H_
#define GPUSTALL_AGENT_NVTX_NVTX_COLLECTOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/writer/chunk_contributor.h"

namespace gs {
namespace nvtx {

inline constexpr int kMaxThreads = 128;
inline constexpr int kMaxDepth = 64;
inline constexpr int kMaxNameBytes = 128;
inline constexpr size_t kRingBytes = 32 << 10;
inline constexpr size_t kStartEndSlots = 1024;  // a power of two

// What a range carries besides its times. `registered` and `domain` are handles returned by
// RegisterString/CreateDomain (nullptr: none / the default domain); the message is `name`
// (not NUL-terminated, at most kMaxNameBytes) unless `registered` is set.
struct RangeAttributes {
  const char* name = nullptr;
  size_t name_len = 0;
  const void* registered = nullptr;
  const void* domain = nullptr;
  uint32_t category = 0;
  uint32_t color = 0;  // ARGB; 0 = none
};

// Counters, cumulative for the process.
struct NvtxCounters {
  uint64_t ranges = 0;            // ranges and marks recorded
  uint64_t ring_full = 0;         // closed ranges dropped: the thread's ring was full
  uint64_t too_deep = 0;          // pushes beyond kMaxDepth (not recorded)
  uint64_t no_slot = 0;           // NVTX calls of threads beyond kMaxThreads (not recorded)
  uint64_t start_table_full = 0;  // start/end ranges not tracked (kStartEndSlots open at once)
  uint64_t unmatched = 0;         // pops without a push, ends of unknown ids
  uint64_t Dropped() const { return ring_full + too_deep + no_slot + start_table_full; }
};

class NvtxCollector final : public ChunkContributor {
 public:
  constexpr NvtxCollector() = default;

  // The process's collector.
  static NvtxCollector& Instance();

  // Called by InitializeInjectionNvtx2 (once per NVTX instance, i.e. per module that uses NVTX):
  // maps the pool the first time. Returns false if it cannot (NVTX then stays a no-op).
  bool EnsureStarted();
  // True once NVTX has been injected into this process (CaptureInfo.nvtx).
  bool started() const { return pool_.load(std::memory_order_acquire) != nullptr; }

  // --- application threads (hot path) ---
  // Return the 0-based level of the range pushed/popped, or a negative value on error (NVTX's
  // convention; NVTX passes it through to the caller).
  int Push(const RangeAttributes& attributes);
  int Pop(const void* domain);
  uint64_t Start(const RangeAttributes& attributes);  // the range id (never 0)
  void End(uint64_t id);
  void Mark(const RangeAttributes& attributes);
  void NameThread(uint32_t tid, const char* name, size_t name_len);

  // --- writer thread ---
  size_t DrainInto(ChunkBuilder* builder) override;
  void AddStats(gpustall::trace::Stats* stats) override;
  NvtxCounters counters() const;

  // On demand (GS_ON_DEMAND=1), the agent says when no capture window is open: ranges that close
  // then are not kept (they belong to no trace, and would fill the rings), while ranges still open
  // keep their start, so a range opened before a window and closed inside it is whole.
  void SetBetweenWindows(bool between) { between_windows_.store(between, std::memory_order_relaxed); }

  // fork() child side (pthread_atfork, registered by EnsureStarted).
  void OnForkChild();

 private:
  struct Pool;
  struct ThreadSlot;
  ThreadSlot* Slot();         // the calling thread's slot, claimed on first use; may be null
  ThreadSlot* ClaimSlot();
  static void ReleaseSlot(void* slot);  // pthread key destructor
  bool WriteRange(ThreadSlot* writer_slot, uint64_t tid, uint64_t start_ns, uint64_t end_ns,
                  const RangeAttributes& attributes, uint32_t depth);

  std::atomic<Pool*> pool_{nullptr};
  std::atomic<bool> starting_{false};
  std::atomic<bool> between_windows_{false};
  std::atomic<uint64_t> next_id_{1};
  std::atomic<uint64_t> no_slot_{0}, start_table_full_{0}, unmatched_{0};

  // Writer-thread state (created on the first drain; leaked at exit like everything here).
  struct WriterState;
  WriterState* writer_ = nullptr;
};

// The text of a handle returned by RegisterString / CreateDomain ("" for nullptr).
const char* RegisteredStringText(const void* handle);
const char* DomainName(const void* domain);
// Registration (allocates; never freed). Return opaque handles.
const void* RegisterString(const void* domain, const char* text, size_t len);
const void* CreateDomain(const char* name, size_t len);

}  // namespace nvtx

// True when NVTX ranges will reach this process's trace: NVTX was injected already, or
// NVTX_INJECTION64_PATH names the library this code is part of (so the first NVTX call of any
// module will inject it). For CaptureInfo.nvtx at activation. Allocates: not for hot paths.
bool NvtxCaptureExpected();

}  // namespace gs

#endif  // GPUSTALL_AGENT_NVTX_NVTX_COLLECTOR_H_
