// gs_fuzz_make_seeds OUT_DIR [TRACE...] — writes the fuzzers' seed corpus (tests/fuzz/run_fuzz).
//
// Seeds, each in both input modes of fuzz_entry.h (a trace file as it is, and its frames as a
// structured input whose checksums the harness recomputes):
//   * synthetic traces from analyzer/testing (starved, healthy, cut mid-frame);
//   * one trace with every record kind, several chunks and a TraceEnd, with zlib-compressed frames
//     and again with zstd-compressed ones (the agent's);
//   * every TRACE given on the command line (tests/fuzz/corpus/ holds small real simgpu traces).
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "analyzer/testing/trace_files.h"
#include "proto/testing/trace_builder.h"
#include "tests/fuzz/fuzz_entry.h"

namespace {

namespace pb = gpustall::trace;
using gs::trace::testing::TraceBuilder;

// A little of everything the format carries.
std::string WriteEveryKindTrace(const std::string& path, bool zstd) {
  pb::TraceHeader header;
  header.set_pid(4242);
  header.set_host_name("fuzzhost");
  TraceBuilder::Options options;
  options.records_per_chunk = 6;
  options.deflate_level = zstd ? 0 : 6;
  options.zstd_level = zstd ? 1 : 0;
  std::string error;
  auto b = TraceBuilder::Create(path, header, options, &error);
  if (!b) return error;
  pb::DeviceInfo dev;
  dev.set_index(0);
  dev.set_name("simgpu");
  dev.set_total_memory(1ull << 34);
  b->AddDevice(dev);
  b->AddThread(100, "main", true);
  b->AddThread(101, "loader");
  const uint32_t launch = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
  const uint32_t copy = b->InternApiFunction("cudaMemcpyAsync", pb::API_CLASS_MEMCPY);
  const uint32_t sync = b->InternApiFunction("cudaStreamSynchronize", pb::API_CLASS_STREAM_SYNC);
  const uint32_t module = b->AddModule("/usr/bin/train", "0011aabb", 0x400000, 0x10000);
  const uint32_t native = b->InternFrame(module, 0x1234);
  const uint32_t py = b->InternPythonFrame("load_batch", "train.py", 42);
  const uint32_t stack = b->InternStack({native, py}, true);
  const uint32_t stack2 = b->InternStackOfFunctions({"train_step@train.cc:7", "main"});
  b->SymbolizeFrame(native, "step", "train.cc", 9);
  const uint32_t kernel_name = b->InternString("gemm_kernel");
  uint64_t t = 1'000'000;
  for (uint32_t i = 1; i <= 12; ++i) {
    gs::trace::ApiCallRecord c;
    c.thread_id = i % 3 ? 100 : 101;
    c.enter_ns = t;
    c.exit_ns = t + 5'000;
    c.function = i % 3 == 0 ? sync : (i % 3 == 1 ? copy : launch);
    c.correlation_id = i;
    c.stack = i % 2 ? stack : stack2;
    c.stream = 7;
    c.bytes = i % 3 == 1 ? 4096 : 0;
    c.copy_kind = i % 3 == 1 ? 1 : 0;
    b->AddApiCall(c);
    gs::trace::GpuActivityRecord a;
    a.start_ns = t + 10'000;
    a.end_ns = t + 60'000;
    a.correlation_id = i;
    a.stream = 7;
    a.kind = i % 3 == 1 ? pb::ACTIVITY_KIND_MEMCPY : pb::ACTIVITY_KIND_KERNEL;
    a.name = a.kind == pb::ACTIVITY_KIND_KERNEL ? kernel_name : 0;
    a.bytes = c.bytes;
    b->AddActivity(a);
    t += 100'000;
  }
  gs::trace::MemoryEventRecord m;
  m.time_ns = t;
  m.address = 0x7000;
  m.bytes = 1 << 20;
  m.kind = pb::MEMORY_EVENT_ALLOC;
  m.stack = stack;
  b->AddMemoryEvent(m);
  gs::trace::SampleRecord s;
  s.thread_id = 101;
  s.time_ns = t + 1;
  s.stack = stack2;
  s.state = pb::THREAD_STATE_RUNNING;
  b->AddSample(s);
  gs::trace::NvtxRangeRecord n;
  n.thread_id = 100;
  n.start_ns = 1'000'000;
  n.end_ns = t;
  n.name = b->InternString("epoch");
  b->AddNvtxRange(n);
  pb::ProcessStats ps;
  ps.set_time_ns(t);
  ps.set_pid(4242);
  b->AddProcessStats(ps);
  pb::ClockSync cs;
  b->AddClockSync(cs);
  return b->Finish() ? "" : "write failed";
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

bool WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gs::analyzer::testing;
  if (argc < 2) {
    std::cerr << "usage: gs_fuzz_make_seeds OUT_DIR [TRACE...]\n";
    return 2;
  }
  const std::string dir = argv[1];
  struct Synthetic {
    const char* name;
    std::string (*write)(const std::string&);
  } synthetic[] = {
      {"starved", [](const std::string& p) { return WriteStarvedTrace(p, 3); }},
      {"healthy", [](const std::string& p) { return WriteHealthyTrace(p, 4); }},
      {"truncated", WriteTruncatedTrace},
      {"every_kind", [](const std::string& p) { return WriteEveryKindTrace(p, false); }},
      {"every_kind_zstd", [](const std::string& p) { return WriteEveryKindTrace(p, true); }},
  };
  std::vector<std::pair<std::string, std::string>> traces;  // name, path
  for (const Synthetic& s : synthetic) {
    const std::string path = dir + "/" + s.name + ".gstrace";
    if (std::string err = s.write(path); !err.empty()) {
      std::cerr << s.name << ": " << err << "\n";
      return 1;
    }
    traces.emplace_back(s.name, path);
  }
  for (int i = 2; i < argc; ++i) {
    std::string base = argv[i];
    base = base.substr(base.rfind('/') + 1);
    traces.emplace_back(base, argv[i]);
  }
  int written = 0;
  for (const auto& [name, path] : traces) {
    std::string bytes;
    if (!ReadFile(path, &bytes)) {
      std::cerr << path << ": cannot read\n";
      return 1;
    }
    // Raw mode: the file as it is (synthetic ones are already in dir).
    if (path.rfind(dir + "/", 0) != 0 && !WriteFile(dir + "/" + name, bytes)) return 1;
    const std::string structured = gs::fuzz::TraceToFuzzInput(bytes);
    if (!structured.empty() && !WriteFile(dir + "/" + name + ".frames", structured)) return 1;
    written += structured.empty() ? 1 : 2;
  }
  std::cout << written << " seeds in " << dir << "\n";
  return 0;
}
