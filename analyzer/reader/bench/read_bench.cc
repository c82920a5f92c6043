// read_bench — read throughput of gs::reader::TraceReader on a large synthetic trace.
//
//   gs_reader_bench [--events N] [--deflate LEVEL] [--keep PATH]
//   gs_reader_bench --read PATH        (only read an existing trace)
//
// Writes a trace of N events (default 50 million: half API calls, half GPU activities, a
// launch/kernel-heavy mix with copies and syncs, 2 threads, 64 stacks) with TraceBuilder, then
// reads it back with TraceReader, touching every record, and prints events/s for both. Not a
// ctest test (it takes tens of seconds and gigabytes of disk); built so it cannot rot.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "analyzer/reader/trace_reader.h"
#include "proto/testing/trace_builder.h"

namespace {

namespace pb = gpustall::trace;
using gs::trace::testing::TraceBuilder;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// CPU time of this process: on a shared, loaded machine it says more than wall time.
double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 50'000'000;
  int deflate = 0;
  std::string path = "/tmp/gs_reader_bench.gstrace";
  bool keep = false, write = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--events") && i + 1 < argc) {
      events = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--deflate") && i + 1 < argc) {
      deflate = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--read") && i + 1 < argc) {
      path = argv[++i];
      keep = true;
      write = false;
    } else if (!std::strcmp(argv[i], "--keep") && i + 1 < argc) {
      path = argv[++i];
      keep = true;
    } else {
      std::fprintf(stderr, "usage: %s [--events N] [--deflate LEVEL] [--keep PATH]\n", argv[0]);
      return 2;
    }
  }

  auto start = std::chrono::steady_clock::now();
  if (write) {
    TraceBuilder::Options options;
    options.deflate_level = deflate;
    pb::TraceHeader header;
    header.set_host_name("bench");
    auto b = TraceBuilder::Create(path, header, options);
    if (b == nullptr) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    const uint32_t launch = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
    const uint32_t copy = b->InternApiFunction("cudaMemcpyAsync", pb::API_CLASS_MEMCPY);
    const uint32_t sync = b->InternApiFunction("cudaStreamSynchronize", pb::API_CLASS_STREAM_SYNC);
    std::vector<uint32_t> stacks, names;
    for (int i = 0; i < 64; ++i) {
      stacks.push_back(b->InternStackOfFunctions(
          {"op" + std::to_string(i), "forward", "train_step", "main"}));
      names.push_back(b->InternString("kernel_" + std::to_string(i)));
    }
    std::mt19937_64 rng(1);
    uint64_t t = 1'000'000'000, gpu = t;
    uint32_t corr = 1;
    for (uint64_t n = 0; n < events; n += 2) {
      const uint64_t k = n / 2;
      gs::trace::ApiCallRecord r;
      const bool is_copy = k % 16 == 0, is_sync = k % 16 == 15;
      r.thread_id = is_copy ? 2 : 1;
      r.enter_ns = t;
      r.exit_ns = t + 3'000 + rng() % 8'000;
      r.function = is_copy ? copy : is_sync ? sync : launch;
      r.correlation_id = corr++;
      r.stack = stacks[k % 64];
      r.stream = 0x5500aa001000;
      if (is_copy) {
        r.bytes = 1 << 22;
        r.copy_kind = 1;
        r.src_kind = pb::MEM_KIND_PAGEABLE;
        r.dst_kind = pb::MEM_KIND_DEVICE;
      }
      b->AddApiCall(r);
      gs::trace::GpuActivityRecord a;
      a.start_ns = gpu = std::max(gpu, r.exit_ns);
      a.end_ns = gpu += 10'000 + rng() % 100'000;
      a.correlation_id = r.correlation_id;
      a.kind = is_copy ? pb::ACTIVITY_KIND_MEMCPY : pb::ACTIVITY_KIND_KERNEL;
      a.source = pb::ACTIVITY_SOURCE_CUPTI;
      a.stream = 7;
      a.bytes = r.bytes;
      a.name = is_copy ? 0 : names[k % 64];
      b->AddActivity(a);
      t = r.exit_ns + 1'000 + rng() % 5'000;
    }
    if (!b->Finish()) {
      std::fprintf(stderr, "write failed\n");
      return 1;
    }
    const double s = Seconds(start);
    std::printf("write: %llu events, %llu bytes (%.2f bytes/event) in %.2f s: %.1f M events/s\n",
                static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(b->bytes_written()),
                static_cast<double>(b->bytes_written()) / static_cast<double>(events), s,
                static_cast<double>(events) / s / 1e6);
  }

  start = std::chrono::steady_clock::now();
  const double cpu_start = CpuSeconds();
  gs::reader::CollectingReporter damage;
  auto reader = gs::reader::TraceReader::Open(path, &damage);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  gs::reader::ChunkEvents ev;
  uint64_t checksum = 0, n = 0;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&ev);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", more.status().ToString().c_str());
      return 1;
    }
    if (!*more) break;
    // Touch every record so the work cannot be skipped.
    for (const auto& c : ev.api_calls) checksum += c.exit_ns - c.enter_ns + c.api_class;
    for (const auto& a : ev.activities) checksum += a.end_ns - a.start_ns + a.kind;
    n += ev.api_calls.size() + ev.activities.size();
  }
  const double s = Seconds(start), cpu = CpuSeconds() - cpu_start;
  std::printf("read:  %llu events in %.2f s wall, %.2f s CPU: %.1f M events/s wall, %.1f M events/s "
              "CPU (%zu damage reports, checksum %llu)\n",
              static_cast<unsigned long long>(n), s, cpu, static_cast<double>(n) / s / 1e6,
              static_cast<double>(n) / cpu / 1e6, damage.damage.size(),
              static_cast<unsigned long long>(checksum % 1000));
  if (!keep) std::remove(path.c_str());
  return (n == events || !write) && damage.damage.empty() ? 0 : 1;
}
