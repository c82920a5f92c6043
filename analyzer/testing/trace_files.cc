#include "analyzer/testing/trace_files.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "proto/testing/trace_builder.h"

namespace gs::analyzer::testing {

namespace tr = gpustall::trace;
using gs::trace::ApiCallRecord;
using gs::trace::GpuActivityRecord;
using gs::trace::HostWaitRecord;
using gs::trace::NvtxRangeRecord;
using gs::trace::SampleRecord;
using gs::trace::testing::TraceBuilder;

namespace {

constexpr uint64_t kUs = 1'000, kMs = 1'000'000;
constexpr uint64_t kT0 = 5'000'000'000;  // an arbitrary CLOCK_MONOTONIC origin

tr::TraceHeader Header(uint32_t schema = 0) {
  tr::TraceHeader h;
  h.set_schema_version(schema);
  h.set_host_name("testhost");
  h.set_pid(4242);
  h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
  h.mutable_capture()->set_mode_text("cupti");
  h.mutable_capture()->set_native_stacks(true);
  tr::DeviceInfo* d = h.add_devices();
  d->set_index(0);
  d->set_name("Simulated GPU");
  d->set_total_memory(16ull << 30);
  d->set_pcie_generation(4);
  d->set_pcie_width(16);
  return h;
}

struct Writer {
  TraceBuilder* b;
  uint32_t corr = 1;
  ApiCallRecord Call(uint32_t fn, uint64_t enter, uint64_t exit, uint32_t stack) {
    ApiCallRecord c;
    c.thread_id = 100;
    c.enter_ns = enter;
    c.exit_ns = exit;
    c.function = fn;
    c.stack = stack;
    c.correlation_id = corr++;
    c.stream = 0x7;
    return c;
  }
  void Kernel(const ApiCallRecord& c, uint64_t start, uint64_t end, uint32_t name, uint32_t launch_config = 0) {
    GpuActivityRecord a;
    a.launch_config = launch_config;
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = c.correlation_id;
    a.kind = tr::ACTIVITY_KIND_KERNEL;
    a.source = tr::ACTIVITY_SOURCE_CUPTI;
    a.stream = 7;
    a.name = name;
    b->AddActivity(a);
  }
  void CopyActivity(const ApiCallRecord& c, uint64_t start, uint64_t end, uint8_t cupti_kind) {
    GpuActivityRecord a;
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = c.correlation_id;
    a.kind = tr::ACTIVITY_KIND_MEMCPY;
    a.source = tr::ACTIVITY_SOURCE_CUPTI;
    a.stream = 7;
    a.bytes = c.bytes;
    a.copy_kind = cupti_kind;
    a.src_kind = c.src_kind;
    a.dst_kind = c.dst_kind;
    b->AddActivity(a);
  }
};

std::string WriteStarved(const std::string& path, int steps, bool finish, bool step_ranges = false) {
  std::string error;
  TraceBuilder::Options opt;
  opt.records_per_chunk = 64;  // several chunks, so a cut file keeps most of them
  auto b = TraceBuilder::Create(path, Header(), opt, &error);
  if (!b) return error;
  Writer w{b.get()};
  uint32_t malloc_fn = b->InternApiFunction("cudaMalloc", tr::API_CLASS_MALLOC);
  uint32_t memcpy_fn = b->InternApiFunction("cudaMemcpy", tr::API_CLASS_MEMCPY);
  uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  uint32_t setup = b->InternStackOfFunctions({"cudaMalloc", "setup@workload.cc:20", "main@workload.cc:99"});
  uint32_t to_dev = b->InternStackOfFunctions({"cudaMemcpy", "copy_batch@workload.cc:51", "load_batch@workload.cc:42", "train_step@workload.cc:80", "main@workload.cc:99"});
  uint32_t fwd = b->InternStackOfFunctions({"cudaLaunchKernel", "forward@workload.cc:61", "train_step@workload.cc:80", "main@workload.cc:99"});
  uint32_t item = b->InternStackOfFunctions({"cudaMemcpy", "read_loss@workload.cc:70", "train_step@workload.cc:80", "main@workload.cc:99"});
  uint32_t gemm = b->InternString("gemm_kernel");
  b->AddThread(100, "python", true);
  // NVTX ranges as a loop marks its steps: "train_step N" around each step (outermost), its
  // phases inside ("load", "forward"; depth 1), and an outermost "setup" once.
  auto range = [&](const std::string& name, uint64_t start, uint64_t end, uint32_t depth) {
    if (!step_ranges) return;
    NvtxRangeRecord r;
    r.thread_id = 100;
    r.start_ns = start;
    r.end_ns = end;
    r.name = b->InternString(name);  // the builder interns each text once
    r.depth = depth;
    b->AddNvtxRange(r);
  };

  uint64_t now = kT0;
  range("setup", now, now + 2 * kMs, 0);
  ApiCallRecord m = w.Call(malloc_fn, now, now + 2 * kMs, setup);
  m.bytes = 256ull << 20;
  m.address = 0x7f0000000000;
  b->AddApiCall(m);
  now += 5 * kMs;
  for (int i = 0; i < steps; ++i) {
    const uint64_t step_start = now;
    range("load", now, now + 33 * kMs, 1);
    now += 30 * kMs;  // load_batch: CPU work, no CUDA calls
    ApiCallRecord h2d = w.Call(memcpy_fn, now, now + 3 * kMs, to_dev);
    h2d.bytes = 8 << 20;
    h2d.copy_kind = 1;  // cudaMemcpyHostToDevice
    h2d.src_kind = tr::MEM_KIND_PAGEABLE;
    h2d.dst_kind = tr::MEM_KIND_DEVICE;
    b->AddApiCall(h2d);
    w.CopyActivity(h2d, now + 2 * kMs, now + 3 * kMs, /*HTOD*/ 1);
    now += 3 * kMs;
    uint64_t dev = now + 10 * kUs;
    for (int k = 0; k < 3; ++k) {
      ApiCallRecord l = w.Call(launch_fn, now, now + 6 * kUs, fwd);
      l.flags = 1;
      b->AddApiCall(l);
      w.Kernel(l, dev, dev + 2 * kMs, gemm);
      dev += 2 * kMs;
      now += 8 * kUs;
    }
    ApiCallRecord d2h = w.Call(memcpy_fn, now, dev + 30 * kUs, item);  // .item(): blocks
    d2h.bytes = 4;
    d2h.copy_kind = 2;  // cudaMemcpyDeviceToHost
    d2h.src_kind = tr::MEM_KIND_DEVICE;
    d2h.dst_kind = tr::MEM_KIND_PAGEABLE;
    b->AddApiCall(d2h);
    w.CopyActivity(d2h, dev + 5 * kUs, dev + 25 * kUs, /*DTOH*/ 2);
    range("forward", step_start + 33 * kMs, dev, 1);
    now = dev + 30 * kUs;
    range(absl::StrCat("train_step ", i), step_start, now, 0);
  }
  now += 10 * kMs;
  ApiCallRecord f = w.Call(b->InternApiFunction("cudaFree", tr::API_CLASS_FREE), now, now + 1 * kMs, 0);
  f.address = 0x7f0000000000;
  b->AddApiCall(f);
  if (!finish) return b->CloseWithoutEnd() ? "" : "write failed";
  return b->Finish() ? "" : "write failed";
}

}  // namespace

std::string WriteStarvedTrace(const std::string& path, int steps) { return WriteStarved(path, steps, true); }

std::string WriteStarvedTraceWithStepRanges(const std::string& path, int steps) {
  return WriteStarved(path, steps, true, /*step_ranges=*/true);
}

std::string WriteHealthyTrace(const std::string& path, int steps) {
  std::string error;
  auto b = TraceBuilder::Create(path, Header(), TraceBuilder::Options(), &error);
  if (!b) return error;
  Writer w{b.get()};
  uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  uint32_t stack = b->InternStackOfFunctions({"cudaLaunchKernel", "step@healthy.cc:10", "main@healthy.cc:30"});
  uint64_t host = kT0, dev = kT0 + 20 * kUs;
  for (int i = 0; i < steps; ++i) {
    ApiCallRecord l = w.Call(launch_fn, host, host + 5 * kUs, stack);
    l.flags = 1;
    b->AddApiCall(l);
    w.Kernel(l, dev, dev + 10 * kMs, 0);
    dev += 10 * kMs + 2 * kUs;  // queued: the device starts the next one right away
    host += 20 * kUs;
  }
  return b->Finish() ? "" : "write failed";
}

std::string WriteTruncatedTrace(const std::string& path) {
  std::string err = WriteStarved(path, 12, false);
  if (!err.empty()) return err;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "cannot reopen";
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fclose(f);
  if (truncate(path.c_str(), size - 100) != 0) return "truncate failed";
  return "";
}

std::string WriteNewerSchemaTrace(const std::string& path) {
  std::string error;
  auto b = TraceBuilder::Create(path, Header(/*schema=*/999), TraceBuilder::Options(), &error);
  if (!b) return error;
  return b->Finish() ? "" : "write failed";
}

std::string WriteNotATrace(const std::string& path) {
  std::ofstream out(path);
  out << "this is not a trace\n";
  return out ? "" : "write failed";
}

gpustall::trace::LaunchConfig LaunchConfigMessage(uint32_t id, uint32_t grid_x, uint32_t block_x,
                                                  uint32_t registers, uint32_t static_shared,
                                                  uint32_t dynamic_shared) {
  tr::LaunchConfig c;
  c.set_id(id);
  c.set_grid_x(grid_x), c.set_grid_y(1), c.set_grid_z(1);
  c.set_block_x(block_x), c.set_block_y(1), c.set_block_z(1);
  c.set_registers_per_thread(registers);
  c.set_static_shared_memory(static_shared);
  c.set_dynamic_shared_memory(dynamic_shared);
  c.set_has_resources(true);
  return c;
}

gpustall::trace::DeviceInfo H100Device(uint32_t index) {
  // H100 SXM (CUDA C Programming Guide, compute capability 9.0; 132 SMs: the H100 whitepaper).
  tr::DeviceInfo d;
  d.set_index(index);
  d.set_name("H100");
  d.set_sm_count(132);
  d.set_compute_major(9);
  d.set_compute_minor(0);
  d.set_max_threads_per_block(1024);
  d.set_max_threads_per_sm(2048);
  d.set_warp_size(32);
  d.set_registers_per_block(65536);
  d.set_registers_per_sm(65536);
  d.set_max_blocks_per_sm(32);
  d.set_shared_memory_per_block(49152);
  d.set_shared_memory_per_block_optin(232448);
  d.set_shared_memory_per_sm(233472);
  d.set_reserved_shared_memory_per_block(1024);
  d.set_has_reserved_shared_memory(true);
  return d;
}

std::string WriteSizedTrace(const std::string& path, int steps, int rank) {
  tr::TraceHeader h = Header();
  h.clear_devices();  // described in the first chunk, with its limits, as the agent does
  if (rank >= 0) {
    h.set_rank(rank);
    h.set_world_size(2);
    h.set_pid(4242 + rank);
  }
  std::string error;
  auto b = TraceBuilder::Create(path, h, TraceBuilder::Options(), &error);
  if (!b) return error;
  b->AddDevice(H100Device(0));
  const tr::LaunchConfig tiny = LaunchConfigMessage(1, 1, 256, 32, 2048, 4096);
  const tr::LaunchConfig big = LaunchConfigMessage(2, 264, 1024, 64, 0, 0);
  b->AddLaunchConfig(tiny);
  b->AddLaunchConfig(big);
  Writer w{b.get()};
  const uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  const uint32_t tiny_site = b->InternStackOfFunctions({"cudaLaunchKernel", "launch_tiny@sized.cc:10", "main@sized.cc:40"});
  const uint32_t big_site = b->InternStackOfFunctions({"cudaLaunchKernel", "launch_big@sized.cc:20", "main@sized.cc:40"});
  const uint32_t tiny_name = b->InternString("tiny_kernel"), big_name = b->InternString("register_bound");
  b->AddThread(100, "main", true);
  for (int s = 0; s < steps; ++s) {
    const uint64_t t = kT0 + static_cast<uint64_t>(s) * 3 * kMs;
    ApiCallRecord c = w.Call(launch_fn, t, t + 5 * kUs, tiny_site);
    b->AddApiCall(c);
    w.Kernel(c, t + 10 * kUs, t + 1010 * kUs, tiny_name, tiny.id());
    ApiCallRecord l = w.Call(launch_fn, t + 1010 * kUs, t + 1015 * kUs, big_site);
    b->AddApiCall(l);
    w.Kernel(l, t + 1500 * kUs, t + 2500 * kUs, big_name, big.id());
  }
  return b->Finish() ? "" : "write failed";
}

std::string WriteLargeTrace(const std::string& path, uint64_t min_events, uint64_t* events, bool host_detail) {
  std::string error;
  TraceBuilder::Options opt;
  opt.records_per_chunk = 16384;
  auto b = TraceBuilder::Create(path, Header(), opt, &error);
  if (!b) return error;
  Writer w{b.get()};
  uint32_t launch_fn = b->InternApiFunction("cudaLaunchKernel", tr::API_CLASS_LAUNCH);
  uint32_t copy_fn = b->InternApiFunction("cudaMemcpyAsync", tr::API_CLASS_MEMCPY);
  uint32_t stacks[4];
  for (int s = 0; s < 4; ++s)
    stacks[s] = b->InternStackOfFunctions({"cudaLaunchKernel", absl::StrCat("layer", s, "@model.cc:", 10 + s),
                                           "forward@model.cc:5", "main@model.cc:1"});
  const uint32_t wait_stack = b->InternStackOfFunctions({"next_batch@data.cc:20", "main@model.cc:1"});
  const uint32_t sample_stack = b->InternStackOfFunctions({"collate@data.cc:40", "main@model.cc:1"});
  uint64_t step = 0;
  uint64_t now = kT0, n = 0;
  while (n < min_events) {
    // A step: an async pinned copy, three launches of 20 µs kernels, then 100 µs of host work.
    ApiCallRecord c = w.Call(copy_fn, now, now + 4 * kUs, stacks[3]);
    c.bytes = 1 << 20;
    c.copy_kind = 1;
    c.src_kind = tr::MEM_KIND_PINNED;
    c.dst_kind = tr::MEM_KIND_DEVICE;
    c.flags = 1;
    b->AddApiCall(c);
    w.CopyActivity(c, now + 6 * kUs, now + 50 * kUs, 1);
    uint64_t dev = now + 52 * kUs;
    now += 5 * kUs;
    for (int k = 0; k < 3; ++k) {
      ApiCallRecord l = w.Call(launch_fn, now, now + 5 * kUs, stacks[k]);
      l.flags = 1;
      b->AddApiCall(l);
      w.Kernel(l, dev, dev + 20 * kUs, 0);
      dev += 21 * kUs;
      now += 6 * kUs;
    }
    now = dev + 100 * kUs;
    n += 8;
    if (host_detail) {
      HostWaitRecord hw;
      hw.thread_id = 100;
      hw.start_ns = now - 80 * kUs;
      hw.end_ns = now - 20 * kUs;
      hw.stack = wait_stack;
      hw.state = tr::THREAD_STATE_LOCK_WAIT;
      b->AddHostWait(hw);
      ++n;
      if (step % 4 == 0) {
        SampleRecord sr;
        sr.thread_id = 100;
        sr.time_ns = now - 90 * kUs;
        sr.stack = sample_stack;
        sr.state = tr::THREAD_STATE_RUNNING;
        b->AddSample(sr);
        ++n;
      }
    }
    ++step;
  }
  *events = n;
  return b->Finish() ? "" : "write failed";
}

void AddCopyLoop(TraceBuilder* b, const std::vector<uint32_t>& stacks, uint32_t steps,
                 std::string_view thread_name, uint32_t first_step) {
  const uint32_t memcpy_fn = b->InternApiFunction("cudaMemcpyAsync", tr::API_CLASS_MEMCPY);
  b->AddThread(100, thread_name, true);
  constexpr uint64_t kMs = 1'000'000;
  uint64_t now = 5'000'000'000 + uint64_t{first_step - 1} * 25 * kMs;
  for (uint32_t step = first_step; step < first_step + steps; ++step) {
    now += 20 * kMs;  // host work: no CUDA call
    ApiCallRecord c;
    c.thread_id = 100;
    c.enter_ns = now;
    c.exit_ns = now + kMs / 10;
    c.function = memcpy_fn;
    c.stack = stacks[step % stacks.size()];
    c.correlation_id = step;
    c.stream = 7;
    c.bytes = 1 << 20;
    c.copy_kind = 1;
    c.flags = 1;
    b->AddApiCall(c);
    GpuActivityRecord a;
    a.start_ns = now + kMs / 5;
    a.end_ns = now + 5 * kMs;
    a.correlation_id = step;
    a.kind = tr::ACTIVITY_KIND_MEMCPY;
    a.source = tr::ACTIVITY_SOURCE_CUPTI;
    a.stream = 7;
    a.bytes = c.bytes;
    a.copy_kind = 1;
    b->AddActivity(a);
    now += 5 * kMs;
  }
}

}  // namespace gs::analyzer::testing
