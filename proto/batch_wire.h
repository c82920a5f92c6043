// batch_wire.h — the two high-volume batch kinds (ApiCallBatch, GpuActivityBatch) decoded straight
// from their wire bytes into records, for readers that parse a chunk as ChunkWire
// (proto/chunk_wire.proto).
//
// The result is the one protobuf's parse followed by batch_codec.h's decoder gives, for any bytes:
// the same records, the same column-rule errors, and kMalformed exactly where protobuf's parse of
// the batch fails. Batches as the agent writes them (each field once, columns packed, varints under
// ten bytes, the column rules kept) take the direct path; anything else (a column split into
// several runs or written unpacked, an unknown field, a ten-byte varint, a broken rule) is handed
// to protobuf and the message decoder, so odd or bad bytes read exactly as protobuf reads them.
//
// Thread safety: none needed (no state).
#ifndef GPUSTALL_PROTO_BATCH_WIRE_H_
#define GPUSTALL_PROTO_BATCH_WIRE_H_

#include <string>
#include <string_view>

#include "proto/batch_codec.h"

namespace gs::trace {

enum class WireBatchResult {
  kOk,         // records appended
  kBadBatch,   // the batch parses but breaks the column rules: `*error` says how, nothing appended
  kMalformed,  // the bytes are not a valid message: nothing appended
};

WireBatchResult DecodeApiCallBatchWire(std::string_view wire, ApiCallRecords* out, std::string* error);
WireBatchResult DecodeGpuActivityBatchWire(std::string_view wire, GpuActivityRecords* out, std::string* error);

}  // namespace gs::trace

#endif  // GPUSTALL_PROTO_BATCH_WIRE_H_
