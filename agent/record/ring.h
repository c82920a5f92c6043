// ring.h — a single-producer/single-consumer byte ring of variable-size, 8-byte-aligned records.
//
// One ring belongs to one application thread (the producer) and is drained by the writer thread
// (the consumer). The producer reserves space, fills it in place (the stack is captured straight
// into the ring) and commits; the consumer sees only committed records. A record that does not
// fit before the end of the buffer is preceded by a padding record that runs to the end, so every
// record is contiguous.
//
// Full ring: BeginWrite returns nullptr and the caller counts a drop. The producer never waits.
// Memory ordering: the producer publishes `head_` with release after writing the bytes, the
// consumer publishes `tail_` with release after reading them; each side reads the other's index
// with acquire. head_ and tail_ count bytes since Init (they never wrap; 2^64 bytes is forever).
//
// Thread safety: BeginWrite/CommitWrite from the one producer thread; Drain from the one consumer
// thread; both may run concurrently. The ring does not own its memory.
#ifndef GPUSTALL_AGENT_RECORD_RING_H_
#define GPUSTALL_AGENT_RECORD_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gs {

// Every record starts with this header. `size` includes the header and is a multiple of 8.
struct RingRecordHeader {
  uint32_t size;
  uint8_t type;         // RingRecordType
  uint8_t flags;        // type-specific (RingRecordFlags for API calls and host waits)
  uint8_t count;        // type-specific (number of native PCs for API calls and host waits)
  uint8_t reuse_entry;  // API calls and host waits with a stack-reuse flag: the entry
};
static_assert(sizeof(RingRecordHeader) == 8, "ring records are 8-byte aligned");

enum RingRecordType : uint8_t {
  kRingPadding = 0,  // skip to the end of the buffer
  // RingRecordHeader, ApiCallEvent (64 bytes), `count` uint64_t native PCs (none when the flags
  // say kRingFlagStackReused), then the Python frames of the same capture (8-byte PythonFrameRef
  // each, innermost first). Their number is implied by `size` (size/8 - 9 - the PCs stored), so
  // a record without Python frames is laid out and sized exactly as before.
  kRingApiCall = 1,
  // The same layout with a HostWaitEvent (64 bytes) in place of the ApiCallEvent.
  kRingHostWait = 2,
};
enum RingRecordFlags : uint8_t {
  kRingFlagStackTruncated = 1,   // the native stack hit the depth limit
  kRingFlagPythonTruncated = 2,  // the Python frames are incomplete (depth limit, torn frame)
  // Stack reuse (ring_recorder.h): the native PCs were just unwound and are now the thread's reuse
  // entry `reuse_entry` ("defines"), or the stack is that entry's ("reused": `count` PCs,
  // not in the record; the Python frames follow the event directly). A ring is read in order, so
  // a reused record's PCs are those of its entry's last defining record (reused_stacks.h), and
  // the writer can take that record's stack id without comparing the words.
  kRingFlagStackDefinesReuse = 4,
  kRingFlagStackReused = 8,
};

class SpscRing {
 public:
  // `memory` is 8-byte aligned, `capacity` a power of two >= 64. Not thread-safe (setup only).
  void Init(uint8_t* memory, size_t capacity);
  size_t capacity() const { return capacity_; }

  // Producer: reserves `max_bytes` contiguous bytes (rounded up to 8) and returns where to write,
  // or nullptr when the ring has no room (the caller drops the record). The reservation is
  // invisible to the consumer until CommitWrite.
  uint8_t* BeginWrite(size_t max_bytes) {
    max_bytes = (max_bytes + 7) & ~size_t{7};
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const size_t pos = static_cast<size_t>(head) & (capacity_ - 1);
    const size_t to_end = capacity_ - pos;
    const size_t pad = max_bytes > to_end ? to_end : 0;
    if (head + pad + max_bytes - cached_tail_ > capacity_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head + pad + max_bytes - cached_tail_ > capacity_ || max_bytes > capacity_) return nullptr;
    }
    if (pad != 0) {
      auto* padding = reinterpret_cast<RingRecordHeader*>(data_ + pos);
      padding->size = static_cast<uint32_t>(pad);
      padding->type = kRingPadding;
    }
    pending_pad_ = pad;
    return data_ + ((pos + pad) & (capacity_ - 1));
  }

  // Producer: publishes the record written at the last BeginWrite; `bytes` <= the reservation
  // (rounded up to 8 here), and the first 8 bytes must be its RingRecordHeader.
  void CommitWrite(size_t bytes) {
    bytes = (bytes + 7) & ~size_t{7};
    const uint64_t head = head_.load(std::memory_order_relaxed) + pending_pad_ + bytes;
    head_.store(head, std::memory_order_release);
    // The next record's first cache lines (a record with a 30-frame stack spans five), for
    // writing: they were last touched by the consumer a whole ring ago (or never), so the stores
    // that fill them would otherwise wait for their ownership on the producer's next call; this
    // starts that wait now, between calls (tests/bench/intercept_cost: -25 ns a call without
    // stacks, BENCHMARKS.md).
    for (size_t line = 0; line < kPrefetchLines; ++line)
      __builtin_prefetch(data_ + (static_cast<size_t>(head + line * 64) & (capacity_ - 1)), 1, 3);
  }

  // Consumer: calls `visit(const RingRecordHeader&)` for every committed record, oldest first,
  // then frees their space. Returns the number of records visited. The record's bytes are valid
  // only during the call.
  template <typename Visit>
  size_t Drain(Visit&& visit) {
    const uint64_t head = head_.load(std::memory_order_acquire);
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    size_t visited = 0;
    while (tail < head) {
      const auto* record =
          reinterpret_cast<const RingRecordHeader*>(data_ + (static_cast<size_t>(tail) & (capacity_ - 1)));
      if (record->type != kRingPadding) {
        visit(*record);
        ++visited;
      }
      tail += record->size;
    }
    tail_.store(tail, std::memory_order_release);
    return visited;
  }

  // Either side: bytes committed and not yet drained (a snapshot).
  size_t used_bytes() const {
    return static_cast<size_t>(head_.load(std::memory_order_acquire) -
                               tail_.load(std::memory_order_acquire));
  }

 private:
  static constexpr size_t kPrefetchLines = 4;
  // Producer-owned line.
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  size_t pending_pad_ = 0;
  // Consumer-owned line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  // Read-only after Init.
  alignas(64) uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_RECORD_RING_H_
