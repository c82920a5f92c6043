// trace_to_json.cc — prints a .gstrace as JSON lines for the end-to-end checks (e2e.py).
//
//   gs_e2e_trace_to_json TRACE
// Lines: {"type":"header",...} (pid, capture mode, sampling and its period), {"type":"api",...}
// per API call (with the function name and the described stack), {"type":"activity",...} per GPU
// activity (graph_node_id for a graph replay's kernels), {"type":"graph_node",...} per graph node
// the agent saw made (node_id, original_node_id of a clone, correlation_id of the call that
// made it), {"type":"sample",...} per wall-clock sample (state, CPU, stack), {"type":"end",...}
// (drops, samples, damage). Exit status 1 if the file cannot be opened as a trace. Used by e2e.py,
// the sampler, on-demand and reliability drivers.
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
  const auto& h = reader.header();
  std::printf("{\"type\":\"header\",\"pid\":%lld,\"mode\":%d,\"mode_text\":%s,\"detail\":%s,"
              "\"sampling\":%s,\"period_ns\":%llu,\"cuda_runtime\":%s,\"cupti_cuda_major\":%u,"
              "\"cupti_version\":%u}\n",
              static_cast<long long>(h.pid()), static_cast<int>(h.capture().mode()),
              Json(h.capture().mode_text()).c_str(), Json(h.capture().detail()).c_str(),
              h.capture().sampling() ? "true" : "false",
              static_cast<unsigned long long>(h.capture().sample_period_ns()),
              Json(h.capture().cuda_runtime()).c_str(), h.capture().cupti_cuda_major(),
              h.capture().cupti_version());
  gs::reader::ChunkEvents events;
  while (true) {
    auto more = reader.Next(&events);
    if (!more.ok() || !*more) break;
    const auto& t = reader.tables();
    for (const auto& c : events.api_calls) {
      std::printf(
          "{\"type\":\"api\",\"name\":%s,\"tid\":%llu,\"enter_ns\":%llu,\"exit_ns\":%llu,"
          "\"bytes\":%llu,\"stream\":%llu,\"address\":%llu,\"correlation_id\":%u,\"result\":%d,"
          "\"device\":%u,\"copy_kind\":%u,\"src_kind\":%d,\"dst_kind\":%d,\"flags\":%u,"
          "\"api_class\":%d,\"source\":%d,\"stack\":%s}\n",
          Json(t.function_name(c.function)).c_str(), (unsigned long long)c.thread_id,
          (unsigned long long)c.enter_ns, (unsigned long long)c.exit_ns,
          (unsigned long long)c.bytes, (unsigned long long)c.stream,
          (unsigned long long)c.address, c.correlation_id, c.result, c.device, c.copy_kind,
          static_cast<int>(c.src_kind), static_cast<int>(c.dst_kind), c.flags,
          static_cast<int>(c.api_class),
          t.function(c.function) ? static_cast<int>(t.function(c.function)->source()) : 0,
          Json(c.stack ? t.DescribeStack(c.stack) : std::string()).c_str());
    }
    for (const auto& a : events.activities) {
      std::printf(
          "{\"type\":\"activity\",\"kind\":%d,\"source\":%d,\"start_ns\":%llu,\"end_ns\":%llu,"
          "\"bytes\":%llu,\"correlation_id\":%u,\"device\":%u,\"stream\":%u,\"copy_kind\":%u,"
          "\"src_kind\":%d,\"dst_kind\":%d,\"flags\":%u,\"graph_node_id\":%llu,\"name\":%s}\n",
          static_cast<int>(a.kind), static_cast<int>(a.source), (unsigned long long)a.start_ns,
          (unsigned long long)a.end_ns, (unsigned long long)a.bytes, a.correlation_id, a.device,
          a.stream, a.copy_kind, static_cast<int>(a.src_kind), static_cast<int>(a.dst_kind),
          a.flags, (unsigned long long)a.graph_node_id, Json(a.name ? t.string(a.name) : std::string()).c_str());
    }
    for (const auto& n : events.graph_nodes) {
      std::printf("{\"type\":\"graph_node\",\"node_id\":%llu,\"original_node_id\":%llu,"
                  "\"correlation_id\":%u,\"tid\":%llu}\n",
                  (unsigned long long)n.node_id(), (unsigned long long)n.original_node_id(), n.correlation_id(),
                  (unsigned long long)n.thread_id());
    }
    for (const auto& smp : events.samples) {
      std::printf("{\"type\":\"sample\",\"tid\":%llu,\"time_ns\":%llu,\"state\":%d,\"cpu\":%u,"
                  "\"cpu_delta_ns\":%llu,\"stack\":%s}\n",
                  static_cast<unsigned long long>(smp.thread_id), static_cast<unsigned long long>(smp.time_ns),
                  static_cast<int>(smp.state), smp.cpu, static_cast<unsigned long long>(smp.cpu_time_delta_ns),
                  Json(smp.stack ? t.DescribeStack(smp.stack) : std::string()).c_str());
    }
  }
  const auto& s = reader.last_stats();
  std::printf(
      "{\"type\":\"end\",\"clean_end\":%s,\"damage\":%zu,\"cupti_dropped\":%llu,"
      "\"other_dropped\":%llu,\"ring_dropped\":%llu,\"final_mode\":%d,\"final_mode_text\":%s,"
      "\"samples_recorded\":%llu,\"samples_dropped\":%llu}\n",
      reader.stats().clean_end ? "true" : "false", damage.damage.size(),
      (unsigned long long)s.cupti_dropped(), (unsigned long long)s.other_dropped(),
      (unsigned long long)s.ring_dropped(), static_cast<int>(reader.capture().mode()),
      Json(reader.capture().mode_text()).c_str(), (unsigned long long)s.samples_recorded(),
      (unsigned long long)s.samples_dropped());
  return 0;
}
