// The injection entry point driven exactly as NVTX's loader drives it: a fake export table whose
// CORE/CORE2 function tables the agent fills, then NVTX calls through the filled slots, then a
// drain into a chunk that is decoded back.
#include "agent/nvtx/nvtx_injection.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/core/clock.h"
#include "agent/nvtx/nvtx_collector.h"
#include "gtest/gtest.h"
#include "proto/batch_codec.h"

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#undef NVTX_NO_IMPL

namespace gs {
namespace {

namespace pb = gpustall::trace;

// The loader's side: one function-pointer slot per callback id, per module.
struct FakeNvtx {
  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {};
  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {};
  NvtxFunctionPointer* core_table[NVTX_CBID_CORE_SIZE] = {};
  NvtxFunctionPointer* core2_table[NVTX_CBID_CORE2_SIZE] = {};
  uint32_t version_set = 0;

  FakeNvtx() {
    for (int i = 1; i < NVTX_CBID_CORE_SIZE; ++i) core_table[i] = &core[i];
    for (int i = 1; i < NVTX_CBID_CORE2_SIZE; ++i) core2_table[i] = &core2[i];
  }
  template <typename F>
  F Core(int id) const { return reinterpret_cast<F>(core[id]); }
  template <typename F>
  F Core2(int id) const { return reinterpret_cast<F>(core2[id]); }
};

FakeNvtx* g_fake = nullptr;

int GetModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out, unsigned int* size) {
  if (module == NVTX_CB_MODULE_CORE) {
    *out = g_fake->core_table;
    *size = NVTX_CBID_CORE_SIZE;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    *out = g_fake->core2_table;
    *size = NVTX_CBID_CORE2_SIZE;
    return 1;
  }
  return 0;
}
void SetVersion(uint32_t v) { g_fake->version_set = v; }
const NvtxExportTableCallbacks kCallbacks = {sizeof(NvtxExportTableCallbacks), &GetModuleFunctionTable};
const NvtxExportTableVersionInfo kVersion = {sizeof(NvtxExportTableVersionInfo), NVTX_VERSION, 0, &SetVersion};
const void* GetExportTable(uint32_t id) {
  if (id == NVTX_ETID_CALLBACKS) return &kCallbacks;
  if (id == NVTX_ETID_VERSIONINFO) return &kVersion;
  return nullptr;
}

// The writer's side, reduced to what a contributor uses.
class FakeBuilder : public ChunkBuilder {
 public:
  pb::Chunk* chunk() override { return &chunk_; }
  uint32_t InternString(const std::string& value) override {
    if (value.empty()) return 0;
    auto [it, inserted] = ids_.emplace(value, static_cast<uint32_t>(ids_.size() + 1));
    if (inserted) names_[it->second] = value;
    return it->second;
  }
  uint32_t InternStack(const StackView&) override { return 0; }
  void CountRecords(size_t n) override { counted_ += n; }

  std::string Name(uint32_t id) const { return id == 0 ? "" : names_.at(id); }
  std::vector<trace::NvtxRangeRecord> Ranges() const {
    std::vector<trace::NvtxRangeRecord> out;
    std::string error;
    for (const pb::NvtxRangeBatch& b : chunk_.nvtx_ranges())
      EXPECT_TRUE(trace::DecodeNvtxRangeBatch(b, &out, &error)) << error;
    return out;
  }
  size_t counted_ = 0;

 private:
  pb::Chunk chunk_;
  std::map<std::string, uint32_t> ids_;
  std::map<uint32_t, std::string> names_;
};

uint64_t Tid() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

class NvtxInjectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static FakeNvtx fake;
    g_fake = &fake;
    ASSERT_EQ(NvtxInitializeInjection(&GetExportTable), 1);
  }
  void SetUp() override {
    FakeBuilder discard;  // forget what earlier tests left
    nvtx::NvtxCollector::Instance().DrainInto(&discard);
  }
  const FakeNvtx& nvtx() const { return *g_fake; }
  int PushA(const char* m) const { return nvtx().Core<int (*)(const char*)>(NVTX_CBID_CORE_RangePushA)(m); }
  int Pop() const { return nvtx().Core<int (*)()>(NVTX_CBID_CORE_RangePop)(); }
};

TEST_F(NvtxInjectionTest, FillsCoreAndDomainSlotsAndSetsVersion) {
  for (int id : {NVTX_CBID_CORE_MarkA, NVTX_CBID_CORE_MarkEx, NVTX_CBID_CORE_RangeStartEx, NVTX_CBID_CORE_RangeEnd,
                 NVTX_CBID_CORE_RangePushA, NVTX_CBID_CORE_RangePushEx, NVTX_CBID_CORE_RangePop,
                 NVTX_CBID_CORE_NameOsThreadA})
    EXPECT_NE(nvtx().core[id], nullptr) << "CORE slot " << id;
  for (int id : {NVTX_CBID_CORE2_DomainCreateA, NVTX_CBID_CORE2_DomainRegisterStringA, NVTX_CBID_CORE2_DomainRangePushEx,
                 NVTX_CBID_CORE2_DomainRangePop, NVTX_CBID_CORE2_DomainMarkEx, NVTX_CBID_CORE2_DomainRangeStartEx,
                 NVTX_CBID_CORE2_DomainRangeEnd})
    EXPECT_NE(nvtx().core2[id], nullptr) << "CORE2 slot " << id;
  EXPECT_EQ(nvtx().version_set, static_cast<uint32_t>(NVTX_VERSION));
  EXPECT_TRUE(nvtx::NvtxCollector::Instance().started());
  EXPECT_TRUE(NvtxCaptureExpected());
}

TEST_F(NvtxInjectionTest, SecondModuleGetsItsOwnTablesFilled) {
  // NVTX initialises once per module: a second module's tables must be filled too.
  FakeNvtx second;
  FakeNvtx* first = g_fake;
  g_fake = &second;
  EXPECT_EQ(NvtxInitializeInjection(&GetExportTable), 1);
  g_fake = first;
  EXPECT_EQ(second.core[NVTX_CBID_CORE_RangePushA], first->core[NVTX_CBID_CORE_RangePushA]);
}

TEST_F(NvtxInjectionTest, NestedPushPopRangesKeepDepthAndTimes) {
  EXPECT_EQ(PushA("step"), 0);
  EXPECT_EQ(PushA("data"), 1);
  EXPECT_EQ(Pop(), 1);
  EXPECT_EQ(PushA("forward"), 1);
  EXPECT_EQ(Pop(), 1);
  EXPECT_EQ(Pop(), 0);
  EXPECT_LT(Pop(), 0);  // nothing open
  FakeBuilder b;
  EXPECT_EQ(nvtx::NvtxCollector::Instance().DrainInto(&b), 3u);
  const auto ranges = b.Ranges();
  ASSERT_EQ(ranges.size(), 3u);
  std::map<std::string, trace::NvtxRangeRecord> by_name;
  for (const auto& r : ranges) {
    EXPECT_EQ(r.thread_id, Tid());
    by_name[b.Name(r.name)] = r;
  }
  const auto& step = by_name.at("step");
  const auto& data = by_name.at("data");
  const auto& forward = by_name.at("forward");
  EXPECT_EQ(step.depth, 0u);
  EXPECT_EQ(data.depth, 1u);
  EXPECT_LE(step.start_ns, data.start_ns);
  EXPECT_LE(data.end_ns, forward.start_ns);
  EXPECT_LE(forward.end_ns, step.end_ns);
  EXPECT_EQ(step.domain, 0u);
}

// On demand, between capture windows: ranges that close then belong to no trace and are not
// kept; a range opened then and closed inside the next window keeps its true start.
TEST_F(NvtxInjectionTest, RangesClosedBetweenWindowsAreNotKept) {
  nvtx::NvtxCollector& collector = nvtx::NvtxCollector::Instance();
  collector.SetBetweenWindows(true);
  EXPECT_EQ(PushA("epoch"), 0);
  const uint64_t opened_by = MonotonicNs();
  EXPECT_EQ(PushA("between"), 1);
  EXPECT_EQ(Pop(), 1);  // closes between windows: dropped, not counted as a loss
  FakeBuilder before;
  EXPECT_EQ(collector.DrainInto(&before), 0u);
  const uint64_t window_start = MonotonicNs();
  collector.SetBetweenWindows(false);
  EXPECT_EQ(Pop(), 0);  // the epoch range closes inside the window
  FakeBuilder during;
  EXPECT_EQ(collector.DrainInto(&during), 1u);
  const auto ranges = during.Ranges();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(during.Name(ranges[0].name), "epoch");
  EXPECT_LE(ranges[0].start_ns, opened_by);
  EXPECT_GE(ranges[0].end_ns, window_start);
  EXPECT_EQ(collector.counters().ring_full, 0u);
}

// The wide-character entry points (nvtxRangePushW and friends): ASCII kept, anything else '?',
// cut at kMaxNameBytes like a narrow message.
TEST_F(NvtxInjectionTest, WideMessagesAreNarrowed) {
  auto push_w = nvtx().Core<int (*)(const wchar_t*)>(NVTX_CBID_CORE_RangePushW);
  auto mark_w = nvtx().Core<void (*)(const wchar_t*)>(NVTX_CBID_CORE_MarkW);
  auto start_w = nvtx().Core<nvtxRangeId_t (*)(const wchar_t*)>(NVTX_CBID_CORE_RangeStartW);
  auto end = nvtx().Core<void (*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd);
  ASSERT_NE(push_w, nullptr);
  ASSERT_NE(mark_w, nullptr);
  ASSERT_NE(start_w, nullptr);
  EXPECT_EQ(push_w(L"donn\u00e9es"), 0);
  EXPECT_EQ(Pop(), 0);
  mark_w(L"mark");
  end(start_w(std::wstring(300, L'w').c_str()));
  FakeBuilder b;
  EXPECT_EQ(nvtx::NvtxCollector::Instance().DrainInto(&b), 3u);
  std::set<std::string> names;
  for (const auto& r : b.Ranges()) names.insert(b.Name(r.name));
  EXPECT_EQ(names, (std::set<std::string>{"donn?es", "mark", std::string(nvtx::kMaxNameBytes, 'w')}));
}

TEST_F(NvtxInjectionTest, MessageIsCopiedAtPush) {
  char message[] = "batch-17";
  PushA(message);
  std::strcpy(message, "garbage");  // the caller's buffer changes before the pop
  Pop();
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  ASSERT_EQ(b.Ranges().size(), 1u);
  EXPECT_EQ(b.Name(b.Ranges()[0].name), "batch-17");
}

TEST_F(NvtxInjectionTest, StartEndAcrossThreadsBelongsToTheStarter) {
  auto start = nvtx().Core<nvtxRangeId_t (*)(const char*)>(NVTX_CBID_CORE_RangeStartA);
  auto end = nvtx().Core<void (*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd);
  nvtxRangeId_t id = 0;
  uint64_t starter = 0;
  std::thread a([&] {
    starter = Tid();
    id = start("prefetch");
  });
  a.join();
  EXPECT_NE(id, 0u);
  end(id);  // on this thread
  end(id);  // a second end of the same id is ignored
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  const auto ranges = b.Ranges();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].thread_id, starter);
  EXPECT_NE(ranges[0].thread_id, Tid());
  EXPECT_EQ(b.Name(ranges[0].name), "prefetch");
  EXPECT_GE(nvtx::NvtxCollector::Instance().counters().unmatched, 1u);
}

TEST_F(NvtxInjectionTest, PushesBeyondMaxDepthAreCountedAndPopsStayMatched) {
  const uint64_t before = nvtx::NvtxCollector::Instance().counters().too_deep;
  constexpr int kExtra = 5;
  for (int i = 0; i < nvtx::kMaxDepth + kExtra; ++i) PushA(i == 0 ? "outer" : "inner");
  for (int i = 0; i < nvtx::kMaxDepth + kExtra; ++i) EXPECT_GE(Pop(), 0) << i;
  EXPECT_LT(Pop(), 0);
  EXPECT_EQ(nvtx::NvtxCollector::Instance().counters().too_deep - before, static_cast<uint64_t>(kExtra));
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  const auto ranges = b.Ranges();
  ASSERT_EQ(ranges.size(), static_cast<size_t>(nvtx::kMaxDepth));
  // The recorded ranges are the outermost ones, closed last: "outer" is depth 0 and closes last.
  EXPECT_EQ(b.Name(ranges.back().name), "outer");
  EXPECT_EQ(ranges.back().depth, 0u);
  pb::Stats stats;
  nvtx::NvtxCollector::Instance().AddStats(&stats);
  EXPECT_GE(stats.other_dropped(), static_cast<uint64_t>(kExtra));
}

TEST_F(NvtxInjectionTest, FullRingDropsAndCounts) {
  const uint64_t before = nvtx::NvtxCollector::Instance().counters().ring_full;
  const int n = static_cast<int>(nvtx::kRingBytes / 64) + 100;  // a record is >= 64 bytes
  for (int i = 0; i < n; ++i) {
    PushA("x");
    Pop();
  }
  const uint64_t dropped = nvtx::NvtxCollector::Instance().counters().ring_full - before;
  EXPECT_GT(dropped, 0u);
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  EXPECT_EQ(b.Ranges().size() + dropped, static_cast<size_t>(n));
}

TEST_F(NvtxInjectionTest, DomainsRegisteredStringsColoursAndCategories) {
  auto create = nvtx().Core2<nvtxDomainHandle_t (*)(const char*)>(NVTX_CBID_CORE2_DomainCreateA);
  auto reg = nvtx().Core2<nvtxStringHandle_t (*)(nvtxDomainHandle_t, const char*)>(NVTX_CBID_CORE2_DomainRegisterStringA);
  auto push = nvtx().Core2<int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(NVTX_CBID_CORE2_DomainRangePushEx);
  auto pop = nvtx().Core2<int (*)(nvtxDomainHandle_t)>(NVTX_CBID_CORE2_DomainRangePop);
  nvtxDomainHandle_t nccl = create("NCCL");
  ASSERT_NE(nccl, nullptr);
  nvtxStringHandle_t allreduce = reg(nccl, "allreduce");
  nvtxEventAttributes_t e = {};
  e.version = NVTX_VERSION;
  e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  e.colorType = NVTX_COLOR_ARGB;
  e.color = 0xff00ff00u;
  e.category = 7;
  e.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  e.message.registered = allreduce;
  EXPECT_EQ(PushA("backward"), 0);
  EXPECT_EQ(push(nccl, &e), 1);
  EXPECT_EQ(Pop(), 0);        // the default domain's range closes; NCCL's stays open
  EXPECT_EQ(pop(nccl), 0);
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  const auto ranges = b.Ranges();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(b.Name(ranges[0].name), "backward");
  EXPECT_EQ(ranges[0].domain, 0u);
  EXPECT_EQ(b.Name(ranges[1].name), "allreduce");
  EXPECT_EQ(b.Name(ranges[1].domain), "NCCL");
  EXPECT_EQ(ranges[1].color, 0xff00ff00u);
  EXPECT_EQ(ranges[1].category, 7u);
}

TEST_F(NvtxInjectionTest, MarksAreZeroLengthRanges) {
  nvtx().Core<void (*)(const char*)>(NVTX_CBID_CORE_MarkA)("checkpoint");
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  const auto ranges = b.Ranges();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start_ns, ranges[0].end_ns);
  EXPECT_EQ(b.Name(ranges[0].name), "checkpoint");
}

TEST_F(NvtxInjectionTest, ThreadNamesWinOverTheWritersName) {
  nvtx().Core<void (*)(uint32_t, const char*)>(NVTX_CBID_CORE_NameOsThreadA)(static_cast<uint32_t>(Tid()), "trainer");
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  ASSERT_EQ(b.chunk()->threads_size(), 1);
  EXPECT_EQ(b.chunk()->threads(0).name(), "trainer");
  // A later chunk where the writer describes the thread by its /proc name: ours is repeated after.
  FakeBuilder later;
  pb::ThreadInfo* writers = later.chunk()->add_threads();
  writers->set_tid(Tid());
  writers->set_name("comm-name");
  nvtx::NvtxCollector::Instance().DrainInto(&later);
  ASSERT_EQ(later.chunk()->threads_size(), 2);
  EXPECT_EQ(later.chunk()->threads(1).name(), "trainer");
}

TEST_F(NvtxInjectionTest, ExitedThreadsRangesAreDrainedAndItsSlotReused) {
  for (int round = 0; round < nvtx::kMaxThreads + 8; ++round) {
    std::thread t([&] {
      PushA("worker");
      Pop();
    });
    t.join();
    if (round % 16 == 15) {
      FakeBuilder b;
      EXPECT_EQ(nvtx::NvtxCollector::Instance().DrainInto(&b), 16u) << round;
    }
  }
  FakeBuilder b;
  nvtx::NvtxCollector::Instance().DrainInto(&b);
  EXPECT_EQ(nvtx::NvtxCollector::Instance().counters().no_slot, 0u);
}

TEST(NvtxInjectionDisabledTest, DeclinesWhenRecordingIsOff) {
  setenv("GS_ENABLE", "0", 1);
  FakeNvtx fake;
  FakeNvtx* saved = g_fake;
  g_fake = &fake;
  EXPECT_EQ(NvtxInitializeInjection(&GetExportTable), 0);
  g_fake = saved;
  unsetenv("GS_ENABLE");
  EXPECT_EQ(fake.core[NVTX_CBID_CORE_RangePushA], nullptr);
}

TEST(NvtxInjectionDisabledTest, DeclinesWithoutCallbackTable) {
  EXPECT_EQ(NvtxInitializeInjection([](uint32_t) -> const void* { return nullptr; }), 0);
  EXPECT_EQ(NvtxInitializeInjection(nullptr), 0);
}

}  // namespace
}  // namespace gs
