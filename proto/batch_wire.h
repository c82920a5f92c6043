// batch_wire.h — the two high-volume batch kinds (ApiCallBatch, GpuActivityBatch) as wire bytes:
// encoded from records in one pass (the agent's writer), and decoded straight into records, for
// readers that parse a chunk as ChunkWire (proto/chunk_wire.proto).
//
// Encoders write, byte for byte, what protobuf's serialisation writes for the message that
// batch_codec.h's encoder of the same records builds (same columns left empty, same order), without
// filling the message's repeated fields first and then sizing and serialising them: each varint
// is written once, into its column's buffer. The buffers keep their capacity from batch to batch,
// so an encoder in steady state does not allocate.
//
// The result is the one protobuf's parse followed by batch_codec.h's decoder gives, for any bytes:
// the same records, the same column-rule errors, and kMalformed exactly where protobuf's parse of
// the batch fails. Batches as the agent writes them (each field once, columns packed, varints under
// ten bytes, the column rules kept) take the direct path; anything else (a column split into
// several runs or written unpacked, an unknown field, a ten-byte varint, a broken rule) is handed
// to protobuf and the message decoder, so odd or bad bytes read exactly as protobuf reads them.
//
// Thread safety: an encoder is used by one thread at a time; decoders are pure functions.
#ifndef GPUSTALL_PROTO_BATCH_WIRE_H_
#define GPUSTALL_PROTO_BATCH_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "proto/batch_codec.h"

namespace gs::trace {

// One packed column being written: its varints back to back. Empty while every value so far is
// 0 (the column rule: the whole column is then left out); the first other value writes a 0 for
// each record before it.
class WireColumn {
 public:
  // Value `value` for record `n` (the number of records before it).
  void Put(uint32_t n, uint64_t value) {
    if (size_ == 0) {
      if (value == 0) return;
      Backfill(n);
    }
    PutAlways(value);
  }
  // For the time column, which always has every record.
  void PutAlways(uint64_t value) {
    if (capacity_ - size_ < kMaxVarint) Grow(size_ + kMaxVarint);
    uint8_t* p = data_.get() + size_;
    while (value >= 0x80) {
      *p++ = static_cast<uint8_t>(value | 0x80);
      value >>= 7;
    }
    *p++ = static_cast<uint8_t>(value);
    size_ = static_cast<size_t>(p - data_.get());
  }
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  const uint8_t* data() const { return data_.get(); }

 private:
  static constexpr size_t kMaxVarint = 10;
  void Backfill(uint32_t n);
  void Grow(size_t at_least);
  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

class ApiCallBatchWireEncoder {
 public:
  // Starts a batch of thread `thread_id`'s calls, enter times relative to `base_ns`.
  void Begin(uint64_t thread_id, uint64_t base_ns);
  // Appends one call; record.thread_id and record.api_class are ignored (batch-level / table).
  void Add(const ApiCallRecord& record);
  uint32_t count() const { return count_; }
  // Appends the batch to `out` as field `field` of the enclosing message (tag, length, bytes).
  void AppendAsField(int field, std::string* out) const;

 private:
  // The columns in field order, enter_delta's first (batch_wire.cc checks the numbers).
  enum { kEnter, kDuration, kFunction, kCorrelation, kStack, kBytes, kStream, kAttrs, kResult, kDevice, kAddress,
         kColumns };
  WireColumn columns_[kColumns];
  uint64_t thread_id_ = 0, base_ns_ = 0;
  uint32_t count_ = 0;
  uint64_t prev_enter_ = 0, prev_stream_ = 0, prev_address_ = 0;
  int64_t prev_correlation_ = 0;
};

class GpuActivityBatchWireEncoder {
 public:
  void Begin(uint64_t base_ns);
  void Add(const GpuActivityRecord& record);
  uint32_t count() const { return count_; }
  void AppendAsField(int field, std::string* out) const;

 private:
  // The columns in field order, start_delta's first (batch_wire.cc checks the numbers).
  enum { kStart, kDuration, kCorrelation, kKind, kDevice, kStream, kName, kBytes, kAttrs, kAddress, kContext,
         kSyncType, kGraphNode, kLaunchConfig, kColumns };
  WireColumn columns_[kColumns];
  uint64_t base_ns_ = 0;
  uint32_t count_ = 0;
  uint64_t prev_start_ = 0, prev_address_ = 0;
  int64_t prev_correlation_ = 0;
};

enum class WireBatchResult {
  kOk,         // records appended
  kBadBatch,   // the batch parses but breaks the column rules: `*error` says how, nothing appended
  kMalformed,  // the bytes are not a valid message: nothing appended
};

WireBatchResult DecodeApiCallBatchWire(std::string_view wire, ApiCallRecords* out, std::string* error);
WireBatchResult DecodeGpuActivityBatchWire(std::string_view wire, GpuActivityRecords* out, std::string* error);

}  // namespace gs::trace

#endif  // GPUSTALL_PROTO_BATCH_WIRE_H_
