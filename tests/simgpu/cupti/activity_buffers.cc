#include "activity_buffers.h"

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "tool_hooks.h"

// Optional in the driver (tool_hooks.h): a driver without it reports every end on time.
#pragma weak simgpuDriverReportEnded

namespace simgpu_cupti {
namespace {

constexpr size_t kRecordAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT in cupti_common.h

size_t AlignUp(size_t n) { return (n + kRecordAlignment - 1) & ~(kRecordAlignment - 1); }

struct Buffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t used = 0;         // the validSize handed back
  size_t records = 0;
  size_t max_records = 0;  // 0: as many as fit
};

// Where a record may go in `b`: the first 8-byte-aligned offset at or after `used` (the tool's
// buffer itself may be unaligned; the samples over-allocate and align it, we align offsets).
size_t RecordOffset(const Buffer& b) {
  uintptr_t base = reinterpret_cast<uintptr_t>(b.data);
  return AlignUp(base + b.used) - base;
}

bool Fits(const Buffer& b, size_t size) {
  if (b.max_records != 0 && b.records >= b.max_records) return false;
  size_t offset = RecordOffset(b);
  return offset <= b.size && b.size - offset >= size;
}

struct State {
  std::mutex mu;
  std::condition_variable worker_wake;
  std::condition_variable delivered;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  bool has_current = false;
  Buffer current;
  std::vector<Buffer> spare;     // obtained while another thread was also asking; used next
  std::deque<Buffer> ready;      // waiting for the worker
  uint64_t queued_total = 0;     // buffers ever put in `ready`
  uint64_t delivered_total = 0;  // buffers the worker has handed back
  bool flush_requested = false;  // deliver now, even between period ticks
  uint32_t period_ms = 0;
  bool worker_running = false;
  std::thread::id worker_id;
  std::atomic<size_t> dropped{0};
};

// Leaked: the worker may still run while static destructors do (exit without a flush).
State& S() {
  static State* state = new State;
  return *state;
}

void WorkerLoop() {
  State& s = S();
  std::unique_lock<std::mutex> lock(s.mu);
  auto next_tick = std::chrono::steady_clock::now();
  for (;;) {
    if (s.period_ms == 0) {
      s.worker_wake.wait(lock, [&] { return !s.ready.empty(); });
    } else {
      // Periodic mode: full buffers wait for the tick; a FlushAll cuts the wait short.
      next_tick += std::chrono::milliseconds(s.period_ms);
      auto now = std::chrono::steady_clock::now();
      if (next_tick < now) next_tick = now + std::chrono::milliseconds(s.period_ms);
      s.worker_wake.wait_until(lock, next_tick, [&] {
        return (s.flush_requested && !s.ready.empty()) || s.period_ms == 0;
      });
      if (s.period_ms == 0) continue;  // switched back to the default: deliver at once
    }
    s.flush_requested = false;
    std::deque<Buffer> batch;
    batch.swap(s.ready);
    CUpti_BuffersCallbackCompleteFunc completed = s.completed;
    lock.unlock();
    for (const Buffer& b : batch) {
      // CUDA 6.0 onwards: global buffers, so context NULL and stream id 0.
      if (completed != nullptr) completed(nullptr, 0, b.data, b.size, b.used);
    }
    lock.lock();
    s.delivered_total += batch.size();
    s.delivered.notify_all();
  }
}

void EnsureWorkerLocked(State& s) {
  if (s.worker_running) return;
  s.worker_running = true;
  std::thread worker(WorkerLoop);
  s.worker_id = worker.get_id();
  worker.detach();
}

void QueueLocked(State& s, const Buffer& b) {
  s.ready.push_back(b);
  ++s.queued_total;
  EnsureWorkerLocked(s);
  s.worker_wake.notify_one();
}

std::atomic<BufferRequestObserver> g_request_observer{nullptr};
thread_local bool t_observing = false;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct RequestTiming {
  bool requested = false;
  uint64_t start_ns = 0, end_ns = 0;
};

// Appends under the lock (dropped from around the tool's bufferRequested); reports whether and
// when the tool was asked for a buffer.
void AppendToBuffers(const void* record, size_t size, RequestTiming* timing);

// fork(): only the forking thread survives, so the child has no worker and possibly a lock held
// by a thread that no longer exists. Hold the lock across fork; the child restarts its worker
// lazily (records already queued in the parent's buffers are the parent's to deliver).
void PrepareFork() { S().mu.lock(); }
void ParentAfterFork() { S().mu.unlock(); }
void ChildAfterFork() {
  State& s = S();
  s.ready.clear();
  s.worker_running = false;
  s.mu.unlock();
}
[[maybe_unused]] const int kAtForkRegistered =
    pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);

}  // namespace

void RegisterBufferCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                             CUpti_BuffersCallbackCompleteFunc completed) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.requested = requested;
  s.completed = completed;
  EnsureWorkerLocked(s);
}

bool BufferCallbacksRegistered() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.requested != nullptr;
}

void SetBufferRequestObserver(BufferRequestObserver observer) {
  g_request_observer.store(observer, std::memory_order_release);
}

void AppendRecord(const void* record, size_t size) {
  RequestTiming timing;
  AppendToBuffers(record, size, &timing);
  BufferRequestObserver observer = g_request_observer.load(std::memory_order_acquire);
  if (timing.requested && observer != nullptr && !t_observing) {
    t_observing = true;
    observer(timing.start_ns, timing.end_ns);
    t_observing = false;
  }
}

namespace {

void AppendToBuffers(const void* record, size_t size, RequestTiming* timing) {
  State& s = S();
  std::unique_lock<std::mutex> lock(s.mu);
  // Usually: write; or retire the full buffer, take a spare or a fresh one, write. More passes
  // only when other producers keep filling buffers while we ask the tool for one; past the limit
  // the record is dropped (and counted) rather than spinning on the application thread.
  for (int pass = 0; pass < 8; ++pass) {
    if (s.requested == nullptr) break;
    if (s.has_current) {
      if (Fits(s.current, size)) {
        size_t offset = RecordOffset(s.current);
        std::memcpy(s.current.data + offset, record, size);
        s.current.used = offset + size;
        ++s.current.records;
        return;
      }
      if (s.current.records == 0) break;  // a fresh buffer that cannot hold this record
      QueueLocked(s, s.current);          // full: back to the tool
      s.has_current = false;
    }
    if (!s.spare.empty()) {
      s.current = s.spare.back();
      s.spare.pop_back();
      s.has_current = true;
      continue;
    }
    CUpti_BuffersCallbackRequestFunc requested = s.requested;
    lock.unlock();  // the tool's callback may take its own locks or call CUPTI
    Buffer fresh;
    uint64_t start_ns = MonotonicNs();
    requested(&fresh.data, &fresh.size, &fresh.max_records);
    if (!timing->requested) timing->start_ns = start_ns;
    timing->requested = true;
    timing->end_ns = MonotonicNs();
    lock.lock();
    if (fresh.data == nullptr || fresh.size == 0) break;  // declined
    if (s.has_current) {
      s.spare.push_back(fresh);
    } else {
      s.current = fresh;
      s.has_current = true;
    }
  }
  s.dropped.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

CUptiResult FlushAllBuffers(uint32_t /*flag: all records here are complete; see header*/) {
  State& s = S();
  bool on_worker = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.requested == nullptr) return CUPTI_ERROR_INVALID_OPERATION;
    on_worker = std::this_thread::get_id() == s.worker_id;
  }
  // A flush delivers the records of all work completed on the device: the driver's device thread
  // may not have reported the latest kernels' ends yet (tool_hooks.h, simgpuDriverReportEnded).
  if (!on_worker && simgpuDriverReportEnded != nullptr) simgpuDriverReportEnded();
  std::unique_lock<std::mutex> lock(s.mu);
  if (s.requested == nullptr) return CUPTI_ERROR_INVALID_OPERATION;
  if (s.has_current && s.current.records > 0) {
    QueueLocked(s, s.current);
    s.has_current = false;
  }
  EnsureWorkerLocked(s);
  uint64_t target = s.queued_total;
  s.flush_requested = true;
  s.worker_wake.notify_one();
  if (std::this_thread::get_id() == s.worker_id) return CUPTI_SUCCESS;  // inside bufferCompleted
  s.delivered.wait(lock, [&] { return s.delivered_total >= target; });
  return CUPTI_SUCCESS;
}

void SetFlushPeriodMs(uint32_t period_ms) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  s.period_ms = period_ms;
  s.worker_wake.notify_one();
}

size_t TakeDroppedRecordCount() { return S().dropped.exchange(0, std::memory_order_relaxed); }

void FinalizeBuffers() {
  State& s = S();
  if (FlushAllBuffers(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS) return;
  std::unique_lock<std::mutex> lock(s.mu);
  // Buffers the tool gave us but that hold nothing go back too, so that the tool can free them.
  if (s.has_current) QueueLocked(s, s.current);
  s.has_current = false;
  for (const Buffer& b : s.spare) QueueLocked(s, b);
  s.spare.clear();
  uint64_t target = s.queued_total;
  s.flush_requested = true;
  s.worker_wake.notify_one();
  if (std::this_thread::get_id() != s.worker_id) {
    s.delivered.wait(lock, [&] { return s.delivered_total >= target; });
  }
  s.requested = nullptr;
  s.completed = nullptr;
}

}  // namespace simgpu_cupti
