// samples_to_json.cc — prints a trace's samples as JSON lines for sampler_e2e.py and the bench:
//   {"type":"header","sampling":true,"period_ns":N}
//   {"type":"sample","tid":T,"time_ns":N,"state":S,"cpu":C,"cpu_delta_ns":D,"stack":"leaf <- ..."}
//   {"type":"end","samples_recorded":N,"samples_dropped":N}
#include <cstdio>
#include <string>

#include "analyzer/reader/trace_reader.h"

namespace {

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE\n", argv[0]);
    return 2;
  }
  gs::reader::CollectingReporter damage;
  auto opened = gs::reader::TraceReader::Open(argv[1], &damage);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
    return 1;
  }
  gs::reader::TraceReader& reader = **opened;
  const auto& capture = reader.header().capture();
  std::printf("{\"type\":\"header\",\"sampling\":%s,\"period_ns\":%llu}\n", capture.sampling() ? "true" : "false",
              static_cast<unsigned long long>(capture.sample_period_ns()));
  gs::reader::ChunkEvents events;
  while (true) {
    auto more = reader.Next(&events);
    if (!more.ok() || !*more) break;
    const auto& t = reader.tables();
    for (const auto& s : events.samples) {
      std::printf("{\"type\":\"sample\",\"tid\":%llu,\"time_ns\":%llu,\"state\":%d,\"cpu\":%u,"
                  "\"cpu_delta_ns\":%llu,\"stack\":%s}\n",
                  static_cast<unsigned long long>(s.thread_id), static_cast<unsigned long long>(s.time_ns),
                  static_cast<int>(s.state), s.cpu, static_cast<unsigned long long>(s.cpu_time_delta_ns),
                  Json(s.stack ? t.DescribeStack(s.stack) : std::string()).c_str());
    }
  }
  const auto& st = reader.last_stats();
  std::printf("{\"type\":\"end\",\"samples_recorded\":%llu,\"samples_dropped\":%llu}\n",
              static_cast<unsigned long long>(st.samples_recorded()),
              static_cast<unsigned long long>(st.samples_dropped()));
  return 0;
}
