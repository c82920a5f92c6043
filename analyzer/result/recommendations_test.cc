#include "analyzer/result/recommendations.h"

#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::SyntheticTrace;
constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

const Recommendation* Find(const Analysis& a, const std::string& kind) {
  for (const Recommendation& r : a.recommendations)
    if (r.kind == kind) return &r;
  return nullptr;
}

TEST(RecommendationsTest, HealthyDeviceGetsNone) {
  SyntheticTrace t;
  TimeNs now = 0;
  for (int i = 0; i < 100; ++i) {  // 10 ms kernels, queued ahead: tiny gaps
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 10 * kMs);
    now += 10 * kMs + 10 * kUs;
  }
  Analysis a = t.Analyze();
  EXPECT_GT(a.SteadyUtilization(), 0.95);
  EXPECT_TRUE(a.recommendations.empty());
}

TEST(RecommendationsTest, HostBoundNamesTheFunctionAndTheNumbers) {
  SyntheticTrace t;
  uint32_t s = t.Stack({"load_batch@workload.cc:42", "train_step", "main"});
  TimeNs now = 0;
  for (int i = 0; i < 20; ++i) {
    now += 30 * kMs;
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 5 * kMs, s);
    now += 5 * kMs;
  }
  Analysis a = t.Analyze();
  const Recommendation* r = Find(a, "input_pipeline");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->text.find("load_batch"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("workload.cc:42"), std::string::npos) << r->text;
  EXPECT_GT(r->idle_share, 0.9);
  EXPECT_EQ(Find(a, "pin_memory"), nullptr);
  EXPECT_EQ(Find(a, "allocator"), nullptr);
}

TEST(RecommendationsTest, PageableCopiesRecommendPinning) {
  SyntheticTrace t;
  TimeNs now = 0;
  for (int i = 0; i < 20; ++i) {
    t.Copy(1, now, now + 8 * kMs, now + 6 * kMs, now + 8 * kMs, CopyDirection::kHostToDevice, MemKind::kPageable,
           16 << 20, false);
    t.Launch(1, now + 8 * kMs, now + 8 * kMs + 5 * kUs, now + 8 * kMs + 10 * kUs, now + 9 * kMs);
    now += 9 * kMs;
  }
  Analysis a = t.Analyze();
  const Recommendation* r = Find(a, "pin_memory");
  ASSERT_NE(r, nullptr);
  EXPECT_GT(r->est_gain_ns, 0);
  EXPECT_NE(r->text.find("100.0% of copy bytes"), std::string::npos) << r->text;
}

TEST(RecommendationsTest, OutOfMemoryIsReportedEvenWhenBusy) {
  SyntheticTrace t;
  t.Launch(1, 0, 5 * kUs, 10 * kUs, 100 * kMs);
  t.Call(1, ApiClass::kMalloc, 1 * kMs, 2 * kMs).result = kCudaErrorMemoryAllocation;
  Analysis a = t.Analyze();
  EXPECT_EQ(a.memory.oom_errors, 1u);
  EXPECT_NE(Find(a, "out_of_memory"), nullptr);
}

}  // namespace
}  // namespace gs::analyzer

namespace gs::analyzer {
namespace {

TEST(MemoryTest, NearFullWhileIdleIsExplained) {
  testing::SyntheticTrace t;
  DeviceDescription gpu;
  gpu.name = "gpu";
  gpu.total_memory = 1000ull << 20;
  t.info().devices.push_back(gpu);
  t.Call(1, ApiClass::kMalloc, 0, 1'000'000).bytes = 900ull << 20;
  t.calls().back().address = 0x1000;
  t.Launch(1, 2'000'000, 2'005'000, 2'010'000, 3'000'000);
  t.Launch(1, 50'000'000, 50'005'000, 50'010'000, 51'000'000);
  Analysis a = t.Analyze();
  EXPECT_EQ(a.memory.peak_bytes, 900ull << 20);
  EXPECT_NEAR(a.memory.peak_share, 0.9, 1e-9);
  EXPECT_NE(a.memory.explanation.find("says nothing about compute"), std::string::npos);
}

TEST(MemoryTest, FreesReduceLiveBytes) {
  testing::SyntheticTrace t;
  ApiCall& m1 = t.Call(1, ApiClass::kMalloc, 0, 10);
  m1.bytes = 100;
  m1.address = 0x10;
  ApiCall& f1 = t.Call(1, ApiClass::kFree, 20, 30);
  f1.address = 0x10;
  ApiCall& m2 = t.Call(1, ApiClass::kMalloc, 40, 50);
  m2.bytes = 60;
  m2.address = 0x20;
  Analysis a = t.Analyze();
  EXPECT_EQ(a.memory.peak_bytes, 100u);
  EXPECT_EQ(a.memory.allocations, 2u);
  EXPECT_EQ(a.memory.frees, 1u);
  EXPECT_TRUE(a.memory.explanation.empty());
}

}  // namespace
}  // namespace gs::analyzer
