// activity_buffer_pool.h — a fixed set of CUPTI activity buffers, allocated once.
//
// CUPTI asks for a buffer (buffer-requested callback) whenever it needs one and hands it back full
// (buffer-completed). Serving those from a bounded pool bounds the agent's memory: when every
// buffer is out, Acquire returns nullptr, CUPTI drops records and counts them, and the count ends
// up in the trace (cuptiActivityGetNumDroppedRecords → Recorder::AddDropped).
//
// Thread safety: Acquire/Release are lock-free (one atomic bit per buffer) and may be called from
// any thread, concurrently. Init must run before, once.
#ifndef GPUSTALL_AGENT_CUPTI_ACTIVITY_BUFFER_POOL_H_
#define GPUSTALL_AGENT_CUPTI_ACTIVITY_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gs {

class ActivityBufferPool {
 public:
  static constexpr int kMaxBuffers = 64;
  // CUPTI records are 8-byte aligned (ACTIVITY_RECORD_ALIGNMENT).
  static constexpr size_t kAlignment = 8;

  ActivityBufferPool() = default;
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;
  // Buffers are freed only here; the CUPTI session never destroys its pool (CUPTI's thread may
  // still hold a buffer at exit), so in practice this runs only in tests.
  ~ActivityBufferPool();

  // Allocates `count` (≤ kMaxBuffers) buffers of `bytes` each. Returns false if allocation failed.
  bool Init(int count, size_t bytes);

  // A free buffer of buffer_bytes(), or nullptr when all are in use (counted in exhausted()).
  uint8_t* Acquire();
  // Returns a buffer obtained from Acquire. Pointers that are not from this pool are ignored.
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  int count() const { return count_; }
  int in_use() const;
  uint64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }

 private:
  uint8_t* storage_ = nullptr;
  size_t buffer_bytes_ = 0;
  int count_ = 0;
  std::atomic<uint64_t> free_mask_{0};  // bit i set: buffer i is free
  std::atomic<uint64_t> exhausted_{0};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_ACTIVITY_BUFFER_POOL_H_
