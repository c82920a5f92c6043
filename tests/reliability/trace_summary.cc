// trace_summary.cc — one JSON object that sums a trace up, for reliability.py.
//
//   gs_reliability_trace_summary TRACE [PLANTED_FUNCTION]
// Prints {"ok":true, "chunks":N, "clean_end":bool, "truncated_bytes":N, "damage":N,
// "api_calls":N, "calls_by_function":{name:N}, "threads":N, "first_ns":T, "last_ns":T,
// "activities":N, "planted_stacks":N, "repeated_calls":N, "stats":{...last cumulative Stats...}}.
// `repeated_calls`: API calls with the thread, function and entry time of an earlier one (a call
// recorded twice).
// `last_ns` is the latest timestamp of any record (API exit or GPU end): how far the trace reaches.
// `planted_stacks`: API calls whose stack names PLANTED_FUNCTION. Unlike e2e's per-record JSON
// this stays small for traces of millions of calls (the flood test). Exit status 1 (and the
// reader's message on stderr) when the file cannot be opened as a trace.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/reader/trace_reader.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s TRACE [PLANTED_FUNCTION]\n", argv[0]);
    return 2;
  }
  const std::string planted = argc == 3 ? argv[2] : "";
  gs::reader::CollectingReporter damage;
  auto opened = gs::reader::TraceReader::Open(argv[1], &damage);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
    return 1;
  }
  gs::reader::TraceReader& reader = **opened;
  std::map<std::string, uint64_t> by_function;
  absl::flat_hash_map<uint32_t, uint64_t> calls_by_function_id;
  absl::flat_hash_map<uint32_t, bool> stack_has_planted;
  std::set<uint64_t> threads;
  absl::flat_hash_set<std::tuple<uint64_t, uint32_t, uint64_t>> seen;  // thread, function, entry
  uint64_t repeated_calls = 0;
  uint64_t api = 0, activities = 0, planted_calls = 0;
  uint64_t first_ns = ~0ull, last_ns = 0;
  gs::reader::ChunkEvents ev;
  while (true) {
    auto more = reader.Next(&ev);
    if (!more.ok() || !*more) break;
    const auto& t = reader.tables();
    for (const auto& c : ev.api_calls) {
      ++api;
      ++calls_by_function_id[c.function];
      threads.insert(c.thread_id);
      repeated_calls += !seen.emplace(c.thread_id, c.function, c.enter_ns).second;
      if (c.enter_ns < first_ns) first_ns = c.enter_ns;
      if (c.exit_ns > last_ns) last_ns = c.exit_ns;
      if (!planted.empty() && c.stack != 0) {
        auto [it, inserted] = stack_has_planted.try_emplace(c.stack, false);
        if (inserted) it->second = t.DescribeStack(c.stack).find(planted) != std::string::npos;
        planted_calls += it->second;
      }
    }
    for (const auto& a : ev.activities) {
      ++activities;
      if (a.end_ns > last_ns) last_ns = a.end_ns;
    }
  }
  for (const auto& [id, n] : calls_by_function_id) {
    by_function[std::string(reader.tables().function_name(id))] += n;
  }
  const auto& rs = reader.stats();
  const auto& s = reader.last_stats();
  std::printf("{\"ok\":true,\"chunks\":%llu,\"clean_end\":%s,\"truncated_bytes\":%llu,"
              "\"damage\":%zu,\"api_calls\":%llu,\"activities\":%llu,\"threads\":%zu,"
              "\"first_ns\":%llu,\"last_ns\":%llu,\"planted_calls\":%llu,\"calls_by_function\":{",
              (unsigned long long)rs.chunks, rs.clean_end ? "true" : "false",
              (unsigned long long)rs.truncated_bytes, damage.damage.size(),
              (unsigned long long)api, (unsigned long long)activities, threads.size(),
              (unsigned long long)(api ? first_ns : 0), (unsigned long long)last_ns,
              (unsigned long long)planted_calls);
  const char* sep = "";
  for (const auto& [name, n] : by_function) {
    std::printf("%s\"%s\":%llu", sep, name.c_str(), (unsigned long long)n);  // CUDA names: no escapes
    sep = ",";
  }
  std::printf("},\"repeated_calls\":%llu", (unsigned long long)repeated_calls);
  std::printf(",\"stats\":{\"api_calls_recorded\":%llu,\"ring_dropped\":%llu,\"cupti_dropped\":%llu,"
              "\"host_waits_recorded\":%llu,\"other_dropped\":%llu,\"write_errors\":%llu,\"memory_bound_bytes\":%llu,"
              "\"memory_used_bytes\":%llu,\"chunks_written\":%llu}}\n",
              (unsigned long long)s.api_calls_recorded(), (unsigned long long)s.ring_dropped(),
              (unsigned long long)s.cupti_dropped(), (unsigned long long)s.host_waits_recorded(),
              (unsigned long long)s.other_dropped(),
              (unsigned long long)s.write_errors(), (unsigned long long)s.memory_bound_bytes(),
              (unsigned long long)s.memory_used_bytes(), (unsigned long long)s.chunks_written());
  return 0;
}
