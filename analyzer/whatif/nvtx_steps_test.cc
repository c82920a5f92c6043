// Which NVTX ranges mark a program's steps (nvtx_steps.h): the outermost ranges of one name that
// repeat, never overlap and tile the loop; phases side by side, overlapping or nested ranges and
// pairs do not.
#include "analyzer/whatif/nvtx_steps.h"

#include <string>
#include <vector>

#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer::whatif {
namespace {

constexpr TimeNs kMs = 1000000;

class NvtxStepsTest : public ::testing::Test {
 protected:
  NvtxRange Range(const std::string& name, TimeNs start, TimeNs end, uint32_t depth = 0, uint64_t thread = 1) {
    const uint32_t id = next_id_++;
    tables_.SetString(id, name);
    return testing::MakeNvtxRange(thread, id, start, end, depth);
  }
  InMemoryTables tables_;
  uint32_t next_id_ = 1;
};

TEST_F(NvtxStepsTest, NumberedRangesThatTileTheLoopAreItsSteps) {
  std::vector<NvtxRange> ranges = {Range("setup", 0, 5 * kMs)};
  for (int i = 0; i < 5; ++i) ranges.push_back(Range("train_step " + std::to_string(i), (10 + 20 * i) * kMs, (29 + 20 * i) * kMs));
  const NvtxSteps s = FindNvtxSteps(ranges, tables_);
  EXPECT_EQ(s.starts, (std::vector<TimeNs>{10 * kMs, 30 * kMs, 50 * kMs, 70 * kMs, 90 * kMs}));
  EXPECT_EQ(DescribeNvtxSteps(s), "NVTX ranges \"train_step 0\" to \"train_step 4\"");
}

TEST_F(NvtxStepsTest, ARangeOfOneNameIsNamedOnce) {
  std::vector<NvtxRange> ranges;
  for (int i = 2; i >= 0; --i) ranges.push_back(Range("step", i * 10 * kMs, (i * 10 + 10) * kMs));  // any order
  const NvtxSteps s = FindNvtxSteps(ranges, tables_);
  EXPECT_EQ(s.starts, (std::vector<TimeNs>{0, 10 * kMs, 20 * kMs}));
  EXPECT_EQ(DescribeNvtxSteps(s), "NVTX range \"step\"");
}

TEST_F(NvtxStepsTest, PhasesSideBySideAreNotSteps) {
  // forward / backward / optimizer at the outermost level: each repeats, none tiles the loop.
  std::vector<NvtxRange> ranges;
  for (int i = 0; i < 6; ++i) {
    const TimeNs t = i * 30 * kMs;
    ranges.push_back(Range("forward", t, t + 10 * kMs));
    ranges.push_back(Range("backward", t + 10 * kMs, t + 25 * kMs));
    ranges.push_back(Range("optimizer", t + 25 * kMs, t + 30 * kMs));
  }
  EXPECT_TRUE(FindNvtxSteps(ranges, tables_).starts.empty());
}

TEST_F(NvtxStepsTest, OverlappingNestedOrTooFewRangesMarkNoSteps) {
  std::vector<NvtxRange> overlapping;
  for (int i = 0; i < 4; ++i) overlapping.push_back(Range("step", i * 10 * kMs, (i * 10 + 15) * kMs));
  EXPECT_TRUE(FindNvtxSteps(overlapping, tables_).starts.empty());
  std::vector<NvtxRange> nested;
  for (int i = 0; i < 4; ++i) nested.push_back(Range("step", i * 10 * kMs, (i * 10 + 10) * kMs, /*depth=*/1));
  EXPECT_TRUE(FindNvtxSteps(nested, tables_).starts.empty());
  std::vector<NvtxRange> two = {Range("step", 0, 10 * kMs), Range("step", 10 * kMs, 20 * kMs)};
  EXPECT_TRUE(FindNvtxSteps(two, tables_).starts.empty());
}

TEST_F(NvtxStepsTest, OfTwoCandidatesTheOneCoveringMoreTimeWins) {
  // A logging thread's short periodic ranges tile its own loop too; the training loop's steps
  // cover more time.
  std::vector<NvtxRange> ranges;
  for (int i = 0; i < 10; ++i) ranges.push_back(Range("flush", i * 5 * kMs, i * 5 * kMs + 5 * kMs, 0, /*thread=*/2));
  for (int i = 0; i < 4; ++i) ranges.push_back(Range("iteration", i * 25 * kMs, (i + 1) * 25 * kMs, 0, /*thread=*/1));
  const NvtxSteps s = FindNvtxSteps(ranges, tables_);
  EXPECT_EQ(s.starts.size(), 4u);
  EXPECT_EQ(s.first_name, "iteration");
}

TEST(StepNameKeyTest, TheTrailingNumberAndItsSeparatorsAreSetAside) {
  EXPECT_EQ(StepNameKey("step 3"), "step");
  EXPECT_EQ(StepNameKey("ProfilerStep#12"), "ProfilerStep");
  EXPECT_EQ(StepNameKey("iter_7"), "iter");
  EXPECT_EQ(StepNameKey("epoch 1: step 40"), "epoch 1: step");
  EXPECT_EQ(StepNameKey("step"), "step");
  EXPECT_EQ(StepNameKey("42"), "");
}

}  // namespace
}  // namespace gs::analyzer::whatif
