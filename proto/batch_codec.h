// batch_codec.h — records (proto/records.h) <-> columnar batch messages (gstrace.proto).
//
// The encoding rules are those at the top of gstrace.proto: a column is empty (all records have
// the default) or has one element per record; *_delta columns hold differences from the previous
// record (timestamps start from the batch's base_ns, everything else from 0); time columns are
// always written, so a batch's record count is backed by real bytes.
//
// Encoders append to a batch message owned by the caller (typically an element of a Chunk that
// the caller reuses: after Chunk::Clear() the repeated fields keep their capacity, so a writer in
// steady state does not allocate). They keep the running previous values of the delta columns,
// so one encoder serves one batch at a time, from Begin() until the next Begin().
//
// Decoders validate every column length before touching it and never allocate by a count read
// from the file (only by the lengths of columns already parsed, which the payload size bounds).
//
// Thread safety: an encoder is used by one thread at a time; decoders are pure functions.
#ifndef GPUSTALL_PROTO_BATCH_CODEC_H_
#define GPUSTALL_PROTO_BATCH_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "proto/gstrace.pb.h"
#include "proto/records.h"

namespace gs::trace {

class ApiCallBatchEncoder {
 public:
  // Starts filling `batch` (cleared first) with calls of thread `thread_id`; enter times are
  // encoded relative to `base_ns` (any value; the first call's enter time is a good one).
  void Begin(gpustall::trace::ApiCallBatch* batch, uint64_t thread_id, uint64_t base_ns);
  // Appends one call; record.thread_id and record.api_class are ignored (batch-level / table).
  void Add(const ApiCallRecord& record);
  uint32_t count() const { return count_; }
  gpustall::trace::ApiCallBatch* batch() const { return batch_; }

 private:
  gpustall::trace::ApiCallBatch* batch_ = nullptr;
  uint32_t count_ = 0;
  uint64_t prev_enter_ = 0, prev_stream_ = 0, prev_address_ = 0;
  int64_t prev_correlation_ = 0;
};

class GpuActivityBatchEncoder {
 public:
  void Begin(gpustall::trace::GpuActivityBatch* batch, uint64_t base_ns);
  void Add(const GpuActivityRecord& record);
  uint32_t count() const { return count_; }
  gpustall::trace::GpuActivityBatch* batch() const { return batch_; }

 private:
  gpustall::trace::GpuActivityBatch* batch_ = nullptr;
  uint32_t count_ = 0;
  uint64_t prev_start_ = 0, prev_address_ = 0;
  int64_t prev_correlation_ = 0;
};

class MemoryEventBatchEncoder {
 public:
  void Begin(gpustall::trace::MemoryEventBatch* batch, uint64_t base_ns);
  void Add(const MemoryEventRecord& record);
  uint32_t count() const { return count_; }

 private:
  gpustall::trace::MemoryEventBatch* batch_ = nullptr;
  uint32_t count_ = 0;
  uint64_t prev_time_ = 0, prev_address_ = 0, prev_stream_ = 0;
};

class SampleBatchEncoder {
 public:
  void Begin(gpustall::trace::SampleBatch* batch, uint64_t thread_id, uint64_t base_ns);
  void Add(const SampleRecord& record);  // record.thread_id is ignored
  uint32_t count() const { return count_; }

 private:
  gpustall::trace::SampleBatch* batch_ = nullptr;
  uint32_t count_ = 0;
  uint64_t prev_time_ = 0;
};

class HostWaitBatchEncoder {
 public:
  void Begin(gpustall::trace::HostWaitBatch* batch, uint64_t thread_id, uint64_t base_ns);
  void Add(const HostWaitRecord& record);  // record.thread_id is ignored
  uint32_t count() const { return count_; }

 private:
  gpustall::trace::HostWaitBatch* batch_ = nullptr;
  uint32_t count_ = 0;
  uint64_t prev_start_ = 0;
};

class NvtxRangeBatchEncoder {
 public:
  void Begin(gpustall::trace::NvtxRangeBatch* batch, uint64_t thread_id, uint64_t base_ns);
  void Add(const NvtxRangeRecord& record);  // record.thread_id is ignored
  uint32_t count() const { return count_; }

 private:
  gpustall::trace::NvtxRangeBatch* batch_ = nullptr;
  uint32_t count_ = 0;
  uint64_t prev_start_ = 0;
};

// An allocator whose resize() leaves the new records unwritten (a vector's value-initialising
// construct does nothing; every other construct is the ordinary one). For the reader's vectors
// of the two high-volume kinds: their decoders write every field of each record they append, so
// zero-filling first cost a second pass over tens of KiB per batch (4.5% of the analysis,
// BENCHMARKS.md "Reader and analyzer throughput"). Never emplace_back() with no arguments into
// such a vector: the record would hold garbage.
template <typename T>
struct UnfilledAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UnfilledAllocator<U>;
  };
  UnfilledAllocator() = default;
  template <typename U>
  UnfilledAllocator(const UnfilledAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U*) noexcept {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using ApiCallRecords = std::vector<ApiCallRecord, UnfilledAllocator<ApiCallRecord>>;
using GpuActivityRecords = std::vector<GpuActivityRecord, UnfilledAllocator<GpuActivityRecord>>;

// Decoders: append the batch's records to `*out` and return true, or return false with `*error`
// set and `*out` unchanged when the batch breaks the column rules.
bool DecodeApiCallBatch(const gpustall::trace::ApiCallBatch& batch,
                        std::vector<ApiCallRecord>* out, std::string* error);
bool DecodeApiCallBatch(const gpustall::trace::ApiCallBatch& batch, ApiCallRecords* out,
                        std::string* error);
bool DecodeGpuActivityBatch(const gpustall::trace::GpuActivityBatch& batch,
                            std::vector<GpuActivityRecord>* out, std::string* error);
bool DecodeGpuActivityBatch(const gpustall::trace::GpuActivityBatch& batch, GpuActivityRecords* out,
                            std::string* error);
bool DecodeMemoryEventBatch(const gpustall::trace::MemoryEventBatch& batch,
                            std::vector<MemoryEventRecord>* out, std::string* error);
bool DecodeSampleBatch(const gpustall::trace::SampleBatch& batch, std::vector<SampleRecord>* out,
                       std::string* error);
bool DecodeHostWaitBatch(const gpustall::trace::HostWaitBatch& batch,
                         std::vector<HostWaitRecord>* out, std::string* error);
bool DecodeNvtxRangeBatch(const gpustall::trace::NvtxRangeBatch& batch,
                          std::vector<NvtxRangeRecord>* out, std::string* error);

}  // namespace gs::trace

#endif  // GPUSTALL_PROTO_BATCH_CODEC_H_
