#include "agent/writer/trace_writer.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "agent/capture/host_wait/host_wait.h"
#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_capture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/format.h"
#include "analyzer/reader/trace_reader.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;
using ::testing::HasSubstr;

const char* TestApiNames(ApiSource source, uint16_t id) {
  if (source != ApiSource::kInterposer) return nullptr;
  return id == 1 ? "cudaMemcpyAsync" : id == 2 ? "cudaLaunchKernel" : nullptr;
}

std::string TempPath(const char* name) {
  const char* dir = getenv("TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/gs_writer_test_" + std::to_string(getpid()) + "_" + name;
}

// Removes a test's trace however the test ends (an ASSERT returns early).
struct RemovedAtEnd {
  std::string path;
  ~RemovedAtEnd() { unlink(path.c_str()); }
};

struct Rig {
  RingPool pool;
  StackCapturer stacks;
  std::unique_ptr<RingRecorder> recorder;
  Rig() {
    EXPECT_TRUE(pool.Init(1 << 20));
    std::string note;
    stacks.Init(StackMode::kUnwind, &note);
    recorder = std::make_unique<RingRecorder>(&pool, &stacks, 32, 4096);
  }
  // A writer of this rig's recorder into a new trace file at `path`; nullptr (the failure
  // reported) when the file cannot be created.
  std::unique_ptr<TraceWriter> Writer(const std::string& path) {
    std::string error;
    std::unique_ptr<TraceFile> file = CreateTraceFile(path, &error);
    EXPECT_NE(file, nullptr) << error;
    if (file == nullptr) return nullptr;
    return std::make_unique<TraceWriter>(recorder.get(), std::move(file), &TestApiNames, 1 << 20);
  }
};

pb::TraceHeader Header() {
  pb::TraceHeader h;
  h.set_schema_version(trace::kSchemaVersion);
  h.set_pid(getpid());
  h.mutable_capture()->set_stack_method("libunwind");
  return h;
}

ApiCallEvent Copy(uint64_t t) {
  ApiCallEvent e{};
  e.enter_ns = t;
  e.exit_ns = t + 500;
  e.bytes = 4096;
  e.stream = 0x7f0000001000;
  e.address = 0xdead0000;
  e.correlation_id = static_cast<uint32_t>(t / 1000);
  e.api_id = 1;
  e.result = 0;
  e.source = ApiSource::kInterposer;
  e.api_class = ApiClass::kMemcpy;
  e.copy_kind = 1;  // cudaMemcpyHostToDevice
  e.src_kind = MemKind::kPageable;
  e.dst_kind = MemKind::kDevice;
  e.flags = kApiFlagAsync;
  e.device = 0;
  return e;
}

int g_record_line = 0;
__attribute__((noinline)) void RecordFromHere(Recorder& recorder, uint64_t t) {
  g_record_line = __LINE__ + 1;
  recorder.RecordApiCall(Copy(t), true, 0);
  __asm__ volatile("" ::: "memory");
}

volatile int g_not_folded_writer = 0;
int g_wait_line = 0;
__attribute__((noinline)) void WaitFromHere(Recorder& recorder, uint64_t t, uint16_t function, HostWaitState state) {
  HostWaitEvent e{};
  e.enter_ns = t;
  e.exit_ns = t + 6000000;
  e.function = function;
  e.state = state;
  g_wait_line = __LINE__ + 1;
  recorder.RecordHostWait(e, true, 0, CallSite{}, false);
  __asm__ volatile("" ::: "memory");
}

// Host waits become the thread's HostWaitBatch: the libc name interned once, the state as the
// schema's ThreadState, the stack interned in the same table as the API calls' stacks.
TEST(TraceWriterTest, HostWaitsRoundTripThroughTheReader) {
  Rig rig;
  const std::string path = TempPath("host_waits.gstrace");
  const RemovedAtEnd removed{path};
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  RingRecorder& recorder = *rig.recorder;
  ASSERT_TRUE(writer.Start(Header()));
  RecordFromHere(recorder, 1000000);  // the thread records: its waits are kept
  const uint16_t nanosleep_row = static_cast<uint16_t>(HostWaitFunction::k_nanosleep);
  const uint16_t cond_row = static_cast<uint16_t>(HostWaitFunction::k_pthread_cond_wait);
#pragma GCC unroll 1  // one call site
  for (int i = 0; i < 3; ++i) WaitFromHere(recorder, 2000000 + i * 10000000ull, nanosleep_row, HostWaitState::kIdle);
  WaitFromHere(recorder, 50000000, cond_row, HostWaitState::kLockWait);
  EXPECT_EQ(writer.Drain(), 5u);
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));

  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  ASSERT_TRUE(opened.ok()) << opened.status();
  reader::TraceReader& r = **opened;
  std::vector<trace::HostWaitRecord> waits;
  std::string described;
  reader::ChunkEvents events;
  while (true) {
    auto more = r.Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    waits.insert(waits.end(), events.host_waits.begin(), events.host_waits.end());
  }
  EXPECT_TRUE(damage.damage.empty());
  ASSERT_EQ(waits.size(), 4u);
  EXPECT_EQ(waits[0].start_ns, 2000000u);
  EXPECT_EQ(waits[0].end_ns, 8000000u);
  EXPECT_EQ(waits[0].thread_id, static_cast<uint64_t>(gettid()));
  EXPECT_EQ(r.tables().string(waits[0].function), "nanosleep");
  EXPECT_EQ(waits[0].state, pb::THREAD_STATE_IDLE);
  EXPECT_EQ(waits[1].function, waits[0].function);
  EXPECT_EQ(waits[1].stack, waits[0].stack);  // one call site, one stack
  EXPECT_EQ(r.tables().string(waits[3].function), "pthread_cond_wait");
  EXPECT_EQ(waits[3].state, pb::THREAD_STATE_LOCK_WAIT);
  ASSERT_NE(waits[0].stack, 0u);
  described = r.tables().DescribeStack(waits[0].stack);
  EXPECT_THAT(described, HasSubstr("WaitFromHere"));
  EXPECT_THAT(described, HasSubstr("trace_writer_test.cc:" + std::to_string(g_wait_line)));
  EXPECT_EQ(r.last_stats().host_waits_recorded(), 4u);
  EXPECT_EQ(r.last_stats().api_calls_recorded(), 1u);
}

TEST(TraceWriterTest, EventsRoundTripThroughTheReader) {
  Rig rig;
  const std::string path = TempPath("roundtrip.gstrace");
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  RingRecorder& recorder = *rig.recorder;
  recorder.SetCaptureMode("cupti", "subscribed");
  ASSERT_TRUE(writer.Start(Header()));

  for (int i = 0; i < 100; ++i) RecordFromHere(recorder, 1000000 + i * 1000);
  uint64_t other_tid = 0;
  std::thread other([&] {
    for (int i = 0; i < 50; ++i) {
      ApiCallEvent e = Copy(2000000 + i * 1000);
      e.api_id = 2;
      e.api_class = ApiClass::kLaunch;
      e.result = 700;
      recorder.RecordApiCall(e, false, 0);
    }
    other_tid = static_cast<uint64_t>(gettid());
  });
  other.join();
  GpuActivityEvent a{};
  a.start_ns = 1500000;
  a.end_ns = 1600000;
  a.correlation_id = 3;
  a.kind = ActivityKind::kKernel;
  a.source = ActivitySource::kCupti;
  a.stream_id = 7;
  std::string name = "kernelA";
  a.name = name.c_str();
  recorder.RecordGpuActivity(a);
  name = "overwritten";  // the recorder copied the name
  a.name = "kernelB";
  recorder.RecordGpuActivity(a);
  a.name = "kernelA";
  recorder.RecordGpuActivity(a);
  recorder.AddDropped(5, 2);
  EXPECT_EQ(writer.Drain(), 153u);
  ASSERT_TRUE(writer.FlushChunk());
  RecordFromHere(recorder, 3000000);
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));
  EXPECT_FALSE(writer.failed());

  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  ASSERT_TRUE(opened.ok()) << opened.status();
  reader::TraceReader& r = **opened;
  EXPECT_EQ(r.header().pid(), getpid());
  std::vector<trace::ApiCallRecord> calls;
  std::vector<trace::GpuActivityRecord> activities;
  reader::ChunkEvents events;
  std::set<uint32_t> stacks;
  std::string described;
  while (true) {
    auto more = r.Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    for (const auto& c : events.api_calls) {
      calls.push_back(c);
      if (c.stack != 0) {
        stacks.insert(c.stack);
        described = r.tables().DescribeStack(c.stack);
      }
    }
    activities.insert(activities.end(), events.activities.begin(), events.activities.end());
  }
  EXPECT_TRUE(damage.damage.empty());
  ASSERT_EQ(calls.size(), 151u);
  // Field by field, the first copy.
  const trace::ApiCallRecord& c = calls[0];
  EXPECT_EQ(c.enter_ns, 1000000u);
  EXPECT_EQ(c.exit_ns, 1000500u);
  EXPECT_EQ(c.bytes, 4096u);
  EXPECT_EQ(c.stream, 0x7f0000001000u);
  EXPECT_EQ(c.address, 0xdead0000u);
  EXPECT_EQ(c.correlation_id, 1000u);
  EXPECT_EQ(c.copy_kind, 1);
  EXPECT_EQ(c.src_kind, pb::MEM_KIND_PAGEABLE);
  EXPECT_EQ(c.dst_kind, pb::MEM_KIND_DEVICE);
  EXPECT_EQ(c.flags, kApiFlagAsync);
  EXPECT_EQ(c.thread_id, static_cast<uint64_t>(gettid()));
  EXPECT_EQ(r.tables().function_name(c.function), "cudaMemcpyAsync");
  EXPECT_EQ(c.api_class, pb::API_CLASS_MEMCPY);
  // The other thread's calls: no stack, their own thread id, result kept.
  int launches = 0;
  for (const auto& call : calls) {
    if (r.tables().function_name(call.function) != "cudaLaunchKernel") continue;
    ++launches;
    EXPECT_EQ(call.thread_id, other_tid);
    EXPECT_EQ(call.stack, 0u);
    EXPECT_EQ(call.result, 700);
  }
  EXPECT_EQ(launches, 50);
  // 100 captures from one call site share one stack id; the 101st comes from another call site.
  std::set<uint32_t> loop_stacks;
  for (size_t i = 0; i < 100; ++i) loop_stacks.insert(calls[i].stack);
  EXPECT_EQ(loop_stacks.size(), 1u);
  EXPECT_EQ(stacks.size(), 2u);
  // Symbolised down to the line.
  EXPECT_THAT(described, HasSubstr("RecordFromHere"));
  EXPECT_THAT(described, HasSubstr("trace_writer_test.cc:" + std::to_string(g_record_line)));
  EXPECT_NE(r.tables().thread(other_tid), nullptr);
  // Activities with copied, interned names.
  ASSERT_EQ(activities.size(), 3u);
  EXPECT_EQ(r.tables().string(activities[0].name), "kernelA");
  EXPECT_EQ(r.tables().string(activities[1].name), "kernelB");
  EXPECT_EQ(activities[2].name, activities[0].name);
  EXPECT_EQ(activities[0].stream, 7u);
  // Counters, mode and the clean end.
  EXPECT_EQ(r.last_stats().cupti_dropped(), 5u);
  EXPECT_EQ(r.last_stats().other_dropped(), 2u);
  EXPECT_EQ(r.last_stats().api_calls_recorded(), 151u);
  EXPECT_EQ(r.last_stats().ring_dropped(), 0u);
  EXPECT_EQ(r.capture().mode(), pb::CAPTURE_MODE_CUPTI);
  EXPECT_EQ(r.capture().stack_method(), "libunwind");
  ASSERT_NE(r.end(), nullptr);
  EXPECT_EQ(r.end()->reason(), pb::END_REASON_EXIT);
  unlink(path.c_str());
}

// Kernels carry their launch configuration, interned once per distinct one; the device of a
// trace's first kernel is described (once, by the describer) in the chunk of that kernel, and a
// device the describer cannot describe is left out, asked once.
TEST(TraceWriterTest, AWindowLeavesOutGpuWorkThatStartedBeforeIt) {
  Rig rig;
  const std::string path = TempPath("window_start.gstrace");
  std::unique_ptr<TraceWriter> writer = rig.Writer(path);
  ASSERT_NE(writer, nullptr);
  RingRecorder& recorder = *rig.recorder;
  writer->SetFirstActivityNs(2000000);
  ASSERT_TRUE(writer->Start(Header()));
  GpuActivityEvent a{};
  a.kind = ActivityKind::kKernel;
  a.source = ActivitySource::kCupti;
  a.name = "k";
  // Before the window, straddling its start (started before it: out), at it and after it (in).
  for (uint64_t start : {1000000ull, 1999000ull, 2000000ull, 2500000ull}) {
    a.start_ns = start;
    a.end_ns = start + 10000;
    a.correlation_id = static_cast<uint32_t>(start / 1000);
    recorder.RecordGpuActivity(a);
  }
  writer->Drain();
  ASSERT_TRUE(writer->Finish(pb::END_REASON_EXIT, ""));
  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::vector<uint64_t> starts;
  reader::ChunkEvents events;
  while (true) {
    auto more = (*opened)->Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    for (const auto& r : events.activities) starts.push_back(r.start_ns);
  }
  EXPECT_EQ(starts, (std::vector<uint64_t>{2000000, 2500000}));
}

TEST(TraceWriterTest, KernelLaunchConfigurationsAndTheirDevicesRoundTrip) {
  Rig rig;
  const std::string path = TempPath("launch.gstrace");
  std::unique_ptr<TraceWriter> writer = rig.Writer(path);
  ASSERT_NE(writer, nullptr);
  std::vector<uint32_t> asked;
  writer->SetDeviceDescriber([&asked](uint32_t ordinal, pb::DeviceInfo* out) {
    asked.push_back(ordinal);
    if (ordinal != 0) return false;
    out->set_name("test GPU");
    out->set_sm_count(132);
    out->set_max_threads_per_sm(2048);
    out->set_shared_memory_per_block_optin(232448);
    out->set_reserved_shared_memory_per_block(1024);
    out->set_has_reserved_shared_memory(true);
    return true;
  });
  ASSERT_TRUE(writer->Start(Header()));
  RingRecorder& recorder = *rig.recorder;
  GpuActivityEvent k{};
  k.kind = ActivityKind::kKernel;
  k.source = ActivitySource::kCupti;
  k.name = "k";
  k.launch_flags = kLaunchConfigKnown | kLaunchResourcesKnown;
  const uint32_t grid[3] = {133, 2, 1}, block[3] = {256, 1, 1};
  for (int i = 0; i < 3; ++i) k.grid[i] = grid[i], k.block[i] = block[i];
  k.registers_per_thread = 96;
  k.static_shared_bytes = 4096;
  k.dynamic_shared_bytes = 65536;
  for (int i = 0; i < 3; ++i) {  // three launches of one configuration
    k.start_ns = 1000000 + i * 10000;
    k.end_ns = k.start_ns + 5000;
    recorder.RecordGpuActivity(k);
  }
  GpuActivityEvent other = k;  // another configuration, on a device the describer does not know
  other.device = 1;
  other.grid[0] = 1;
  other.launch_flags = kLaunchConfigKnown;  // resources unknown: not said, not zero
  recorder.RecordGpuActivity(other);
  recorder.RecordGpuActivity(other);
  GpuActivityEvent copy{};
  copy.kind = ActivityKind::kMemcpy;
  copy.device = 2;  // not a kernel: its device is not asked
  copy.start_ns = 2000000;
  copy.end_ns = 2001000;
  recorder.RecordGpuActivity(copy);
  writer->Drain();
  ASSERT_TRUE(writer->Finish(pb::END_REASON_EXIT, ""));
  EXPECT_EQ(asked, (std::vector<uint32_t>{0, 1}));

  auto opened = reader::TraceReader::Open(path, nullptr);
  ASSERT_TRUE(opened.ok()) << opened.status();
  reader::TraceReader& r = **opened;
  std::vector<trace::GpuActivityRecord> activities;
  reader::ChunkEvents events;
  while (true) {
    auto more = r.Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    activities.insert(activities.end(), events.activities.begin(), events.activities.end());
  }
  ASSERT_EQ(activities.size(), 6u);
  EXPECT_EQ(activities[0].launch_config, activities[2].launch_config);
  EXPECT_NE(activities[3].launch_config, activities[0].launch_config);
  EXPECT_EQ(activities[5].launch_config, 0u);
  const pb::LaunchConfig* c = r.tables().launch_config(activities[0].launch_config);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->grid_x(), 133u);
  EXPECT_EQ(c->grid_y(), 2u);
  EXPECT_EQ(c->grid_z(), 1u);
  EXPECT_EQ(c->block_x(), 256u);
  EXPECT_EQ(c->block_y(), 1u);
  EXPECT_EQ(c->registers_per_thread(), 96u);
  EXPECT_EQ(c->static_shared_memory(), 4096u);
  EXPECT_EQ(c->dynamic_shared_memory(), 65536u);
  EXPECT_TRUE(c->has_resources());
  const pb::LaunchConfig* o = r.tables().launch_config(activities[3].launch_config);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->grid_x(), 1u);
  EXPECT_FALSE(o->has_resources());
  EXPECT_EQ(o->registers_per_thread(), 0u);
  EXPECT_EQ(o->dynamic_shared_memory(), 65536u);
  ASSERT_EQ(r.devices().size(), 1u);
  EXPECT_EQ(r.devices()[0].index(), 0u);
  EXPECT_EQ(r.devices()[0].name(), "test GPU");
  EXPECT_EQ(r.devices()[0].sm_count(), 132u);
  EXPECT_EQ(r.devices()[0].reserved_shared_memory_per_block(), 1024u);
  EXPECT_TRUE(r.devices()[0].has_reserved_shared_memory());
  unlink(path.c_str());
}

__attribute__((noinline)) void RecordFromThere(Recorder& recorder, uint64_t t) {
  g_not_folded_writer = 1;  // not identical to RecordFromHere
  recorder.RecordApiCall(Copy(t), true, 0);
  __asm__ volatile("" ::: "memory");
}

// Every record of the test below comes through here, so that "here" has one stack each time.
__attribute__((noinline)) void RecordStep(Recorder& recorder, char step, uint64_t t) {
  if (step == 'h') {
    RecordFromHere(recorder, t);
  } else if (step == 't') {
    RecordFromThere(recorder, t);
  } else {
    recorder.RecordApiCall(Copy(t), false, 0);
  }
  __asm__ volatile("" ::: "memory");
}

// The api calls of the trace at `path`, in order.
std::vector<trace::ApiCallRecord> ReadApiCalls(const std::string& path) {
  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  EXPECT_TRUE(opened.ok()) << opened.status();
  std::vector<trace::ApiCallRecord> calls;
  if (!opened.ok()) return calls;
  reader::ChunkEvents events;
  while (true) {
    auto more = (*opened)->Next(&events);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    calls.insert(calls.end(), events.api_calls.begin(), events.api_calls.end());
  }
  return calls;
}

// A record from call site `site` of RecordFromSites: one call instruction per site, so that each
// site has a return address (CallSite::pc) of its own, all at the same stack pointer (the store
// after each call keeps the compiler from merging the calls into one).
volatile int g_after_site = 0;
__attribute__((noinline)) void RecordFromSite(Recorder& recorder, uint64_t t) {
  recorder.RecordApiCallFrom(Copy(t), true, 1,
                             CallSite{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                                      reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())});
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void RecordFromSites(Recorder& recorder, int site, uint64_t t) {
  switch (site) {
    case 0: RecordFromSite(recorder, t); g_after_site = 0; break;
    case 1: RecordFromSite(recorder, t); g_after_site = 1; break;
    case 2: RecordFromSite(recorder, t); g_after_site = 2; break;
    case 3: RecordFromSite(recorder, t); g_after_site = 3; break;
    case 4: RecordFromSite(recorder, t); g_after_site = 4; break;
    case 5: RecordFromSite(recorder, t); g_after_site = 5; break;
    case 6: RecordFromSite(recorder, t); g_after_site = 6; break;
    case 7: RecordFromSite(recorder, t); g_after_site = 7; break;
    default: RecordFromSite(recorder, t); g_after_site = 8; break;
  }
  __asm__ volatile("" ::: "memory");
}

// A record from call site `site` of RecordFromSites `extra` frames deeper: the same return address
// at another stack pointer, so another reuse entry (a framework's launches reach CUPTI's callback
// through call chains of many depths).
__attribute__((noinline)) void RecordFromDepth(Recorder& recorder, int site, int extra, uint64_t t) {
  if (extra == 0) {
    RecordFromSites(recorder, site, t);
  } else {
    RecordFromDepth(recorder, site, extra - 1, t);
  }
  __asm__ volatile("" ::: "memory");
}

// A record whose stack the recorder reused from one of its call-site entries takes the id of that
// entry's last defining record, with no compare (kRingFlagStackReused). More sites than entries
// (9 call sites at 20 depths, into 128 entries) take entries over, and a record then names its
// own site's stack, not the previous owner's: each site's records keep one stack id, each site its
// own.
TEST(TraceWriterTest, ReusedStackTakesItsEntrysIdWithoutACompare) {
  Rig rig;
  const std::string path = TempPath("reuse_ids.gstrace");
  const RemovedAtEnd removed{path};
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  ASSERT_TRUE(writer.Start(Header()));
  constexpr int kCallSites = 9, kDepths = 20, kSites = kCallSites * kDepths;
  static_assert(kSites > StackReuseTable::kEntries, "more sites than entries");
  std::vector<int> sites;
  uint64_t t = 1000000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int site = 0; site < kSites; ++site) {
      for (int i = 0; i < 2; ++i) {
        RecordFromDepth(*rig.recorder, site % kCallSites, site / kCallSites, t += 1000);
        sites.push_back(site);
      }
    }
    writer.Drain();  // the entries outlive a drain
    ASSERT_TRUE(writer.FlushChunk());
  }
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));
  const auto [unwinds, reuses] = rig.pool.stack_counts();
  // Every site's second call in a row reuses what its first just defined; some set holds more
  // sites than ways, so some site's entry was taken over before the second pass came back to it.
  EXPECT_GE(reuses, static_cast<uint64_t>(2 * kSites));
  EXPECT_GT(unwinds, static_cast<uint64_t>(kSites));
  EXPECT_EQ(unwinds + reuses, sites.size());
  // Records without Python frames: every reused one took its entry's id without a compare.
  EXPECT_EQ(writer.stack_reuse_ids(), reuses);

  const std::vector<trace::ApiCallRecord> calls = ReadApiCalls(path);
  ASSERT_EQ(calls.size(), sites.size());
  std::map<int, uint32_t> id_of_site;
  for (size_t i = 0; i < calls.size(); ++i) {
    ASSERT_NE(calls[i].stack, 0u) << i;
    auto [it, inserted] = id_of_site.try_emplace(sites[i], calls[i].stack);
    EXPECT_EQ(calls[i].stack, it->second) << "record " << i << ", site " << sites[i];
  }
  std::set<uint32_t> distinct;
  for (const auto& [site, id] : id_of_site) distinct.insert(id);
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kSites)) << "a stack per site";
}

// Two call chains of the same depth into one site: the same return address and stack pointer at
// the site, another caller below it. The stores keep the compiler from folding the two.
volatile int g_chain = 0;
__attribute__((noinline)) void ChainA(Recorder& recorder, uint64_t t) {
  RecordFromSites(recorder, 1, t);
  g_chain = 1;
}
__attribute__((noinline)) void ChainB(Recorder& recorder, uint64_t t) {
  RecordFromSites(recorder, 1, t);
  g_chain = 2;
}

// Each chain keeps an entry of its own at the shared site and stack pointer: calls from the two in
// turn are reused after each one's first, and each names its own chain's stack.
TEST(TraceWriterTest, TwoChainsOfOneDepthKeepTheirOwnStacks) {
  Rig rig;
  const std::string path = TempPath("reuse_chains.gstrace");
  const RemovedAtEnd removed{path};
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  ASSERT_TRUE(writer.Start(Header()));
  volatile int rounds = 10;  // one call instruction per chain, not an unrolled copy per round
  for (int i = 0; i < rounds; ++i) {
    ChainA(*rig.recorder, 1000000 + static_cast<uint64_t>(i) * 2000);
    ChainB(*rig.recorder, 1001000 + static_cast<uint64_t>(i) * 2000);
  }
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));
  const auto [unwinds, reuses] = rig.pool.stack_counts();
  EXPECT_EQ(unwinds, 2u) << "one unwind per chain";
  EXPECT_EQ(reuses, 18u);
  const std::vector<trace::ApiCallRecord> calls = ReadApiCalls(path);
  ASSERT_EQ(calls.size(), 20u);
  ASSERT_NE(calls[0].stack, calls[1].stack) << "two chains, two stacks";
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].stack, calls[i % 2].stack) << "record " << i;
}

// A new writer (the next on-demand window's, a forked child's) has not seen the records that filled
// the recorder's reuse entries: its first record from each site unwinds again (a new reuse epoch),
// so every record of its trace has its stack.
TEST(TraceWriterTest, ANewWritersRecordsFromKnownSitesKeepTheirStacks) {
  Rig rig;
  std::string paths[2] = {TempPath("reuse_first.gstrace"), TempPath("reuse_second.gstrace")};
  for (const std::string& path : paths) {
    std::unique_ptr<TraceWriter> writer = rig.Writer(path);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->Start(Header()));
    // One call instruction for the three (an unrolled loop would be three callers of the site).
    volatile int calls = 3;
    for (int i = 0; i < calls; ++i) RecordFromSites(*rig.recorder, 1, 1000000 + static_cast<uint64_t>(i) * 1000);
    ASSERT_TRUE(writer->Finish(pb::END_REASON_EXIT, ""));
    EXPECT_EQ(writer->stack_reuse_ids(), 2u) << path;
  }
  const std::vector<trace::ApiCallRecord> first = ReadApiCalls(paths[0]), second = ReadApiCalls(paths[1]);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(second.size(), 3u);
  for (const trace::ApiCallRecord& call : second) {
    EXPECT_NE(call.stack, 0u);
    EXPECT_EQ(call.stack, second[0].stack);
  }
  for (const std::string& path : paths) unlink(path.c_str());
}

// A record with the same stack words as one of its ring's recent records takes that record's stack
// id without interning (TraceWriter::RecentStacks); any other record is interned as before.
TEST(TraceWriterTest, RepeatedStackOfARingKeepsItsIdWithoutInterning) {
  Rig rig;
  const std::string path = TempPath("repeats.gstrace");
  const RemovedAtEnd removed{path};
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  RingRecorder& recorder = *rig.recorder;
  ASSERT_TRUE(writer.Start(Header()));
  // 10 x here (9 repeats), there (new), here (a repeat: recent, though not the previous record's),
  // no stack (new), here (repeat); then, in the next drain, here, no stack and there again (3
  // repeats: a ring's recent stacks are kept across drains).
  const char kSteps[] = "hhhhhhhhhhthnh|hnt";
  for (int i = 0; kSteps[i] != 0; ++i) {
    if (kSteps[i] == '|') {
      writer.Drain();
      ASSERT_TRUE(writer.FlushChunk());
      continue;
    }
    RecordStep(recorder, kSteps[i], 1000000 + static_cast<uint64_t>(i) * 1000);
  }
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));
  EXPECT_EQ(writer.stack_repeats(), 14u);

  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::vector<trace::ApiCallRecord> calls;
  reader::ChunkEvents events;
  while (true) {
    auto more = (*opened)->Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    calls.insert(calls.end(), events.api_calls.begin(), events.api_calls.end());
  }
  ASSERT_EQ(calls.size(), 17u);
  const uint32_t here = calls[0].stack;
  ASSERT_NE(here, 0u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(calls[i].stack, here) << i;
  EXPECT_NE(calls[10].stack, 0u);
  EXPECT_NE(calls[10].stack, here);
  EXPECT_EQ(calls[11].stack, here);
  EXPECT_EQ(calls[12].stack, 0u);
  EXPECT_EQ(calls[13].stack, here);
  EXPECT_EQ(calls[14].stack, here);
  EXPECT_EQ(calls[15].stack, 0u);
  EXPECT_EQ(calls[16].stack, calls[10].stack);
  EXPECT_THAT((*opened)->tables().DescribeStack(calls[10].stack), HasSubstr("RecordFromThere"));
}

TEST(TraceWriterTest, FileCutAtAnyByteKeepsEveryCompleteChunk) {
  Rig rig;
  const std::string path = TempPath("cut.gstrace");
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  ASSERT_TRUE(writer.Start(Header()));
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (int i = 0; i < 20; ++i) RecordFromHere(*rig.recorder, 1000000 * (chunk + 1) + i);
    writer.Drain();
    ASSERT_TRUE(writer.FlushChunk());
  }
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  unlink(path.c_str());
  size_t previous = 0;
  int opened = 0;
  for (size_t cut = 0; cut <= bytes.size(); cut += 7) {
    auto reader = reader::TraceReader::FromBuffer(bytes.substr(0, cut));
    if (!reader.ok()) continue;  // cut inside the prelude/header
    ++opened;
    reader::ChunkEvents events;
    size_t calls = 0;
    while (true) {
      auto more = (*reader)->Next(&events);
      ASSERT_TRUE(more.ok());
      if (!*more) break;
      calls += events.api_calls.size();
    }
    EXPECT_EQ(calls % 20, 0u) << "a chunk is all or nothing";
    EXPECT_GE(calls, previous);
    previous = calls;
  }
  EXPECT_GT(opened, 10);
  EXPECT_EQ(previous, 80u);
}

// A contributor that adds samples with a stack captured here and a named NVTX range.
class FakeContributor : public ChunkContributor {
 public:
  size_t DrainInto(ChunkBuilder* builder) override {
    if (pcs_.empty()) return 0;
    StackView view;
    view.pcs = pcs_.data();
    view.pc_count = static_cast<int>(pcs_.size());
    const uint32_t stack = builder->InternStack(view);
    trace::SampleBatchEncoder samples;
    samples.Begin(builder->chunk()->add_samples(), 42, 5000);
    for (int i = 0; i < 3; ++i) {
      trace::SampleRecord r;
      r.time_ns = 5000 + i * 1000;
      r.stack = stack;
      r.state = pb::THREAD_STATE_IO_WAIT;
      samples.Add(r);
    }
    trace::NvtxRangeBatchEncoder ranges;
    ranges.Begin(builder->chunk()->add_nvtx_ranges(), 42, 5000);
    trace::NvtxRangeRecord range;
    range.start_ns = 5000;
    range.end_ns = 7500;
    range.name = builder->InternString("data");
    ranges.Add(range);
    builder->CountRecords(4);
    pcs_.clear();
    ++drains_;
    return 4;
  }
  void AddStats(pb::Stats* stats) override { stats->set_samples_recorded(3 * drains_); }
  std::vector<uint64_t> pcs_;
  int drains_ = 0;
};

TEST(TraceWriterTest, ContributorsShareTheWritersTables) {
  Rig rig;
  const std::string path = TempPath("contributor.gstrace");
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  FakeContributor contributor;
  writer.AddContributor(&contributor);
  ASSERT_TRUE(writer.Start(Header()));
  RecordFromHere(*rig.recorder, 1000);  // an API call from the same site as the sample below
  uint64_t pcs[32];
  const int n = rig.stacks.Capture(pcs, 32, 0, 0, 0);  // libunwind: no bounds needed
  ASSERT_GT(n, 0);
  contributor.pcs_.assign(pcs, pcs + n);
  EXPECT_EQ(writer.Drain(), 5u);  // 1 call + 4 contributed records
  ASSERT_TRUE(writer.Finish(pb::END_REASON_EXIT, ""));

  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  ASSERT_TRUE(opened.ok()) << opened.status();
  reader::TraceReader& r = **opened;
  reader::ChunkEvents events;
  std::vector<trace::SampleRecord> samples;
  std::vector<trace::NvtxRangeRecord> ranges;
  while (true) {
    auto more = r.Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    samples.insert(samples.end(), events.samples.begin(), events.samples.end());
    ranges.insert(ranges.end(), events.nvtx_ranges.begin(), events.nvtx_ranges.end());
  }
  EXPECT_TRUE(damage.damage.empty());
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[2].time_ns, 7000u);
  EXPECT_EQ(samples[0].thread_id, 42u);
  EXPECT_EQ(samples[0].state, pb::THREAD_STATE_IO_WAIT);
  ASSERT_NE(samples[0].stack, 0u);
  // Symbolised through the writer's own tables, down to this test's function.
  EXPECT_THAT(r.tables().DescribeStack(samples[0].stack), HasSubstr("ContributorsShareTheWritersTables"));
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(r.tables().string(ranges[0].name), "data");
  EXPECT_EQ(ranges[0].end_ns, 7500u);
  EXPECT_EQ(r.last_stats().samples_recorded(), 3u);
  unlink(path.c_str());
}

// The rings, CUPTI and the recorder outlive a trace (on-demand windows): a trace's loss counters
// start at zero with it, not at the process' running totals.
TEST(TraceWriterTest, LossesBeforeStartBelongToNoTrace) {
  Rig rig;
  rig.recorder->AddDropped(7, 3);  // an earlier window's (or the time between windows)
  const std::string path = TempPath("second_window.gstrace");
  std::unique_ptr<TraceWriter> writer_owner = rig.Writer(path);
  ASSERT_NE(writer_owner, nullptr);
  TraceWriter& writer = *writer_owner;
  ASSERT_TRUE(writer.Start(Header()));
  rig.recorder->AddDropped(2, 1);  // this trace's own
  RecordFromHere(*rig.recorder, 1000);
  EXPECT_EQ(writer.Drain(), 1u);
  ASSERT_TRUE(writer.Finish(pb::END_REASON_STOPPED, ""));
  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::Open(path, &damage);
  ASSERT_TRUE(opened.ok()) << opened.status();
  reader::ChunkEvents events;
  while (true) {
    auto more = (*opened)->Next(&events);
    ASSERT_TRUE(more.ok());
    if (!*more) break;
  }
  EXPECT_EQ((*opened)->last_stats().cupti_dropped(), 2u);
  EXPECT_EQ((*opened)->last_stats().other_dropped(), 1u);
  EXPECT_EQ((*opened)->last_stats().api_calls_recorded(), 1u);
  unlink(path.c_str());
}

// A file that fails from the N-th append on, like a disk that fills up.
class FailingFile : public TraceFile {
 public:
  FailingFile(int good_appends, int* appends) : good_(good_appends), appends_(appends) {}
  bool Append(const void*, size_t, std::string* error) override {
    if (++*appends_ > good_) {
      *error = "No space left on device";
      return false;
    }
    return true;
  }
  bool Close(std::string*) override { return true; }

 private:
  int good_;
  int* appends_;
};

TEST(TraceWriterTest, FirstWriteErrorIsStickyAndReported) {
  Rig rig;
  int appends = 0;
  TraceWriter writer(rig.recorder.get(), std::make_unique<FailingFile>(2, &appends), &TestApiNames, 1 << 20);
  ASSERT_TRUE(writer.Start(Header()));  // prelude + header
  RecordFromHere(*rig.recorder, 1);
  writer.Drain();
  EXPECT_FALSE(writer.FlushChunk());
  EXPECT_TRUE(writer.failed());
  EXPECT_EQ(writer.error(), "write failed: No space left on device");
  EXPECT_EQ(appends, 3);
  // Nothing more is attempted: the error is final.
  RecordFromHere(*rig.recorder, 2);
  writer.Drain();
  EXPECT_FALSE(writer.FlushChunk());
  EXPECT_FALSE(writer.Finish(pb::END_REASON_EXIT, ""));
  EXPECT_EQ(appends, 3);
  EXPECT_EQ(writer.error(), "write failed: No space left on device");
}

TEST(TraceWriterTest, HeaderWriteErrorFailsStart) {
  Rig rig;
  int appends = 0;
  TraceWriter writer(rig.recorder.get(), std::make_unique<FailingFile>(0, &appends), &TestApiNames, 1 << 20);
  EXPECT_FALSE(writer.Start(Header()));
  EXPECT_TRUE(writer.failed());
}

TEST(TraceWriterTest, IdleFlushWritesNothing) {
  Rig rig;
  int appends = 0;
  TraceWriter writer(rig.recorder.get(), std::make_unique<FailingFile>(1000, &appends), &TestApiNames, 1 << 20);
  ASSERT_TRUE(writer.Start(Header()));
  writer.Drain();
  ASSERT_TRUE(writer.FlushChunk());  // the first chunk (module map, stats)
  const int after_first = appends;
  for (int i = 0; i < 5; ++i) {
    writer.Drain();
    ASSERT_TRUE(writer.FlushChunk());
  }
  EXPECT_EQ(appends, after_first);
  RecordFromHere(*rig.recorder, 1);
  writer.Drain();
  ASSERT_TRUE(writer.FlushChunk());
  EXPECT_EQ(appends, after_first + 1);
}

}  // namespace
}  // namespace gs
