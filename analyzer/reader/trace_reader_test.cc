#include "analyzer/reader/trace_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/reader/dump.h"
#include "proto/framing.h"
#include "proto/testing/trace_builder.h"

namespace gs::reader {
namespace {

namespace pb = gpustall::trace;
using trace::ApiCallRecord;
using trace::GpuActivityRecord;
using trace::MemoryEventRecord;
using trace::NvtxRangeRecord;
using trace::SampleRecord;
using trace::testing::TraceBuilder;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/gs_reader_test_" + std::to_string(::getpid()) + "_" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

pb::TraceHeader TestHeader() {
  pb::TraceHeader h;
  h.set_host_name("node-7");
  h.set_host_id("0123456789abcdef");
  h.set_pid(4242);
  h.set_ppid(1);
  h.set_rank(3);
  h.set_world_size(8);
  h.set_job_id("job-99");
  h.add_command_line("python");
  h.add_command_line("train.py");
  h.mutable_start_clock()->set_monotonic_ns(1'000'000);
  h.mutable_start_clock()->set_realtime_ns(1'700'000'000'000'000'000);
  h.mutable_capture()->set_mode(pb::CAPTURE_MODE_CUPTI);
  h.mutable_capture()->set_mode_text("cupti");
  h.set_cupti_version(26);
  pb::DeviceInfo* d = h.add_devices();
  d->set_index(0);
  d->set_name("Simulated GPU");
  d->set_pcie_generation(4);
  d->set_pcie_width(16);
  return h;
}

// Everything a small trace holds, as written, to compare with what is read back.
struct Written {
  std::vector<ApiCallRecord> api_calls;
  std::vector<GpuActivityRecord> activities;
  std::vector<MemoryEventRecord> memory_events;
  std::vector<SampleRecord> samples;
  std::vector<NvtxRangeRecord> nvtx_ranges;
  std::vector<trace::HostWaitRecord> host_waits;
  uint32_t launch = 0, memcpy = 0, sync = 0;
  uint32_t stack_a = 0, stack_b = 0, kernel_name = 0;
  std::vector<uint64_t> frame_offsets;  // header, chunks..., end
  uint64_t size = 0;
};

// A small trace: two threads, launches + kernels, pageable copies, syncs, memory events,
// samples and NVTX ranges, in chunks of `per_chunk` records.
Written BuildSmallTrace(const std::string& path, uint32_t per_chunk, int deflate_level = 0,
                        int steps = 6, bool finish = true, int zstd_level = 0) {
  TraceBuilder::Options options;
  options.records_per_chunk = per_chunk;
  options.deflate_level = deflate_level;
  options.zstd_level = zstd_level;
  auto b = TraceBuilder::Create(path, TestHeader(), options);
  EXPECT_NE(b, nullptr);
  Written w;
  w.launch = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
  w.memcpy = b->InternApiFunction("cudaMemcpyAsync", pb::API_CLASS_MEMCPY);
  w.sync = b->InternApiFunction("cudaStreamSynchronize", pb::API_CLASS_STREAM_SYNC,
                                pb::API_SOURCE_CUPTI_CALLBACK, 131);
  w.stack_a = b->InternStackOfFunctions({"load_batch@workload.cc:42", "train_step@workload.cc:80",
                                         "main@workload.cc:120"});
  w.stack_b = b->InternStackOfFunctions({"launch_gemm@kernels.cu:7", "train_step@workload.cc:81",
                                         "main@workload.cc:120"});
  w.kernel_name = b->InternString("gemm_kernel<float>");
  b->AddThread(100, "python", true);
  b->AddThread(101, "pt_data_worker");
  uint64_t t = 5'000'000'000;
  uint32_t corr = 1;
  for (int step = 0; step < steps; ++step) {
    ApiCallRecord copy;
    copy.thread_id = 101;
    copy.enter_ns = t;
    copy.exit_ns = t + 30'000;
    copy.function = w.memcpy;
    copy.correlation_id = corr++;
    copy.stack = w.stack_a;
    copy.bytes = 4 << 20;
    copy.stream = 0x7f00deadbeef;
    copy.address = 0x7f1000000000 + step * 4096;
    copy.copy_kind = 1;
    copy.src_kind = pb::MEM_KIND_PAGEABLE;
    copy.dst_kind = pb::MEM_KIND_DEVICE;
    copy.flags = 1;
    w.api_calls.push_back(copy);
    GpuActivityRecord h2d;
    h2d.start_ns = t + 10'000;
    h2d.end_ns = t + 400'000;
    h2d.correlation_id = copy.correlation_id;
    h2d.kind = pb::ACTIVITY_KIND_MEMCPY;
    h2d.source = pb::ACTIVITY_SOURCE_CUPTI;
    h2d.bytes = copy.bytes;
    h2d.stream = 7;
    h2d.copy_kind = 1;
    h2d.src_kind = pb::MEM_KIND_PAGEABLE;
    h2d.dst_kind = pb::MEM_KIND_DEVICE;
    h2d.flags = 1;
    w.activities.push_back(h2d);
    t += 50'000;
    for (int k = 0; k < 3; ++k) {
      ApiCallRecord launch;
      launch.thread_id = 100;
      launch.enter_ns = t;
      launch.exit_ns = t + 6'000;
      launch.function = w.launch;
      launch.correlation_id = corr++;
      launch.stack = w.stack_b;
      launch.stream = 0x7f00deadbeef;
      launch.address = 0x55550000abc0;
      w.api_calls.push_back(launch);
      GpuActivityRecord kernel;
      kernel.start_ns = t + 420'000 + k * 100'000;
      kernel.end_ns = kernel.start_ns + 95'000;
      kernel.correlation_id = launch.correlation_id;
      kernel.kind = pb::ACTIVITY_KIND_KERNEL;
      kernel.source = pb::ACTIVITY_SOURCE_CUPTI;
      kernel.stream = 7;
      kernel.context = 1;
      kernel.name = w.kernel_name;
      w.activities.push_back(kernel);
      t += 8'000;
    }
    ApiCallRecord sync;
    sync.thread_id = 100;
    sync.enter_ns = t;
    sync.exit_ns = t + 700'000;
    sync.function = w.sync;
    sync.correlation_id = corr++;
    sync.stream = 0x7f00deadbeef;
    sync.result = step == 3 ? 700 : 0;  // one failure, to see a non-zero result survive
    w.api_calls.push_back(sync);
    t += 800'000;
    MemoryEventRecord mem;
    mem.time_ns = t;
    mem.kind = step % 2 ? pb::MEMORY_EVENT_FREE : pb::MEMORY_EVENT_ALLOC;
    mem.address = 0x7f2000000000;
    mem.bytes = 1 << 30;
    mem.mem_kind = pb::MEM_KIND_DEVICE;
    mem.thread_id = 100;
    mem.stack = w.stack_b;
    w.memory_events.push_back(mem);
    SampleRecord sample;
    sample.thread_id = 101;
    sample.time_ns = t - 100'000;
    sample.stack = w.stack_a;
    sample.state = pb::THREAD_STATE_IO_WAIT;
    sample.cpu = 3;
    sample.cpu_time_delta_ns = 1234;
    w.samples.push_back(sample);
    NvtxRangeRecord range;
    range.thread_id = 100;
    range.start_ns = t - 900'000;
    range.end_ns = t;
    range.name = b->InternString("step " + std::to_string(step));
    range.color = 0xff00ff00;
    range.depth = 1;
    w.nvtx_ranges.push_back(range);
    trace::HostWaitRecord wait;
    wait.thread_id = 100;
    wait.start_ns = t - 800'000;
    wait.end_ns = t - 200'000;
    wait.function = b->InternString("clock_nanosleep");
    wait.state = pb::THREAD_STATE_IDLE;
    wait.stack = w.stack_b;
    w.host_waits.push_back(wait);
  }
  // Emit in an order that mixes record types within chunks.
  size_t ai = 0, gi = 0;
  for (size_t step = 0; step < w.memory_events.size(); ++step) {
    for (int k = 0; k < 5; ++k) b->AddApiCall(w.api_calls[ai++]);
    for (int k = 0; k < 4; ++k) b->AddActivity(w.activities[gi++]);
    b->AddMemoryEvent(w.memory_events[step]);
    b->AddSample(w.samples[step]);
    b->AddNvtxRange(w.nvtx_ranges[step]);
    b->AddHostWait(w.host_waits[step]);
    if (step == 1) {
      pb::CaptureInfo capture;
      capture.set_mode(pb::CAPTURE_MODE_INTERPOSITION);
      capture.set_detail("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
      b->SetCapture(capture);
      pb::ProcessStats ps;
      ps.set_pid(4243);
      ps.set_role(pb::PROCESS_ROLE_DATA_WORKER);
      ps.set_utime_ns(5'000'000);
      b->AddProcessStats(ps);
      pb::ClockSync cs;
      cs.set_domain(pb::CLOCK_DOMAIN_CUPTI);
      cs.set_monotonic_ns(t);
      cs.set_other_ns(t + 17);
      b->AddClockSync(cs);
    }
  }
  if (finish) {
    EXPECT_TRUE(b->Finish());
  } else {
    EXPECT_TRUE(b->CloseWithoutEnd());
  }
  w.frame_offsets = b->frame_offsets();
  w.size = b->bytes_written();
  return w;
}

// Everything read from a trace.
struct ReadBack {
  std::vector<ApiCallRecord> api_calls;
  std::vector<GpuActivityRecord> activities;
  std::vector<MemoryEventRecord> memory_events;
  std::vector<SampleRecord> samples;
  std::vector<NvtxRangeRecord> nvtx_ranges;
  std::vector<trace::HostWaitRecord> host_waits;
  std::vector<uint64_t> chunk_offsets;
  std::vector<pb::ProcessStats> process_stats;
  std::vector<pb::ClockSync> clock_syncs;
};

ReadBack ReadAll(TraceReader& reader) {
  ReadBack r;
  ChunkEvents ev;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&ev);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    r.chunk_offsets.push_back(ev.offset);
    r.api_calls.insert(r.api_calls.end(), ev.api_calls.begin(), ev.api_calls.end());
    r.activities.insert(r.activities.end(), ev.activities.begin(), ev.activities.end());
    r.memory_events.insert(r.memory_events.end(), ev.memory_events.begin(), ev.memory_events.end());
    r.samples.insert(r.samples.end(), ev.samples.begin(), ev.samples.end());
    r.nvtx_ranges.insert(r.nvtx_ranges.end(), ev.nvtx_ranges.begin(), ev.nvtx_ranges.end());
    r.host_waits.insert(r.host_waits.end(), ev.host_waits.begin(), ev.host_waits.end());
    r.process_stats.insert(r.process_stats.end(), ev.process_stats.begin(), ev.process_stats.end());
    r.clock_syncs.insert(r.clock_syncs.end(), ev.clock_syncs.begin(), ev.clock_syncs.end());
  }
  return r;
}

TEST(ReaderTest, RoundTripsEveryRecordType) {
  for (const char* codec : {"raw", "deflate", "zstd"}) {
    SCOPED_TRACE(codec);
    const std::string path = TempPath("roundtrip");
    const Written w = BuildSmallTrace(path, 7, codec == std::string("deflate") ? 1 : 0, 6, true,
                                      codec == std::string("zstd") ? 1 : 0);
    CollectingReporter damage;
    auto reader = TraceReader::Open(path, &damage);
    ASSERT_TRUE(reader.ok()) << reader.status();
    TraceReader& r = **reader;
    EXPECT_EQ(r.header().host_name(), "node-7");
    EXPECT_EQ(r.header().pid(), 4242);
    ASSERT_TRUE(r.header().has_rank());
    EXPECT_EQ(r.header().rank(), 3);
    EXPECT_FALSE(r.header().has_local_rank());
    EXPECT_EQ(r.header().schema_version(), trace::kSchemaVersion);
    EXPECT_EQ(r.capture().mode(), pb::CAPTURE_MODE_CUPTI);
    const ReadBack got = ReadAll(r);
    EXPECT_TRUE(damage.damage.empty());

    ASSERT_EQ(got.api_calls.size(), w.api_calls.size());
    for (size_t i = 0; i < w.api_calls.size(); ++i) {
      const ApiCallRecord& a = w.api_calls[i];
      // Records are grouped per thread inside a chunk: find the same call by correlation id.
      const ApiCallRecord* b = nullptr;
      for (const auto& c : got.api_calls) {
        if (c.correlation_id == a.correlation_id) b = &c;
      }
      ASSERT_NE(b, nullptr) << "correlation " << a.correlation_id;
      EXPECT_EQ(b->thread_id, a.thread_id);
      EXPECT_EQ(b->enter_ns, a.enter_ns);
      EXPECT_EQ(b->exit_ns, a.exit_ns);
      EXPECT_EQ(b->function, a.function);
      EXPECT_EQ(b->stack, a.stack);
      EXPECT_EQ(b->bytes, a.bytes);
      EXPECT_EQ(b->stream, a.stream);
      EXPECT_EQ(b->address, a.address);
      EXPECT_EQ(b->result, a.result);
      EXPECT_EQ(b->copy_kind, a.copy_kind);
      EXPECT_EQ(b->src_kind, a.src_kind);
      EXPECT_EQ(b->dst_kind, a.dst_kind);
      EXPECT_EQ(b->flags, a.flags);
      EXPECT_EQ(b->api_class, r.tables().function_class(a.function));
    }
    ASSERT_EQ(got.activities.size(), w.activities.size());
    for (size_t i = 0; i < w.activities.size(); ++i) {
      EXPECT_EQ(got.activities[i].start_ns, w.activities[i].start_ns);
      EXPECT_EQ(got.activities[i].end_ns, w.activities[i].end_ns);
      EXPECT_EQ(got.activities[i].correlation_id, w.activities[i].correlation_id);
      EXPECT_EQ(got.activities[i].kind, w.activities[i].kind);
      EXPECT_EQ(got.activities[i].source, w.activities[i].source);
      EXPECT_EQ(got.activities[i].bytes, w.activities[i].bytes);
      EXPECT_EQ(got.activities[i].stream, w.activities[i].stream);
      EXPECT_EQ(got.activities[i].name, w.activities[i].name);
      EXPECT_EQ(got.activities[i].src_kind, w.activities[i].src_kind);
      EXPECT_EQ(got.activities[i].context, w.activities[i].context);
    }
    ASSERT_EQ(got.memory_events.size(), w.memory_events.size());
    for (size_t i = 0; i < w.memory_events.size(); ++i) {
      EXPECT_EQ(got.memory_events[i].time_ns, w.memory_events[i].time_ns);
      EXPECT_EQ(got.memory_events[i].kind, w.memory_events[i].kind);
      EXPECT_EQ(got.memory_events[i].bytes, w.memory_events[i].bytes);
      EXPECT_EQ(got.memory_events[i].address, w.memory_events[i].address);
      EXPECT_EQ(got.memory_events[i].mem_kind, w.memory_events[i].mem_kind);
      EXPECT_EQ(got.memory_events[i].stack, w.memory_events[i].stack);
    }
    ASSERT_EQ(got.samples.size(), w.samples.size());
    for (size_t i = 0; i < w.samples.size(); ++i) {
      EXPECT_EQ(got.samples[i].time_ns, w.samples[i].time_ns);
      EXPECT_EQ(got.samples[i].thread_id, w.samples[i].thread_id);
      EXPECT_EQ(got.samples[i].state, w.samples[i].state);
      EXPECT_EQ(got.samples[i].cpu, w.samples[i].cpu);
      EXPECT_EQ(got.samples[i].cpu_time_delta_ns, w.samples[i].cpu_time_delta_ns);
    }
    ASSERT_EQ(got.nvtx_ranges.size(), w.nvtx_ranges.size());
    for (size_t i = 0; i < w.nvtx_ranges.size(); ++i) {
      EXPECT_EQ(got.nvtx_ranges[i].start_ns, w.nvtx_ranges[i].start_ns);
      EXPECT_EQ(got.nvtx_ranges[i].end_ns, w.nvtx_ranges[i].end_ns);
      EXPECT_EQ(r.tables().string(got.nvtx_ranges[i].name), "step " + std::to_string(i));
      EXPECT_EQ(got.nvtx_ranges[i].color, w.nvtx_ranges[i].color);
    }
    ASSERT_EQ(got.host_waits.size(), w.host_waits.size());
    for (size_t i = 0; i < w.host_waits.size(); ++i) {
      EXPECT_EQ(got.host_waits[i].start_ns, w.host_waits[i].start_ns);
      EXPECT_EQ(got.host_waits[i].end_ns, w.host_waits[i].end_ns);
      EXPECT_EQ(got.host_waits[i].thread_id, 100u);
      EXPECT_EQ(r.tables().string(got.host_waits[i].function), "clock_nanosleep");
      EXPECT_EQ(got.host_waits[i].state, pb::THREAD_STATE_IDLE);
      EXPECT_EQ(got.host_waits[i].stack, w.stack_b);
    }
    EXPECT_EQ(r.stats().host_waits, w.host_waits.size());
    ASSERT_EQ(got.process_stats.size(), 1u);
    EXPECT_EQ(got.process_stats[0].role(), pb::PROCESS_ROLE_DATA_WORKER);
    ASSERT_EQ(got.clock_syncs.size(), 1u);
    EXPECT_EQ(got.clock_syncs[0].other_ns() - got.clock_syncs[0].monotonic_ns(), 17u);

    // Tables.
    const InternTables& t = r.tables();
    EXPECT_EQ(t.function_name(w.memcpy), "cudaMemcpyAsync");
    EXPECT_EQ(t.function(w.sync)->raw_id(), 131u);
    EXPECT_EQ(t.function(w.sync)->source(), pb::API_SOURCE_CUPTI_CALLBACK);
    EXPECT_EQ(t.DescribeStack(w.stack_a),
              "load_batch (workload.cc:42) <- train_step (workload.cc:80) <- main (workload.cc:120)");
    EXPECT_EQ(t.string(w.kernel_name), "gemm_kernel<float>");
    ASSERT_NE(t.thread(101), nullptr);
    EXPECT_EQ(t.thread(101)->name(), "pt_data_worker");
    EXPECT_TRUE(t.thread(100)->is_main());
    // The chunk's capture supersedes the header's.
    EXPECT_EQ(r.capture().mode(), pb::CAPTURE_MODE_INTERPOSITION);
    ASSERT_EQ(r.devices().size(), 1u);
    EXPECT_EQ(r.devices()[0].pcie_width(), 16u);
    // Stats and end.
    ASSERT_NE(r.end(), nullptr);
    EXPECT_EQ(r.end()->reason(), pb::END_REASON_EXIT);
    EXPECT_EQ(r.last_stats().api_calls_recorded(), w.api_calls.size());
    EXPECT_EQ(r.last_stats().activities_recorded(), w.activities.size());
    EXPECT_TRUE(r.stats().clean_end);
    EXPECT_EQ(r.stats().chunks, w.frame_offsets.size() - 2);
    EXPECT_EQ(r.stats().file_bytes, w.size);
    EXPECT_EQ(r.stats().api_calls, w.api_calls.size());
    std::remove(path.c_str());
  }
}

// Counts what a reader must find in a file cut at `cut`: the chunks whose frames end by then.
struct Expected {
  size_t chunks = 0;
  uint64_t partial_frame_offset = 0;
  bool cut_inside_frame = false;
};
Expected ExpectedForCut(const Written& w, uint64_t cut) {
  Expected e;
  std::vector<uint64_t> ends(w.frame_offsets.begin() + 1, w.frame_offsets.end());
  ends.push_back(w.size);
  for (size_t i = 1; i < w.frame_offsets.size(); ++i) {  // frames after the header
    const uint64_t start = w.frame_offsets[i], end = ends[i];
    const bool is_end_frame = i + 1 == w.frame_offsets.size();
    if (end <= cut) {
      if (!is_end_frame) ++e.chunks;
    } else if (start < cut) {
      e.cut_inside_frame = true;
      e.partial_frame_offset = start;
    }
  }
  return e;
}

TEST(ReaderTest, TruncatedTrailingChunkIsIgnored) {
  const std::string path = TempPath("full");
  const Written w = BuildSmallTrace(path, 6, 0, 3);
  const std::string bytes = ReadFile(path);
  ASSERT_EQ(bytes.size(), w.size);
  ASSERT_GE(w.frame_offsets.size(), 4u);
  const uint64_t header_end = w.frame_offsets[1];
  const std::string cut_path = TempPath("cut");
  for (uint64_t cut = 0; cut <= bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    WriteFile(cut_path, bytes.substr(0, cut));
    CollectingReporter damage;
    auto reader = TraceReader::Open(cut_path, &damage);
    if (cut < header_end) {
      ASSERT_FALSE(reader.ok());
      if (cut == 0) {
        EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
      } else {
        EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss) << reader.status();
        EXPECT_NE(reader.status().message().find("truncated"), std::string::npos);
      }
      continue;
    }
    ASSERT_TRUE(reader.ok()) << reader.status();
    ChunkEvents ev;
    size_t chunks = 0;
    while (true) {
      absl::StatusOr<bool> more = (*reader)->Next(&ev);
      ASSERT_TRUE(more.ok());
      if (!*more) break;
      ++chunks;
    }
    const Expected e = ExpectedForCut(w, cut);
    EXPECT_EQ(chunks, e.chunks);
    const ReadStats& s = (*reader)->stats();
    EXPECT_EQ(s.corrupt_frames, 0u);
    EXPECT_EQ(s.skipped_bytes, 0u);
    EXPECT_EQ(s.file_bytes, cut);
    EXPECT_EQ(s.clean_end, cut == bytes.size());
    if (e.cut_inside_frame) {
      EXPECT_EQ(s.truncated_at, e.partial_frame_offset);
      EXPECT_EQ(s.truncated_bytes, cut - e.partial_frame_offset);
      ASSERT_EQ(damage.damage.size(), 1u);
      EXPECT_EQ(damage.damage[0].offset, e.partial_frame_offset);
      EXPECT_NE(damage.damage[0].reason.message().find("truncated"), std::string::npos);
    } else {
      EXPECT_EQ(s.truncated_bytes, 0u);
      EXPECT_TRUE(damage.damage.empty());
    }
  }
  std::remove(path.c_str());
  std::remove(cut_path.c_str());
}

TEST(ReaderTest, TruncatedCompressedTraceFromMemoryAtEveryByte) {
  const std::string path = TempPath("deflate");
  const Written w = BuildSmallTrace(path, 6, 6, 3);
  const std::string bytes = ReadFile(path);
  for (uint64_t cut = w.frame_offsets[1]; cut <= bytes.size(); ++cut) {
    auto reader = TraceReader::FromBuffer(bytes.substr(0, cut));
    ASSERT_TRUE(reader.ok()) << reader.status();
    ChunkEvents ev;
    size_t chunks = 0;
    while (*(*reader)->Next(&ev)) ++chunks;
    EXPECT_EQ(chunks, ExpectedForCut(w, cut).chunks) << "cut at " << cut;
    EXPECT_EQ((*reader)->stats().corrupt_frames, 0u);
  }
  std::remove(path.c_str());
}

TEST(ReaderTest, CorruptChunkInTheMiddleIsSkippedAndReported) {
  const std::string path = TempPath("corrupt");
  const Written w = BuildSmallTrace(path, 6);
  const size_t n_frames = w.frame_offsets.size();
  ASSERT_GE(n_frames, 5u);
  std::string bytes = ReadFile(path);
  const uint64_t victim = w.frame_offsets[2];  // the second chunk
  const uint64_t victim_size = w.frame_offsets[3] - victim;
  bytes[victim + trace::kFrameHeaderSize + 10] ^= 0x40;  // one bit in its payload
  CollectingReporter damage;
  auto reader = TraceReader::FromBuffer(bytes, &damage);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const ReadBack got = ReadAll(**reader);
  const ReadStats& s = (*reader)->stats();
  EXPECT_EQ(s.chunks, n_frames - 3);  // all chunks but one (minus header and end frames)
  EXPECT_EQ(s.corrupt_frames, 1u);
  EXPECT_EQ(s.missing_chunks, 1u);
  EXPECT_EQ(s.skipped_bytes, victim_size);
  EXPECT_TRUE(s.clean_end);
  ASSERT_EQ(damage.damage.size(), 1u);  // the gap in sequence numbers is not reported twice
  EXPECT_EQ(damage.damage[0].offset, victim);
  EXPECT_EQ(damage.damage[0].bytes, victim_size);
  EXPECT_NE(damage.damage[0].reason.message().find("checksum"), std::string::npos);
  EXPECT_NE(damage.damage[0].reason.message().find(std::to_string(victim)), std::string::npos);
  // The chunk after the damaged one is read, at its own offset.
  ASSERT_GE(got.chunk_offsets.size(), 2u);
  EXPECT_EQ(got.chunk_offsets[0], w.frame_offsets[1]);
  EXPECT_EQ(got.chunk_offsets[1], w.frame_offsets[3]);
  EXPECT_LT(got.api_calls.size() + got.activities.size() + got.memory_events.size() +
                got.samples.size() + got.nvtx_ranges.size(),
            w.api_calls.size() + w.activities.size() + w.memory_events.size() + w.samples.size() +
                w.nvtx_ranges.size());
}

TEST(ReaderTest, DamagedFrameHeaderResynchronizesOnTheNextFrame) {
  const std::string path = TempPath("badheader");
  const Written w = BuildSmallTrace(path, 6);
  std::string bytes = ReadFile(path);
  const uint64_t victim = w.frame_offsets[2];
  bytes[victim + 5] ^= 0x01;  // a bit of the length: the header checksum catches it
  CollectingReporter damage;
  auto reader = TraceReader::FromBuffer(bytes, &damage);
  ASSERT_TRUE(reader.ok());
  const ReadBack got = ReadAll(**reader);
  ASSERT_EQ(damage.damage.size(), 1u);
  EXPECT_EQ(damage.damage[0].offset, victim);
  EXPECT_EQ(damage.damage[0].bytes, w.frame_offsets[3] - victim);
  EXPECT_EQ((*reader)->stats().chunks, w.frame_offsets.size() - 3);
  EXPECT_TRUE((*reader)->stats().clean_end);
}

TEST(ReaderTest, GarbageBetweenFramesIsSkippedAndReported) {
  const std::string path = TempPath("garbage");
  const Written w = BuildSmallTrace(path, 6);
  std::string bytes = ReadFile(path);
  // 1000 bytes of noise, with fake frame markers in it (whose header checksums are wrong).
  std::string garbage(1000, '\0');
  std::mt19937 rng(7);
  for (char& c : garbage) c = static_cast<char>(rng());
  for (size_t at : {0u, 100u, 997u}) {
    std::memcpy(&garbage[at], trace::kFrameMarker, at == 997u ? 3 : 4);
  }
  const uint64_t at = w.frame_offsets[2];
  bytes.insert(at, garbage);
  CollectingReporter damage;
  auto reader = TraceReader::FromBuffer(bytes, &damage);
  ASSERT_TRUE(reader.ok());
  ReadAll(**reader);
  ASSERT_EQ(damage.damage.size(), 1u);
  EXPECT_EQ(damage.damage[0].offset, at);
  EXPECT_EQ(damage.damage[0].bytes, garbage.size());
  EXPECT_EQ((*reader)->stats().chunks, w.frame_offsets.size() - 2);  // nothing lost
  EXPECT_EQ((*reader)->stats().missing_chunks, 0u);
}

TEST(ReaderTest, NotATraceIsAnError) {
  const std::string path = TempPath("text");
  WriteFile(path, "#!/bin/sh\necho this is not a trace\n");
  auto reader = TraceReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(reader.status().message().find("not a gpustall trace"), std::string::npos);
  EXPECT_NE(reader.status().message().find(path), std::string::npos);

  WriteFile(path, "");
  reader = TraceReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);

  std::remove(path.c_str());
  reader = TraceReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
}

TEST(ReaderTest, NewerSchemaVersionIsAnError) {
  const std::string path = TempPath("newer");
  pb::TraceHeader header = TestHeader();
  header.set_schema_version(trace::kSchemaVersion + 1);
  {
    auto b = TraceBuilder::Create(path, header);
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(b->Finish());
  }
  auto reader = TraceReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(reader.status().message().find("schema version " +
                                           std::to_string(trace::kSchemaVersion + 1)),
            std::string::npos)
      << reader.status();
  EXPECT_NE(reader.status().message().find("newer"), std::string::npos);

  // A newer framing version in the prelude.
  std::string bytes = ReadFile(path);
  bytes[8] = static_cast<char>(trace::kFormatVersion + 1);
  auto newer_format = TraceReader::FromBuffer(bytes);
  ASSERT_FALSE(newer_format.ok());
  EXPECT_EQ(newer_format.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(newer_format.status().message().find("format version"), std::string::npos);
  std::remove(path.c_str());
}

// Appends a chunk frame of hand-made payload bytes to `bytes`.
void AppendChunkPayload(std::string* bytes, const std::string& payload) {
  std::string frame(trace::kFrameHeaderSize + payload.size(), '\0');
  ASSERT_GT(trace::EncodeFrame(trace::FrameType::kChunk, payload.data(), payload.size(),
                               reinterpret_cast<unsigned char*>(frame.data()), frame.size()),
            0u);
  *bytes += frame;
}
// Appends a hand-made chunk frame to `bytes`.
void AppendChunk(std::string* bytes, const pb::Chunk& chunk) { AppendChunkPayload(bytes, chunk.SerializeAsString()); }

// Adds a batch of one kernel [start, end] to `chunk`.
void AddKernel(pb::Chunk* chunk, uint64_t start_ns, uint64_t end_ns) {
  trace::GpuActivityBatchEncoder enc;
  enc.Begin(chunk->add_activities(), start_ns);
  GpuActivityRecord a;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  a.kind = pb::ACTIVITY_KIND_KERNEL;
  enc.Add(a);
}

std::string EmptyTrace() {
  const std::string path = TempPath("empty");
  {
    auto b = TraceBuilder::Create(path, TestHeader());
    EXPECT_TRUE(b->CloseWithoutEnd());
  }
  std::string bytes = ReadFile(path);
  std::remove(path.c_str());
  return bytes;
}

TEST(ReaderTest, BadBatchIsDroppedAndTheRestOfTheChunkKept) {
  std::string bytes = EmptyTrace();
  pb::Chunk chunk;
  chunk.set_sequence(0);
  pb::ApiCallBatch* bad = chunk.add_api_calls();
  bad->set_count(2);
  bad->add_enter_delta(10);
  bad->add_enter_delta(10);
  bad->add_duration(5);  // one duration for two calls
  AddKernel(&chunk, 100, 200);
  AppendChunk(&bytes, chunk);
  CollectingReporter damage;
  auto reader = TraceReader::FromBuffer(bytes, &damage);
  ASSERT_TRUE(reader.ok());
  const ReadBack got = ReadAll(**reader);
  EXPECT_TRUE(got.api_calls.empty());
  ASSERT_EQ(got.activities.size(), 1u);
  EXPECT_EQ(got.activities[0].end_ns, 200u);
  EXPECT_EQ((*reader)->stats().bad_batches, 1u);
  ASSERT_EQ(damage.damage.size(), 1u);
  EXPECT_NE(damage.damage[0].reason.message().find("duration"), std::string::npos);
  EXPECT_FALSE((*reader)->stats().clean_end);
}

// A batch whose bytes do not parse (here an API call batch cut inside its time column, inside a
// chunk whose framing and checksum are good) fails its whole chunk, as it did when the chunk was
// parsed with its batches: the frame is damaged, nothing of it is applied (not even its strings
// or its other batches), and the next chunk reads.
TEST(ReaderTest, BatchThatDoesNotParseDamagesItsChunk) {
  std::string bytes = EmptyTrace();
  pb::Chunk first;
  first.set_sequence(0);
  pb::InternedString* s = first.add_strings();
  s->set_id(1);
  s->set_value("from the damaged chunk");
  AddKernel(&first, 100, 200);
  pb::ApiCallBatch* calls = first.add_api_calls();
  calls->set_count(1);
  calls->add_enter_delta(300);  // two varint bytes, 0xd8 0x04, of which the second is cut below
  std::string payload = first.SerializeAsString();
  const std::string batch = calls->SerializeAsString();
  const size_t at = payload.find(batch);
  ASSERT_NE(at, std::string::npos);
  // The batch loses its last byte; its length and the chunk's say one byte less, so the chunk's
  // framing still holds and only the batch is broken.
  ASSERT_EQ(static_cast<unsigned char>(payload[at - 1]), batch.size());
  payload[at - 1] = static_cast<char>(batch.size() - 1);
  payload.erase(at + batch.size() - 1, 1);
  AppendChunkPayload(&bytes, payload);
  pb::Chunk second;
  second.set_sequence(1);
  AddKernel(&second, 500, 600);
  AppendChunk(&bytes, second);

  CollectingReporter damage;
  auto reader = TraceReader::FromBuffer(bytes, &damage);
  ASSERT_TRUE(reader.ok());
  const ReadBack got = ReadAll(**reader);
  EXPECT_TRUE(got.api_calls.empty());
  ASSERT_EQ(got.activities.size(), 1u);
  EXPECT_EQ(got.activities[0].start_ns, 500u);
  EXPECT_EQ((*reader)->tables().string(1), "");
  EXPECT_EQ((*reader)->stats().corrupt_frames, 1u);
  ASSERT_GE(damage.damage.size(), 1u);
  EXPECT_NE(damage.damage[0].reason.message().find("the chunk does not parse"), std::string::npos)
      << damage.damage[0].reason.message();
}

TEST(ReaderTest, GapInChunkSequenceIsReported) {
  std::string bytes = EmptyTrace();
  pb::Chunk chunk;
  chunk.set_sequence(0);
  AppendChunk(&bytes, chunk);
  chunk.set_sequence(3);
  const uint64_t second = bytes.size();
  AppendChunk(&bytes, chunk);
  CollectingReporter damage;
  auto reader = TraceReader::FromBuffer(bytes, &damage);
  ASSERT_TRUE(reader.ok());
  ReadAll(**reader);
  EXPECT_EQ((*reader)->stats().missing_chunks, 2u);
  ASSERT_EQ(damage.damage.size(), 1u);
  EXPECT_EQ(damage.damage[0].offset, second);
  EXPECT_EQ(damage.damage[0].bytes, 0u);
}

TEST(ReaderTest, LaterSymbolizationUpdatesFrames) {
  const std::string path = TempPath("symbolize");
  {
    auto b = TraceBuilder::Create(path, TestHeader());
    const uint32_t module = b->AddModule("/usr/lib/libtorch_cuda.so", "\x12\x34", 0x7f0000000000,
                                         1 << 24);
    const uint32_t frame = b->InternFrame(module, 0x1a2b);
    const uint32_t stack = b->InternStack({frame});
    ApiCallRecord call;
    call.thread_id = 1;
    call.enter_ns = 10;
    call.exit_ns = 20;
    call.stack = stack;
    b->AddApiCall(call);
    ASSERT_TRUE(b->FlushChunk());
    b->SymbolizeFrame(frame, "at::native::copy_", "Copy.cpp", 250);
    b->AddApiCall(call);
    ASSERT_TRUE(b->Finish());
  }
  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok());
  ChunkEvents ev;
  ASSERT_TRUE(*(*reader)->Next(&ev));
  ASSERT_EQ(ev.api_calls.size(), 1u);
  EXPECT_EQ((*reader)->tables().DescribeStack(ev.api_calls[0].stack), "libtorch_cuda.so+0x1a2b");
  ASSERT_TRUE(*(*reader)->Next(&ev));
  EXPECT_EQ((*reader)->tables().DescribeStack(ev.api_calls[0].stack),
            "at::native::copy_ (Copy.cpp:250)");
  const pb::Frame* f = (*reader)->tables().frame((*reader)->tables().stack(ev.api_calls[0].stack)[0]);
  EXPECT_EQ(f->rel_pc(), 0x1a2bu);  // the update kept what it did not mention
  std::remove(path.c_str());
}

TEST(ReaderTest, SparseIdsFromADamagedFileStayCheap) {
  InternTables t;
  t.AddString(1, "one");
  t.AddString(4'000'000'000u, "far");
  t.AddString(2, "two");
  EXPECT_EQ(t.string(1), "one");
  EXPECT_EQ(t.string(2), "two");
  EXPECT_EQ(t.string(4'000'000'000u), "far");
  EXPECT_EQ(t.string(3), "");
  EXPECT_EQ(t.num_strings(), 3u);
  // Dense growth absorbs earlier sparse entries.
  for (uint32_t id = 3; id < 100; ++id) t.AddString(id, std::to_string(id));
  EXPECT_EQ(t.string(50), "50");
  EXPECT_EQ(t.string(4'000'000'000u), "far");
}

// Random damage (bit flips, overwritten runs, deleted and inserted bytes) anywhere after the
// header: the reader never crashes or loops, never hands out more chunks than were written, and
// reports damage whenever it had to skip anything.
TEST(ReaderTest, RandomDamageIsSurvivedAndReported) {
  const std::string path = TempPath("random");
  const Written w = BuildSmallTrace(path, 5, 0, 8);
  const std::string original = ReadFile(path);
  std::remove(path.c_str());
  const uint64_t header_end = w.frame_offsets[1];
  const size_t chunks_written = w.frame_offsets.size() - 2;
  std::mt19937_64 rng(2024);
  for (int iteration = 0; iteration < 1500; ++iteration) {
    std::string bytes = original;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = header_end + rng() % (bytes.size() - header_end);
      switch (rng() % 4) {
        case 0:
          bytes[at] ^= static_cast<char>(1 << (rng() % 8));
          break;
        case 1:
          for (size_t i = at; i < std::min(bytes.size(), at + 1 + rng() % 64); ++i) {
            bytes[i] = static_cast<char>(rng());
          }
          break;
        case 2:
          bytes.erase(at, std::min<size_t>(1 + rng() % 100, bytes.size() - at));
          break;
        case 3:
          bytes.insert(at, std::string(1 + rng() % 100, static_cast<char>(rng())));
          break;
      }
    }
    CollectingReporter damage;
    auto reader = TraceReader::FromBuffer(bytes, &damage);
    ASSERT_TRUE(reader.ok()) << reader.status();
    ChunkEvents ev;
    size_t chunks = 0;
    while (true) {
      absl::StatusOr<bool> more = (*reader)->Next(&ev);
      ASSERT_TRUE(more.ok());
      if (!*more) break;
      ++chunks;
      ASSERT_LE(chunks, chunks_written);
      for (const ApiCallRecord& c : ev.api_calls) ASSERT_LE(c.enter_ns, c.exit_ns);
    }
    const ReadStats& s = (*reader)->stats();
    EXPECT_EQ(s.file_bytes, bytes.size());
    if (chunks < chunks_written || !s.clean_end) {
      EXPECT_FALSE(damage.damage.empty()) << "iteration " << iteration << ": lost data silently";
    }
  }
}

// Damage that the checksums cannot catch (a buggy or hostile writer): chunk payloads with random
// edits, framed again with correct checksums. Whatever the protobuf parser accepts reaches the
// batch decoders and the tables, which must not trust any count, length or id in it.
TEST(ReaderTest, HostileChunksWithValidChecksumsAreSurvived) {
  const std::string path = TempPath("hostile");
  const Written w = BuildSmallTrace(path, 5, 0, 8);
  const std::string original = ReadFile(path);
  std::remove(path.c_str());
  std::mt19937_64 rng(99);
  size_t parsed_after_edit = 0;
  for (int iteration = 0; iteration < 1500; ++iteration) {
    std::string bytes = original.substr(0, w.frame_offsets[1]);  // prelude + header
    for (size_t i = 1; i + 1 < w.frame_offsets.size(); ++i) {
      const uint64_t start = w.frame_offsets[i] + trace::kFrameHeaderSize;
      std::string payload = original.substr(start, w.frame_offsets[i + 1] - start);
      if (rng() % 2 == 0 && !payload.empty()) {
        for (int e = 0; e < 1 + static_cast<int>(rng() % 3); ++e) {
          const size_t at = rng() % payload.size();
          if (rng() % 3 == 0) {
            payload[at] = static_cast<char>(rng());
          } else {
            payload[at] ^= static_cast<char>(1 << (rng() % 8));
          }
        }
      }
      std::string frame(trace::kFrameHeaderSize + payload.size(), '\0');
      ASSERT_GT(trace::EncodeFrame(trace::FrameType::kChunk, payload.data(), payload.size(),
                                   reinterpret_cast<unsigned char*>(frame.data()), frame.size()),
                0u);
      bytes += frame;
    }
    CollectingReporter damage;
    auto reader = TraceReader::FromBuffer(bytes, &damage);
    ASSERT_TRUE(reader.ok());
    ChunkEvents ev;
    size_t chunks = 0;
    while (*(*reader)->Next(&ev)) {
      ++chunks;
      ASSERT_LE(ev.num_records(), 10000u);  // the small trace has ~100 records in all
      for (const ApiCallRecord& c : ev.api_calls) {
        (*reader)->tables().DescribeStack(c.stack);
        (*reader)->tables().function_name(c.function);
      }
    }
    parsed_after_edit += chunks;
    EXPECT_LE(chunks, w.frame_offsets.size() - 2);
  }
  EXPECT_GT(parsed_after_edit, 0u);
}

// Bytes per event for a realistic mix: a training loop's launches (with kernels), pageable and
// pinned copies (with memcpy activities), a sync per step; 2 threads; 16 distinct stacks.
TEST(ReaderTest, BytesPerEvent) {
  double per_event[3];
  const char* const kCodecs[] = {"uncompressed", "zlib level 1", "zstd level 1"};
  for (int codec : {0, 1, 2}) {
    const std::string path = TempPath("size");
    TraceBuilder::Options options;
    options.records_per_chunk = 16384;
    options.deflate_level = codec == 1 ? 1 : 0;
    options.zstd_level = codec == 2 ? 1 : 0;
    auto b = TraceBuilder::Create(path, TestHeader(), options);
    const uint32_t launch = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
    const uint32_t copy = b->InternApiFunction("cudaMemcpyAsync", pb::API_CLASS_MEMCPY);
    const uint32_t sync = b->InternApiFunction("cudaStreamSynchronize", pb::API_CLASS_STREAM_SYNC);
    std::vector<uint32_t> stacks, names;
    for (int i = 0; i < 16; ++i) {
      stacks.push_back(b->InternStackOfFunctions(
          {"op_" + std::to_string(i) + "@model.py:" + std::to_string(10 + i), "forward@model.py:5",
           "train_step@train.py:40", "main@train.py:99"}));
      names.push_back(b->InternString("kernel_" + std::to_string(i)));
    }
    std::mt19937_64 rng(42);
    uint64_t t = 10'000'000'000, gpu = t;
    uint32_t corr = 1;
    uint64_t events = 0;
    for (int step = 0; step < 2000; ++step) {
      for (int c = 0; c < 2; ++c) {  // input copies on the data thread
        ApiCallRecord r;
        r.thread_id = 2001;
        r.enter_ns = t;
        r.exit_ns = t + 15'000 + rng() % 20'000;
        r.function = copy;
        r.correlation_id = corr++;
        r.stack = stacks[c];
        r.bytes = 3 * 224 * 224 * 4 * 32;
        r.stream = 0x55aa00001000;
        r.copy_kind = 1;
        r.src_kind = c ? pb::MEM_KIND_PINNED : pb::MEM_KIND_PAGEABLE;
        r.dst_kind = pb::MEM_KIND_DEVICE;
        r.flags = 1;
        r.address = 0x7f0000000000 + (rng() % 64) * (1 << 20);
        b->AddApiCall(r);
        GpuActivityRecord a;
        a.start_ns = gpu = std::max(gpu, r.enter_ns + 5'000);
        a.end_ns = gpu += 300'000 + rng() % 50'000;
        a.correlation_id = r.correlation_id;
        a.kind = pb::ACTIVITY_KIND_MEMCPY;
        a.source = pb::ACTIVITY_SOURCE_CUPTI;
        a.bytes = r.bytes;
        a.stream = 13;
        a.copy_kind = 1;
        a.src_kind = r.src_kind;
        a.dst_kind = pb::MEM_KIND_DEVICE;
        a.flags = 1;
        b->AddActivity(a);
        t = r.exit_ns + 2'000;
        events += 2;
      }
      for (int k = 0; k < 24; ++k) {  // forward/backward launches on the main thread
        ApiCallRecord r;
        r.thread_id = 2000;
        r.enter_ns = t;
        r.exit_ns = t + 4'000 + rng() % 4'000;
        r.function = launch;
        r.correlation_id = corr++;
        r.stack = stacks[2 + k % 14];
        r.stream = 0x55aa00001000;
        r.address = 0x5555000000 + (k % 14) * 0x140;
        b->AddApiCall(r);
        GpuActivityRecord a;
        a.start_ns = gpu = std::max(gpu, r.exit_ns + 1'000);
        a.end_ns = gpu += 20'000 + rng() % 200'000;
        a.correlation_id = r.correlation_id;
        a.kind = pb::ACTIVITY_KIND_KERNEL;
        a.source = pb::ACTIVITY_SOURCE_CUPTI;
        a.stream = 13;
        a.name = names[2 + k % 14];
        b->AddActivity(a);
        t = r.exit_ns + 1'000 + rng() % 3'000;
        events += 2;
      }
      ApiCallRecord s;
      s.thread_id = 2000;
      s.enter_ns = t;
      s.exit_ns = std::max(t + 3'000, gpu + 4'000);
      s.function = sync;
      s.correlation_id = corr++;
      s.stream = 0x55aa00001000;
      s.stack = stacks[15];
      b->AddApiCall(s);
      t = s.exit_ns + 2'000'000 + rng() % 1'000'000;  // host work between steps
      events += 1;
    }
    ASSERT_TRUE(b->Finish());
    per_event[codec] = static_cast<double>(b->bytes_written()) / static_cast<double>(events);
    std::printf("trace size: %llu events, %llu bytes, %.2f bytes/event (%s)\n",
                static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(b->bytes_written()), per_event[codec], kCodecs[codec]);
    // Readable, and the count is right.
    auto reader = TraceReader::Open(path);
    ASSERT_TRUE(reader.ok());
    ReadAll(**reader);
    EXPECT_EQ((*reader)->stats().api_calls + (*reader)->stats().activities, events);
    std::remove(path.c_str());
  }
  // Target: 16 bytes/event (BENCHMARKS.md). Loose bounds here; the printed figures are the measurement.
  EXPECT_LT(per_event[0], 20.0);
  EXPECT_LT(per_event[1], per_event[0]);
  EXPECT_LT(per_event[2], per_event[0]);
}

// Decode threads change how a trace is read, not what is read: the dump (every record, table
// entry and damage report, in file order, and the stats) is the same as with none, for intact,
// compressed, cut and damaged traces, and for bad batches and sequence gaps inside good frames.
TEST(ReaderTest, DecodeThreadsReadWhatOneThreadReads) {
  const std::string path = TempPath("threads");
  const Written w = BuildSmallTrace(path, 5, 0, 8);
  const std::string plain = ReadFile(path);
  BuildSmallTrace(path, 3, 6, 8);
  const std::string deflated = ReadFile(path);
  std::vector<std::string> traces = {plain, deflated, plain.substr(0, plain.size() * 2 / 3),
                                     deflated.substr(0, deflated.size() / 2 + 3)};
  {  // after the end record: a chunk with a bad batch past a sequence gap, then a stale one
    std::string bytes = plain;
    pb::Chunk chunk;
    chunk.set_sequence(50);
    pb::ApiCallBatch* bad = chunk.add_api_calls();
    bad->set_count(2);
    bad->add_enter_delta(10);
    bad->add_enter_delta(10);
    bad->add_duration(5);  // one duration for two calls
    AppendChunk(&bytes, chunk);
    chunk.set_sequence(0);
    AppendChunk(&bytes, chunk);
    traces.push_back(bytes);
  }
  const uint64_t header_end = w.frame_offsets[1];
  std::mt19937_64 rng(77);
  for (int i = 0; i < 80; ++i) {
    std::string bytes = i % 2 ? plain : deflated;
    for (int e = 0; e < 1 + static_cast<int>(rng() % 3); ++e) {
      const size_t at = header_end + rng() % (bytes.size() - header_end);
      switch (rng() % 3) {
        case 0:
          bytes[at] ^= static_cast<char>(1 << (rng() % 8));
          break;
        case 1:
          bytes.erase(at, std::min<size_t>(1 + rng() % 100, bytes.size() - at));
          break;
        case 2:
          bytes.insert(at, std::string(1 + rng() % 100, static_cast<char>(rng())));
          break;
      }
    }
    traces.push_back(bytes);
  }
  size_t damaged = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    WriteFile(path, traces[i]);
    std::ostringstream serial;
    ASSERT_TRUE(DumpTrace(path, serial).ok());
    if (serial.str().find("# damage: 0 reports") == std::string::npos) ++damaged;
    for (int threads : {1, 3}) {
      ReaderOptions options;
      options.decode_threads = threads;
      options.read_block_size = 4096;  // many reads, so frames are read ahead across them
      std::ostringstream parallel;
      ASSERT_TRUE(DumpTrace(path, parallel, options).ok());
      ASSERT_EQ(serial.str(), parallel.str()) << "trace " << i << ", " << threads << " decode threads";
    }
  }
  std::remove(path.c_str());
  EXPECT_GT(damaged, traces.size() / 2);  // the damaged copies really are damaged
}

}  // namespace
}  // namespace gs::reader
