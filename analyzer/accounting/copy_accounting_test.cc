#include "analyzer/accounting/copy_accounting.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

constexpr TimeNs kMs = 1'000'000;
constexpr uint64_t kGiB = 1ull << 30;

GpuActivity Copy(MemKind host, uint64_t bytes, TimeNs dur) {
  GpuActivity a;
  a.kind = ActivityKind::kMemcpy;
  a.direction = CopyDirection::kHostToDevice;
  a.src_kind = host;
  a.dst_kind = MemKind::kDevice;
  a.bytes = bytes;
  a.start_ns = 0;
  a.end_ns = dur;
  return a;
}


TEST(CopyAccountingTest, GainUsesMeasuredPinnedBandwidth) {
  CopyAccounting c;
  c.AddActivity(Copy(MemKind::kPinned, kGiB, 100 * kMs));
  c.AddActivity(Copy(MemKind::kPageable, kGiB, 200 * kMs));
  c.AddPageableCallTime(CopyDirection::kHostToDevice, 400 * kMs);
  CopySummary s = c.Summarize(0);
  ASSERT_EQ(s.directions.size(), 1u);
  EXPECT_EQ(s.directions[0].bytes, 2 * kGiB);
  EXPECT_NEAR(s.directions[0].bandwidth, 2.0 * kGiB / 0.3, 1e3);
  EXPECT_DOUBLE_EQ(s.pageable_share, 0.5);
  EXPECT_EQ(s.pageable_staging_ns, 200 * kMs);  // host 400 ms - DMA 200 ms
  EXPECT_EQ(s.est_pinning_gain_ns, 300 * kMs);  // 400 ms - 1 GiB at the pinned 100 ms/GiB
  EXPECT_NE(s.gain_model.find("measured"), std::string::npos);
}

TEST(CopyAccountingTest, GainWithoutPinnedCopiesUsesTheDocumentedModel) {
  CopyAccounting c;
  c.AddActivity(Copy(MemKind::kPageable, kGiB, 200 * kMs));
  c.AddPageableCallTime(CopyDirection::kHostToDevice, 400 * kMs);
  CopySummary s = c.Summarize(0);
  EXPECT_EQ(s.est_pinning_gain_ns, 200 * kMs);  // pinned modelled at twice the effective rate
  EXPECT_NE(s.gain_model.find("model"), std::string::npos);
}

TEST(CopyAccountingTest, LinkPeakFromPcieGenerationAndWidth) {
  EXPECT_NEAR(PcieLinkPeak(4, 16), 31.5e9, 0.1e9);
  EXPECT_EQ(PcieLinkPeak(0, 16), 0);
  CopyAccounting c;
  c.AddActivity(Copy(MemKind::kPageable, kGiB, 200 * kMs));
  CopySummary s = c.Summarize(PcieLinkPeak(4, 16));
  EXPECT_NE(s.gain_model.find("link peak"), std::string::npos);
}

}  // namespace
}  // namespace gs::analyzer
