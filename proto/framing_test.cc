#include "proto/framing.h"

#include <gtest/gtest.h>

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
