// format.h — the constants of the .gstrace file format (FORMAT.md describes every byte).
//
// Shared by the agent's writer and the analyzer's reader. Plain constants and pure functions:
// no allocation, no state, safe from any thread.
#ifndef GPUSTALL_PROTO_FORMAT_H_
#define GPUSTALL_PROTO_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace gs::trace {

// The file prelude: 8 magic bytes, a little-endian uint32 format version, a uint32 of zeros.
// The first magic byte is not ASCII so that no text file starts like a trace.
inline constexpr unsigned char kMagic[8] = {0x89, 'G', 'S', 'T', 'R', 'A', 'C', 'E'};
inline constexpr size_t kPreludeSize = 16;

// Version of the framing (prelude + frame headers). Bumped only if the bytes around payloads
// change; readers refuse a newer one.
// 2: frames may be zstd-compressed (kFrameFlagZstd). Readers read 1 and 2.
inline constexpr uint32_t kFormatVersion = 2;

// Version of the payload schema (proto/gstrace.proto), written into TraceHeader.schema_version.
// Bumped when the meaning of existing fields changes (see the policy at the top of the .proto);
// readers refuse a newer one.
inline constexpr uint32_t kSchemaVersion = 1;

// Every frame starts with these 4 bytes; a reader that lost its place searches for them.
inline constexpr unsigned char kFrameMarker[4] = {0xA7, 'G', 'S', 'F'};
inline constexpr size_t kFrameHeaderSize = 24;

// Upper bound on a frame's stored and decoded payload. Readers never allocate more than this for
// one frame, whatever the file says; writers must keep their chunks below it (a few hundred KiB
// is the intended size).
inline constexpr uint32_t kMaxPayloadSize = 64u << 20;

// What a frame's payload is.
enum class FrameType : uint8_t {
  kHeader = 1,  // gpustall.trace.TraceHeader; exactly one, the first frame
  kChunk = 2,   // gpustall.trace.Chunk
  kEnd = 3,     // gpustall.trace.TraceEnd; at most one, the last frame of a cleanly closed trace
};

// Frame flag bits. Unknown bits make a frame unreadable (a newer writer's feature); at most one
// compression bit is set.
enum FrameFlags : uint8_t {
  kFrameFlagDeflate = 1 << 0,  // payload is zlib-compressed (RFC 1950); decoded size in the header
  kFrameFlagZstd = 1 << 1,     // payload is one Zstandard frame (RFC 8878); decoded size in the header
};
inline constexpr uint8_t kFrameCompressionFlags = kFrameFlagDeflate | kFrameFlagZstd;
inline constexpr uint8_t kKnownFrameFlags = kFrameCompressionFlags;

// Writes the 16-byte prelude into `out`.
void EncodePrelude(unsigned char* out);

// Result of looking at the first bytes of a file.
enum class PreludeCheck {
  kOk,
  kTooShort,      // fewer than kPreludeSize bytes, but what is there matches the magic
  kBadMagic,      // not a gpustall trace
  kNewerFormat,   // a trace, but of a framing version newer than kFormatVersion
};
// Checks `size` bytes at `data`; on kOk/kNewerFormat stores the format version if non-null.
PreludeCheck CheckPrelude(const unsigned char* data, size_t size, uint32_t* format_version);

}  // namespace gs::trace

#endif  // GPUSTALL_PROTO_FORMAT_H_
