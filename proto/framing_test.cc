#include "proto/framing.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

namespace gs::trace {
namespace {

std::string Payload(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + i / 13) & 0xff);
  return s;
}

// Every trace ever written carries zlib's crc32: the implementation behind Crc32 must give the same
// value for every length and alignment (its fast path works in 16- and 64-byte strides).
TEST(FramingTest, Crc32IsZlibsCrc32) {
  EXPECT_EQ(Crc32("123456789", 9), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(Crc32("", 0), 0u);
  const std::string bytes = Payload(70000);
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t size : {size_t{1}, size_t{15}, size_t{16}, size_t{63}, size_t{64}, size_t{65}, size_t{255},
                        size_t{4096}, size_t{65536} + 3}) {
      const auto* p = reinterpret_cast<const Bytef*>(bytes.data() + offset);
      EXPECT_EQ(Crc32(p, size), static_cast<uint32_t>(crc32_z(crc32_z(0L, Z_NULL, 0), p, size)))
          << "offset " << offset << ", " << size << " bytes";
    }
  }
}

TEST(FramingTest, PreludeRoundTrip) {
  unsigned char prelude[kPreludeSize];
  EncodePrelude(prelude);
  uint32_t version = 0;
  EXPECT_EQ(CheckPrelude(prelude, sizeof(prelude), &version), PreludeCheck::kOk);
  EXPECT_EQ(version, kFormatVersion);
  EXPECT_EQ(CheckPrelude(prelude, 5, nullptr), PreludeCheck::kTooShort);
  const char text[] = "hello, this is a text file";
  EXPECT_EQ(CheckPrelude(reinterpret_cast<const unsigned char*>(text), sizeof(text), nullptr),
            PreludeCheck::kBadMagic);
  prelude[8] = static_cast<unsigned char>(kFormatVersion + 1);
  EXPECT_EQ(CheckPrelude(prelude, sizeof(prelude), &version), PreludeCheck::kNewerFormat);
  EXPECT_EQ(version, kFormatVersion + 1);
}

TEST(FramingTest, InPlaceFrameRoundTrip) {
  const std::string payload = Payload(1000);
  std::vector<unsigned char> buf(kFrameHeaderSize + payload.size());
  std::memcpy(buf.data() + kFrameHeaderSize, payload.data(), payload.size());
  ASSERT_EQ(FinishFrame(buf.data(), FrameType::kChunk, payload.size()), buf.size());

  FrameHeader h;
  ASSERT_EQ(ParseFrameHeader(buf.data(), buf.size(), &h), FrameHeaderStatus::kOk);
  EXPECT_EQ(h.type, FrameType::kChunk);
  EXPECT_EQ(h.flags, 0);
  EXPECT_EQ(h.stored_size, payload.size());
  EXPECT_EQ(h.payload_size, payload.size());
  std::string scratch, error;
  std::string_view decoded;
  ASSERT_TRUE(DecodePayload(h, buf.data() + kFrameHeaderSize, &scratch, &decoded, &error)) << error;
  EXPECT_EQ(decoded, payload);
}

TEST(FramingTest, CompressedFrameRoundTrip) {
  const std::string payload(50000, 'x');  // compresses well
  std::vector<unsigned char> buf(MaxCompressedFrameSize(payload.size()));
  const size_t size =
      EncodeCompressedFrame(FrameType::kHeader, payload.data(), payload.size(), 1, buf.data(), buf.size());
  ASSERT_GT(size, 0u);
  EXPECT_LT(size, payload.size() / 10);
  FrameHeader h;
  ASSERT_EQ(ParseFrameHeader(buf.data(), size, &h), FrameHeaderStatus::kOk);
  EXPECT_EQ(h.flags, kFrameFlagDeflate);
  EXPECT_EQ(h.payload_size, payload.size());
  std::string scratch, error;
  std::string_view decoded;
  ASSERT_TRUE(DecodePayload(h, buf.data() + kFrameHeaderSize, &scratch, &decoded, &error)) << error;
  EXPECT_EQ(decoded, payload);
}

TEST(FramingTest, IncompressiblePayloadIsStoredRaw) {
  std::string payload(4096, '\0');
  uint32_t x = 12345;
  for (char& c : payload) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  std::vector<unsigned char> buf(MaxCompressedFrameSize(payload.size()));
  const size_t size =
      EncodeCompressedFrame(FrameType::kChunk, payload.data(), payload.size(), 6, buf.data(), buf.size());
  ASSERT_EQ(size, kFrameHeaderSize + payload.size());
  FrameHeader h;
  ASSERT_EQ(ParseFrameHeader(buf.data(), size, &h), FrameHeaderStatus::kOk);
  EXPECT_EQ(h.flags, 0);
}

// What the agent writes: zstd frames through one encoder reused frame after frame.
TEST(FramingTest, ZstdFramesRoundTripThroughOneReusedEncoder) {
  ZstdFrameEncoder encoder(1);
  const std::string payloads[] = {std::string(50000, 'x'), Payload(30000), std::string(70000, 'y')};
  for (const std::string& payload : payloads) {
    std::vector<unsigned char> buf(MaxCompressedFrameSize(payload.size()));
    const size_t size = encoder.Encode(FrameType::kChunk, payload.data(), payload.size(), buf.data(), buf.size());
    ASSERT_GT(size, kFrameHeaderSize);
    EXPECT_LT(size, payload.size() / 10);
    FrameHeader h;
    ASSERT_EQ(ParseFrameHeader(buf.data(), size, &h), FrameHeaderStatus::kOk);
    EXPECT_EQ(h.flags, kFrameFlagZstd);
    EXPECT_EQ(h.stored_size, size - kFrameHeaderSize);
    EXPECT_EQ(h.payload_size, payload.size());
    std::string scratch, error;
    std::string_view decoded;
    ASSERT_TRUE(DecodePayload(h, buf.data() + kFrameHeaderSize, &scratch, &decoded, &error)) << error;
    EXPECT_EQ(decoded, payload);
  }
}

TEST(FramingTest, ZstdEncoderStoresIncompressiblePayloadRaw) {
  std::string payload(4096, '\0');
  uint32_t x = 12345;
  for (char& c : payload) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  std::vector<unsigned char> buf(MaxCompressedFrameSize(payload.size()));
  ZstdFrameEncoder encoder;
  const size_t size = encoder.Encode(FrameType::kChunk, payload.data(), payload.size(), buf.data(), buf.size());
  ASSERT_EQ(size, kFrameHeaderSize + payload.size());
  FrameHeader h;
  ASSERT_EQ(ParseFrameHeader(buf.data(), size, &h), FrameHeaderStatus::kOk);
  EXPECT_EQ(h.flags, 0);
}

// A zstd payload whose checksum was made to match after damage (a writer's bug, not a flipped bit
// on disk): zstd's own error, never a crash or a wrong payload.
TEST(FramingTest, DamagedZstdPayloadIsAnErrorNamedByZstd) {
  const std::string payload = std::string(20000, 'a') + Payload(2000);
  std::vector<unsigned char> buf(MaxCompressedFrameSize(payload.size()));
  ZstdFrameEncoder encoder;
  const size_t size = encoder.Encode(FrameType::kChunk, payload.data(), payload.size(), buf.data(), buf.size());
  ASSERT_GT(size, kFrameHeaderSize);
  FrameHeader h;
  ASSERT_EQ(ParseFrameHeader(buf.data(), size, &h), FrameHeaderStatus::kOk);
  std::string scratch, error;
  std::string_view decoded;
  // The zstd frame cut short, then its magic number broken.
  FrameHeader shorter = h;
  shorter.stored_size = h.stored_size - 3;
  shorter.payload_crc = Crc32(buf.data() + kFrameHeaderSize, shorter.stored_size);
  EXPECT_FALSE(DecodePayload(shorter, buf.data() + kFrameHeaderSize, &scratch, &decoded, &error));
  EXPECT_EQ(error.rfind("zstd: ", 0), 0u) << error;
  buf[kFrameHeaderSize] ^= 0xff;
  h.payload_crc = Crc32(buf.data() + kFrameHeaderSize, h.stored_size);
  error.clear();
  EXPECT_FALSE(DecodePayload(h, buf.data() + kFrameHeaderSize, &scratch, &decoded, &error));
  EXPECT_EQ(error.rfind("zstd: ", 0), 0u) << error;
  // A header that says more bytes than the zstd frame holds.
  buf[kFrameHeaderSize] ^= 0xff;
  h.payload_crc = Crc32(buf.data() + kFrameHeaderSize, h.stored_size);
  h.payload_size += 1;
  error.clear();
  EXPECT_FALSE(DecodePayload(h, buf.data() + kFrameHeaderSize, &scratch, &decoded, &error));
  EXPECT_FALSE(error.empty());
}

TEST(FramingTest, EncodeFrameRefusesSmallBuffer) {
  const std::string payload = Payload(100);
  std::vector<unsigned char> buf(kFrameHeaderSize + 99);
  EXPECT_EQ(EncodeFrame(FrameType::kChunk, payload.data(), payload.size(), buf.data(), buf.size()), 0u);
}

TEST(FramingTest, DetectsDamage) {
  const std::string payload = Payload(64);
  std::vector<unsigned char> buf(kFrameHeaderSize + payload.size());
  ASSERT_GT(EncodeFrame(FrameType::kChunk, payload.data(), payload.size(), buf.data(), buf.size()), 0u);
  FrameHeader h;
  EXPECT_EQ(ParseFrameHeader(buf.data(), 10, &h), FrameHeaderStatus::kNeedMore);

  // Every single-bit flip in the header is caught by the header checksum (or the marker check).
  for (size_t byte = 0; byte < kFrameHeaderSize; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<unsigned char> bad = buf;
      bad[byte] ^= static_cast<unsigned char>(1 << bit);
      EXPECT_NE(ParseFrameHeader(bad.data(), bad.size(), &h), FrameHeaderStatus::kOk)
          << "byte " << byte << " bit " << bit;
    }
  }
  // A flipped payload bit is caught by the payload checksum.
  std::vector<unsigned char> bad = buf;
  bad[kFrameHeaderSize + 5] ^= 0x10;
  ASSERT_EQ(ParseFrameHeader(bad.data(), bad.size(), &h), FrameHeaderStatus::kOk);
  std::string scratch, error;
  std::string_view decoded;
  EXPECT_FALSE(DecodePayload(h, bad.data() + kFrameHeaderSize, &scratch, &decoded, &error));
  EXPECT_NE(error.find("checksum"), std::string::npos);
}

TEST(FramingTest, RejectsOversizedOrUnknownFramesEvenWithValidChecksum) {
  // A header that claims 1 GiB, with a correct header checksum: refused, never allocated.
  unsigned char h[kFrameHeaderSize] = {};
  std::memcpy(h, kFrameMarker, 4);
  const uint32_t huge = 1u << 30;
  std::memcpy(h + 4, &huge, 4);
  std::memcpy(h + 8, &huge, 4);
  h[12] = 2;
  uint32_t crc = Crc32(h, 20);
  std::memcpy(h + 20, &crc, 4);
  FrameHeader out;
  EXPECT_EQ(ParseFrameHeader(h, sizeof(h), &out), FrameHeaderStatus::kUnsupported);
  // Unknown type.
  const uint32_t small = 8;
  std::memcpy(h + 4, &small, 4);
  std::memcpy(h + 8, &small, 4);
  h[12] = 9;
  crc = Crc32(h, 20);
  std::memcpy(h + 20, &crc, 4);
  EXPECT_EQ(ParseFrameHeader(h, sizeof(h), &out), FrameHeaderStatus::kUnsupported);
  // Both compression bits, or an unknown flag bit.
  h[12] = 2;
  for (const uint8_t flags : {uint8_t{kFrameFlagDeflate | kFrameFlagZstd}, uint8_t{1 << 2}}) {
    h[13] = flags;
    crc = Crc32(h, 20);
    std::memcpy(h + 20, &crc, 4);
    EXPECT_EQ(ParseFrameHeader(h, sizeof(h), &out), FrameHeaderStatus::kUnsupported) << int{flags};
  }
  h[13] = kFrameFlagZstd;
  crc = Crc32(h, 20);
  std::memcpy(h + 20, &crc, 4);
  EXPECT_EQ(ParseFrameHeader(h, sizeof(h), &out), FrameHeaderStatus::kOk);
}

TEST(FramingTest, FindFrameMarker) {
  std::vector<unsigned char> data(100, 0xA7);  // many near-misses
  EXPECT_EQ(FindFrameMarker(data.data(), 90), 89u);  // a trailing 0xA7 could start a marker
  std::memcpy(data.data() + 40, kFrameMarker, 4);
  EXPECT_EQ(FindFrameMarker(data.data(), data.size()), 40u);
  std::vector<unsigned char> zeros(64, 0);
  EXPECT_EQ(FindFrameMarker(zeros.data(), zeros.size()), zeros.size());
  zeros[62] = kFrameMarker[0];
  zeros[63] = kFrameMarker[1];
  EXPECT_EQ(FindFrameMarker(zeros.data(), zeros.size()), 62u);
}

}  // namespace
}  // namespace gs::trace
