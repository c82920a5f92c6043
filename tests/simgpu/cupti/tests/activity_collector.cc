#include "activity_collector.h"

#include <time.h>

#include <cstdlib>
#include <mutex>
#include <thread>

namespace cupti_test {
namespace {

struct Collector {
  std::mutex mu;
  CollectorOptions options;
  std::thread::id registering_thread;
  size_t requested = 0;
  std::vector<CompletedBuffer> completed;
  std::vector<std::vector<uint8_t>> records;
};

Collector& C() {
  static auto* c = new Collector;  // CUPTI's worker may call in during exit
  return *c;
}

size_t RecordSize(const CUpti_Activity* r) {
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY: return sizeof(CUpti_ActivityMemory);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Collector& c = C();
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.requested;
  if (c.options.decline) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    return;
  }
  // CUPTI wants 8-byte-aligned buffers (NVIDIA's samples over-allocate and align by hand).
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, (c.options.buffer_size + 7) & ~size_t{7}));
  *size = c.options.buffer_size;
  *max_records = c.options.max_records;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                              size_t valid_size) {
  Collector& c = C();
  CompletedBuffer done;
  done.size = size;
  done.valid_size = valid_size;
  EXPECT_EQ(ctx, nullptr) << "buffers are global since CUDA 6.0";
  EXPECT_EQ(stream_id, 0u);
  std::vector<std::vector<uint8_t>> records;
  CUpti_Activity* record = nullptr;
  for (;;) {
    done.end_status = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (done.end_status != CUPTI_SUCCESS) break;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(record) % 8, 0u) << "records are 8-byte aligned";
    size_t n = RecordSize(record);
    EXPECT_NE(n, 0u) << "unexpected kind " << record->kind;
    if (n == 0) break;
    auto* p = reinterpret_cast<const uint8_t*>(record);
    records.emplace_back(p, p + n);
    ++done.records;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  done.on_caller_thread = std::this_thread::get_id() == c.registering_thread;
  c.completed.push_back(done);
  for (auto& r : records) c.records.push_back(std::move(r));
  std::free(buffer);  // CUPTI is done with it: completed buffers are the tool's again
}

uint64_t ReadClock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void StartCollecting(const CollectorOptions& options) {
  Collector& c = C();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.options = options;
    c.registering_thread = std::this_thread::get_id();
  }
  ASSERT_CUPTI_OK(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted));
}

size_t BuffersRequested() {
  std::lock_guard<std::mutex> lock(C().mu);
  return C().requested;
}

std::vector<CompletedBuffer> CompletedBuffers() {
  std::lock_guard<std::mutex> lock(C().mu);
  return C().completed;
}

std::vector<std::vector<uint8_t>> Records() {
  std::lock_guard<std::mutex> lock(C().mu);
  return C().records;
}

std::vector<CUpti_ActivityAPI> RuntimeRecords(uint32_t cbid) {
  std::vector<CUpti_ActivityAPI> out;
  for (const auto& r : RecordsOfKind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    if (r.cbid == cbid) out.push_back(r);
  }
  return out;
}

uint64_t RealtimeNs() { return ReadClock(CLOCK_REALTIME); }
uint64_t MonotonicNs() { return ReadClock(CLOCK_MONOTONIC); }

}  // namespace cupti_test
