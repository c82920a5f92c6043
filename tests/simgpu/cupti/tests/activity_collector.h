// activity_collector.h — a test tool's side of the CUPTI activity buffer protocol: hands CUPTI
// buffers of a chosen size (or declines), keeps a copy of every record CUPTI hands back, and
// counts the protocol events so that tests can assert on them.
//
// Thread safety: the callbacks run on CUPTI's threads; every accessor takes the lock.
// One collector per process (CUPTI's buffer callbacks are plain function pointers).
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_TESTS_ACTIVITY_COLLECTOR_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_TESTS_ACTIVITY_COLLECTOR_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#define ASSERT_CUPTI_OK(call)                                         \
  do {                                                                \
    CUptiResult assert_cupti_ok_result = (call);                      \
    const char* assert_cupti_ok_name = "?";                           \
    cuptiGetResultString(assert_cupti_ok_result, &assert_cupti_ok_name); \
    ASSERT_EQ(assert_cupti_ok_result, CUPTI_SUCCESS) << #call << ": " << assert_cupti_ok_name; \
  } while (0)

#define ASSERT_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

namespace cupti_test {

struct CollectorOptions {
  size_t buffer_size = 1 << 20;  // what bufferRequested hands out
  size_t max_records = 0;        // *maxNumRecords
  bool decline = false;          // answer bufferRequested with NULL
};

// One completed buffer as CUPTI handed it back.
struct CompletedBuffer {
  size_t size = 0;
  size_t valid_size = 0;
  size_t records = 0;   // counted with cuptiActivityGetNextRecord
  CUptiResult end_status = CUPTI_SUCCESS;  // what ended the iteration
  bool on_caller_thread = false;           // delivered on the thread that registered?
};

// Registers the callbacks (cuptiActivityRegisterCallbacks) with `options`.
void StartCollecting(const CollectorOptions& options = {});

size_t BuffersRequested();
std::vector<CompletedBuffer> CompletedBuffers();

// Copies of all records handed back so far, in delivery order, typed by their kind.
std::vector<std::vector<uint8_t>> Records();

template <typename Record>
std::vector<Record> RecordsOfKind(CUpti_ActivityKind kind) {
  std::vector<Record> out;
  for (const auto& bytes : Records()) {
    const auto* r = reinterpret_cast<const CUpti_Activity*>(bytes.data());
    if (r->kind != kind) continue;
    EXPECT_EQ(bytes.size(), sizeof(Record)) << "record of kind " << kind;
    Record typed;
    std::memcpy(&typed, bytes.data(), sizeof(Record));
    out.push_back(typed);
  }
  return out;
}

// Runtime API records (CUpti_ActivityAPI, kind RUNTIME) for one cbid.
std::vector<CUpti_ActivityAPI> RuntimeRecords(uint32_t cbid);

uint64_t RealtimeNs();
uint64_t MonotonicNs();

}  // namespace cupti_test

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_TESTS_ACTIVITY_COLLECTOR_H_
