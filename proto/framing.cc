#include "proto/framing.h"

#include <libdeflate.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>

namespace gs::trace {
namespace {

// Little-endian on disk whatever the host, so traces move between machines.
void PutU32(unsigned char* p, uint32_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
  p[2] = static_cast<unsigned char>(v >> 16);
  p[3] = static_cast<unsigned char>(v >> 24);
}

uint32_t GetU32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Header layout (offsets): 0 marker[4] | 4 stored_size | 8 payload_size | 12 type | 13 flags |
// 14 reserved u16 (0) | 16 payload crc | 20 header crc (over bytes 0..19).
void WriteHeader(unsigned char* frame, FrameType type, uint8_t flags, uint32_t stored_size,
                 uint32_t payload_size, uint32_t payload_crc) {
  std::memcpy(frame, kFrameMarker, sizeof(kFrameMarker));
  PutU32(frame + 4, stored_size);
  PutU32(frame + 8, payload_size);
  frame[12] = static_cast<unsigned char>(type);
  frame[13] = flags;
  frame[14] = 0;
  frame[15] = 0;
  PutU32(frame + 16, payload_crc);
  PutU32(frame + 20, Crc32(frame, 20));
}

bool KnownType(uint8_t t) {
  return t == static_cast<uint8_t>(FrameType::kHeader) ||
         t == static_cast<uint8_t>(FrameType::kChunk) || t == static_cast<uint8_t>(FrameType::kEnd);
}

}  // namespace

uint32_t Crc32(const void* data, size_t size) {
  // The CRC-32 of zlib's crc32 and gzip (libdeflate.h: "the same as zlib's crc32()"), 0 to start.
  return libdeflate_crc32(0, data, size);
}

void EncodePrelude(unsigned char* out) {
  std::memcpy(out, kMagic, sizeof(kMagic));
  PutU32(out + 8, kFormatVersion);
  PutU32(out + 12, 0);
}

PreludeCheck CheckPrelude(const unsigned char* data, size_t size, uint32_t* format_version) {
  const size_t magic_bytes = size < sizeof(kMagic) ? size : sizeof(kMagic);
  if (std::memcmp(data, kMagic, magic_bytes) != 0) return PreludeCheck::kBadMagic;
  if (size < kPreludeSize) return PreludeCheck::kTooShort;
  const uint32_t version = GetU32(data + 8);
  if (format_version != nullptr) *format_version = version;
  if (version == 0) return PreludeCheck::kBadMagic;
  if (version > kFormatVersion) return PreludeCheck::kNewerFormat;
  return PreludeCheck::kOk;
}

size_t FinishFrame(unsigned char* frame, FrameType type, size_t payload_size) {
  if (payload_size > kMaxPayloadSize) return 0;
  const auto size = static_cast<uint32_t>(payload_size);
  WriteHeader(frame, type, 0, size, size, Crc32(frame + kFrameHeaderSize, payload_size));
  return kFrameHeaderSize + payload_size;
}

size_t EncodeFrame(FrameType type, const void* payload, size_t payload_size, unsigned char* out,
                   size_t out_capacity) {
  if (payload_size > kMaxPayloadSize || out_capacity < kFrameHeaderSize + payload_size) return 0;
  if (payload_size > 0) std::memcpy(out + kFrameHeaderSize, payload, payload_size);
  return FinishFrame(out, type, payload_size);
}

size_t MaxCompressedFrameSize(size_t payload_size) {
  size_t bound = compressBound(static_cast<uLong>(payload_size));
  const size_t zstd_bound = ZSTD_compressBound(payload_size);
  if (zstd_bound > bound) bound = zstd_bound;
  return kFrameHeaderSize + (bound > payload_size ? bound : payload_size);
}

size_t EncodeCompressedFrame(FrameType type, const void* payload, size_t payload_size, int level,
                             unsigned char* out, size_t out_capacity) {
  if (payload_size > kMaxPayloadSize || out_capacity < kFrameHeaderSize) return 0;
  uLongf compressed = static_cast<uLongf>(out_capacity - kFrameHeaderSize);
  const int rc = compress2(out + kFrameHeaderSize, &compressed, static_cast<const Bytef*>(payload),
                           static_cast<uLong>(payload_size), level);
  if (rc == Z_OK && compressed < payload_size) {
    WriteHeader(out, type, kFrameFlagDeflate, static_cast<uint32_t>(compressed),
                static_cast<uint32_t>(payload_size), Crc32(out + kFrameHeaderSize, compressed));
    return kFrameHeaderSize + compressed;
  }
  // Incompressible (or the output buffer was too small for zlib's attempt): store it raw.
  return EncodeFrame(type, payload, payload_size, out, out_capacity);
}

ZstdFrameEncoder::ZstdFrameEncoder(int level) : level_(level) {}

ZstdFrameEncoder::~ZstdFrameEncoder() { ZSTD_freeCCtx(context_); }

size_t ZstdFrameEncoder::Encode(FrameType type, const void* payload, size_t payload_size,
                                unsigned char* out, size_t out_capacity) {
  if (payload_size > kMaxPayloadSize || out_capacity < kFrameHeaderSize) return 0;
  if (context_ == nullptr && (context_ = ZSTD_createCCtx()) == nullptr) return 0;
  // ZSTD_compressCCtx resets the context's parameters to `level_` and writes the content size
  // into the zstd frame header; a reader checks it against payload_size.
  const size_t compressed = ZSTD_compressCCtx(context_, out + kFrameHeaderSize, out_capacity - kFrameHeaderSize,
                                              payload, payload_size, level_);
  if (!ZSTD_isError(compressed) && compressed < payload_size) {
    WriteHeader(out, type, kFrameFlagZstd, static_cast<uint32_t>(compressed),
                static_cast<uint32_t>(payload_size), Crc32(out + kFrameHeaderSize, compressed));
    return kFrameHeaderSize + compressed;
  }
  return EncodeFrame(type, payload, payload_size, out, out_capacity);
}

FrameHeaderStatus ParseFrameHeader(const unsigned char* data, size_t size, FrameHeader* out) {
  if (size < kFrameHeaderSize) {
    const size_t n = size < sizeof(kFrameMarker) ? size : sizeof(kFrameMarker);
    return std::memcmp(data, kFrameMarker, n) == 0 ? FrameHeaderStatus::kNeedMore
                                                    : FrameHeaderStatus::kBadMarker;
  }
  if (std::memcmp(data, kFrameMarker, sizeof(kFrameMarker)) != 0) {
    return FrameHeaderStatus::kBadMarker;
  }
  if (GetU32(data + 20) != Crc32(data, 20)) return FrameHeaderStatus::kBadChecksum;
  FrameHeader h;
  h.stored_size = GetU32(data + 4);
  h.payload_size = GetU32(data + 8);
  const uint8_t type = data[12];
  h.flags = data[13];
  h.payload_crc = GetU32(data + 16);
  const uint8_t codec = h.flags & kFrameCompressionFlags;
  const bool compressed = codec != 0;
  if (!KnownType(type) || (h.flags & ~kKnownFrameFlags) != 0 || codec == kFrameCompressionFlags ||
      data[14] != 0 || data[15] != 0 ||
      h.stored_size > kMaxPayloadSize || h.payload_size > kMaxPayloadSize ||
      (!compressed && h.stored_size != h.payload_size)) {
    return FrameHeaderStatus::kUnsupported;
  }
  h.type = static_cast<FrameType>(type);
  *out = h;
  return FrameHeaderStatus::kOk;
}

bool DecodePayload(const FrameHeader& header, const unsigned char* stored, std::string* scratch,
                   std::string_view* payload, std::string* error) {
  if (Crc32(stored, header.stored_size) != header.payload_crc) {
    *error = "payload checksum mismatch";
    return false;
  }
  if ((header.flags & kFrameCompressionFlags) == 0) {
    *payload = std::string_view(reinterpret_cast<const char*>(stored), header.stored_size);
    return true;
  }
  // payload_size was bounded by ParseFrameHeader, so this allocation is bounded too.
  scratch->resize(header.payload_size);
  if ((header.flags & kFrameFlagZstd) != 0) {
    // One context per thread: ZSTD_decompress would allocate and free one (~100 KiB) per frame.
    // Decoding into exactly payload_size bytes bounds the output whatever the zstd frame claims.
    struct FreeDContext {
      void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
    };
    thread_local std::unique_ptr<ZSTD_DCtx, FreeDContext> context(ZSTD_createDCtx());
    if (context == nullptr) {
      *error = "zstd: cannot allocate a decompression context";
      return false;
    }
    const size_t n = ZSTD_decompressDCtx(context.get(), scratch->data(), header.payload_size, stored,
                                         header.stored_size);
    if (ZSTD_isError(n) || n != header.payload_size) {
      *error = ZSTD_isError(n) ? std::string("zstd: ") + ZSTD_getErrorName(n)
                               : "decompressed size differs from the frame header";
      return false;
    }
    *payload = *scratch;
    return true;
  }
  uLongf out_size = header.payload_size;
  const int rc = uncompress(reinterpret_cast<Bytef*>(scratch->data()), &out_size, stored,
                            header.stored_size);
  if (rc != Z_OK || out_size != header.payload_size) {
    *error = rc == Z_OK ? "decompressed size differs from the frame header"
                        : std::string("zlib: ") + zError(rc);
    return false;
  }
  *payload = *scratch;
  return true;
}

size_t FindFrameMarker(const unsigned char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    const void* hit = std::memchr(data + i, kFrameMarker[0], size - i);
    if (hit == nullptr) return size;
    i = static_cast<size_t>(static_cast<const unsigned char*>(hit) - data);
    const size_t n = size - i < sizeof(kFrameMarker) ? size - i : sizeof(kFrameMarker);
    if (std::memcmp(data + i, kFrameMarker, n) == 0) return i;
  }
  return size;
}

const char* FrameHeaderStatusName(FrameHeaderStatus status) {
  switch (status) {
    case FrameHeaderStatus::kOk: return "ok";
    case FrameHeaderStatus::kNeedMore: return "incomplete frame header";
    case FrameHeaderStatus::kBadMarker: return "no frame marker";
    case FrameHeaderStatus::kBadChecksum: return "frame header checksum mismatch";
    case FrameHeaderStatus::kUnsupported: return "unsupported frame (type, flags or size)";
  }
  return "unknown";
}

}  // namespace gs::trace
