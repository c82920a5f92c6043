// frame_compression.cc — what compressing a trace's chunks costs the agent's writer thread, and
// decoding them the analyzer, side by side for the frame codecs of proto/framing.h:
//   zlib level 1   EncodeCompressedFrame (format 1's writer)
//   zstd level 1   ZstdFrameEncoder, one context for all frames (the agent's writer today)
// over the decoded payloads of a real trace (any codec; an agent trace of a launch-bound loop is
// the case that matters). The codecs alternate round by round; per codec the median over rounds of
// thread CPU time, as MB/s of payload, and the bytes it stores. Prints Markdown.
//
//   frame_compression TRACE [ROUNDS]      (default 9 rounds)
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "proto/format.h"
#include "proto/framing.h"

namespace {

namespace tr = gs::trace;

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Every frame's decoded payload, with its type.
bool ReadPayloads(const std::string& path, std::vector<std::pair<tr::FrameType, std::string>>* out) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (tr::CheckPrelude(data, bytes.size(), nullptr) != tr::PreludeCheck::kOk) return false;
  std::string scratch, error;
  for (size_t pos = tr::kPreludeSize; pos + tr::kFrameHeaderSize <= bytes.size();) {
    tr::FrameHeader h;
    if (tr::ParseFrameHeader(data + pos, bytes.size() - pos, &h) != tr::FrameHeaderStatus::kOk ||
        pos + tr::kFrameHeaderSize + h.stored_size > bytes.size()) {
      break;
    }
    std::string_view payload;
    if (!tr::DecodePayload(h, data + pos + tr::kFrameHeaderSize, &scratch, &payload, &error)) break;
    out->emplace_back(h.type, std::string(payload));
    pos += tr::kFrameHeaderSize + h.stored_size;
  }
  return !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: frame_compression TRACE [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 9;
  std::vector<std::pair<tr::FrameType, std::string>> payloads;
  if (!ReadPayloads(argv[1], &payloads)) {
    std::fprintf(stderr, "frame_compression: %s: not a readable gpustall trace\n", argv[1]);
    return 1;
  }
  size_t raw = 0, largest = 0;
  for (const auto& p : payloads) {
    raw += p.second.size();
    largest = std::max(largest, p.second.size());
  }
  std::vector<unsigned char> frame(tr::MaxCompressedFrameSize(largest));
  std::string scratch, error;
  tr::ZstdFrameEncoder zstd(1);

  struct Codec {
    const char* name;
    std::vector<double> encode_s, decode_s;
    size_t stored = 0;
  } codecs[] = {{"zlib level 1", {}, {}}, {"zstd level 1", {}, {}}};
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      Codec& c = codecs[(k + r) % 2];  // alternate which codec goes first
      const bool is_zstd = &c == &codecs[1];
      double encode = 0, decode = 0;
      size_t stored = 0;
      for (const auto& [type, payload] : payloads) {
        double t0 = ThreadCpuSeconds();
        const size_t n = is_zstd ? zstd.Encode(type, payload.data(), payload.size(), frame.data(), frame.size())
                                 : tr::EncodeCompressedFrame(type, payload.data(), payload.size(), 1,
                                                             frame.data(), frame.size());
        encode += ThreadCpuSeconds() - t0;
        tr::FrameHeader h;
        if (n == 0 || tr::ParseFrameHeader(frame.data(), n, &h) != tr::FrameHeaderStatus::kOk) {
          std::fprintf(stderr, "frame_compression: %s could not encode a frame\n", c.name);
          return 1;
        }
        std::string_view back;
        t0 = ThreadCpuSeconds();
        const bool ok = tr::DecodePayload(h, frame.data() + tr::kFrameHeaderSize, &scratch, &back, &error);
        decode += ThreadCpuSeconds() - t0;
        if (!ok || back != payload) {
          std::fprintf(stderr, "frame_compression: %s does not round-trip: %s\n", c.name, error.c_str());
          return 1;
        }
        stored += n;
      }
      c.encode_s.push_back(encode);
      c.decode_s.push_back(decode);
      c.stored = stored;
    }
  }
  std::printf("%s: %zu frames, %.1f MB of payload; median of %d rounds, thread CPU time\n\n", argv[1],
              payloads.size(), static_cast<double>(raw) / 1e6, rounds);
  std::printf("| codec | stored bytes | ratio | compress MB/s | decompress MB/s |\n|---|---:|---:|---:|---:|\n");
  for (const Codec& c : codecs) {
    std::printf("| %s | %zu | %.2f | %.0f | %.0f |\n", c.name, c.stored,
                static_cast<double>(raw) / static_cast<double>(c.stored),
                static_cast<double>(raw) / 1e6 / Median(c.encode_s),
                static_cast<double>(raw) / 1e6 / Median(c.decode_s));
  }
  std::printf("\nzstd / zlib, compress CPU: %.3f; decompress CPU: %.3f\n",
              Median(codecs[1].encode_s) / Median(codecs[0].encode_s),
              Median(codecs[1].decode_s) / Median(codecs[0].decode_s));
  return 0;
}
