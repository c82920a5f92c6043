// framing.h — encoding and decoding of .gstrace frames (FORMAT.md, "Frames").
//
// A frame is a 24-byte header followed by a payload (a serialized TraceHeader, Chunk or TraceEnd,
// optionally zstd- or zlib-compressed). Two checksums: one over the header (so a reader can trust the
// length before it reads the payload, and resynchronise after garbage) and one over the payload.
//
// Writers (the agent's writer thread): serialize the payload straight into their own buffer at
// `frame + kFrameHeaderSize`, then call FinishFrame() to fill the header in place. Neither
// FinishFrame nor EncodeFrame allocates. ZstdFrameEncoder (what the agent writes) allocates zstd's
// state once and reuses it; EncodeCompressedFrame (zlib, what format 1 wrote) allocates zlib's
// state at every call. Both belong on the writer thread, never on an application thread.
//
// Readers: ParseFrameHeader() on the next kFrameHeaderSize bytes; if it says kOk, read
// `stored_size` more bytes and call DecodePayload(). FindFrameMarker() locates the next candidate
// frame after damage.
//
// Thread safety: the functions may run concurrently (DecodePayload keeps one zstd decompression
// context per thread); a ZstdFrameEncoder is used by one thread at a time.
#ifndef GPUSTALL_PROTO_FRAMING_H_
#define GPUSTALL_PROTO_FRAMING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/format.h"

struct ZSTD_CCtx_s;  // zstd.h's ZSTD_CCtx

namespace gs::trace {

// The decoded fields of a frame header.
struct FrameHeader {
  FrameType type = FrameType::kChunk;
  uint8_t flags = 0;
  uint32_t stored_size = 0;   // payload bytes in the file, following the header
  uint32_t payload_size = 0;  // payload bytes once decoded (== stored_size unless compressed)
  uint32_t payload_crc = 0;   // CRC-32 (Crc32) of the stored payload bytes
};

// The CRC-32 of `size` bytes, as zlib's crc32 and gzip compute it (the checksum used everywhere in
// the format), by libdeflate's implementation: zlib's is several times slower (CMakeLists.txt).
uint32_t Crc32(const void* data, size_t size);

// Fills the kFrameHeaderSize bytes at `frame` for an uncompressed payload of `payload_size`
// bytes that the caller has already placed at `frame + kFrameHeaderSize`. Returns the total frame
// size (header + payload), or 0 if payload_size exceeds kMaxPayloadSize (nothing is written).
size_t FinishFrame(unsigned char* frame, FrameType type, size_t payload_size);

// Copies `payload` into a frame at `out` (capacity `out_capacity`). Returns the frame size, or 0
// if it does not fit or the payload is too large.
size_t EncodeFrame(FrameType type, const void* payload, size_t payload_size, unsigned char* out,
                   size_t out_capacity);

// The capacity EncodeCompressedFrame needs in the worst case.
size_t MaxCompressedFrameSize(size_t payload_size);

// Like EncodeFrame, but zlib-compresses the payload (level 1..9) when that makes it smaller;
// otherwise stores it raw. Returns the frame size, or 0 if it does not fit / is too large / zlib
// failed.
size_t EncodeCompressedFrame(FrameType type, const void* payload, size_t payload_size, int level,
                             unsigned char* out, size_t out_capacity);

// Frames compressed with zstd at one level, through one reused compression context. zstd level 1
// compresses the agent's chunks about ten times as fast as zlib level 1 at nearly the same size
// (BENCHMARKS.md, "Trace compression"), and decodes several times as fast.
class ZstdFrameEncoder {
 public:
  explicit ZstdFrameEncoder(int level = 1);
  ~ZstdFrameEncoder();
  ZstdFrameEncoder(const ZstdFrameEncoder&) = delete;
  ZstdFrameEncoder& operator=(const ZstdFrameEncoder&) = delete;

  // Like EncodeCompressedFrame (the same capacity, MaxCompressedFrameSize, suffices): a zstd frame
  // when that is smaller than the payload, else the payload raw. 0 if it does not fit, the payload
  // is too large, or zstd could not allocate its state.
  size_t Encode(FrameType type, const void* payload, size_t payload_size, unsigned char* out,
                size_t out_capacity);

 private:
  ZSTD_CCtx_s* context_ = nullptr;  // created by the first Encode
  int level_;
};

enum class FrameHeaderStatus {
  kOk,
  kNeedMore,         // fewer than kFrameHeaderSize bytes available
  kBadMarker,        // the bytes do not start with kFrameMarker
  kBadChecksum,      // marker present but the header checksum does not match
  kUnsupported,      // checksum fine, but unknown type/flags or sizes above kMaxPayloadSize
};

// Parses the header at `data` (`size` bytes available). Only kOk fills `out`.
FrameHeaderStatus ParseFrameHeader(const unsigned char* data, size_t size, FrameHeader* out);

// Checks the payload checksum and, for compressed frames, decompresses the payload into `*scratch`
// (resized to header.payload_size, never more than kMaxPayloadSize). On success `*payload` views
// either `stored` or `*scratch`. On failure returns false and sets `*error`.
bool DecodePayload(const FrameHeader& header, const unsigned char* stored, std::string* scratch,
                   std::string_view* payload, std::string* error);

// Index of the first position in data[0, size) where kFrameMarker starts, or, if there is none, the
// first position from which a marker could still begin once more bytes arrive (so a caller can
// keep those bytes and search again). Returns size when no suffix is a marker prefix.
size_t FindFrameMarker(const unsigned char* data, size_t size);

const char* FrameHeaderStatusName(FrameHeaderStatus status);

}  // namespace gs::trace

#endif  // GPUSTALL_PROTO_FRAMING_H_
