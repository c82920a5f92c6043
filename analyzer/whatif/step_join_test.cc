#include "analyzer/whatif/step_join.h"

#include "gtest/gtest.h"

namespace gs::analyzer::whatif {
namespace {

constexpr TimeNs kMs = 1000000;

// Three single-device ranks, four steps of 32 ms from t = 5 ms: ranks 0 and 1 reach each
// all-reduce after 10 ms (8 ms of kernels, 1 ms of host-bound idle), rank 2 after 30 ms (21 ms
// host-bound); the all-reduce's own work is 2 ms, so ranks 0 and 1 wait 20 ms in it every step.
std::vector<RankSummary> Job() {
  const TimeNs arrive_ms[3] = {10, 10, 30}, host_bound_ms[3] = {1, 1, 21};
  std::vector<RankSummary> ranks(3);
  for (int r = 0; r < 3; ++r) {
    RankSummary& s = ranks[static_cast<size_t>(r)];
    s.rank = r;
    s.pid = 10 + r;
    s.devices = 1;
    s.wall_ns = 136 * kMs;
    for (int k = 0; k < 4; ++k) {
      const TimeNs base = 5 * kMs + k * 32 * kMs;
      const TimeNs start = base + arrive_ms[r] * kMs;
      s.steps.push_back(RankStep{start, base + 32 * kMs, host_bound_ms[r] * kMs, host_bound_ms[r] * kMs});
      s.compute_busy_ns += 8 * kMs + (base + 32 * kMs - start);
    }
  }
  return ranks;
}

// The section AnalyzeRanks makes of `job`, with its straggler's prediction.
RanksSection Predicted(const std::vector<RankSummary>& job) {
  RanksSection section = AnalyzeRanks(job);
  PredictStraggler(job, &section);
  return section;
}

TEST(StepJoinTest, TheStragglerAtTheMedianHostTimeShortensEveryStepToTheOthersArrival) {
  const RanksSection section = Predicted(Job());
  ASSERT_TRUE(section.straggler.found);
  EXPECT_EQ(section.straggler.row, 2u);
  EXPECT_EQ(section.step_ns, 32 * kMs);
  EXPECT_EQ(section.run_ns, 136 * kMs);
  const StragglerPrediction& p = section.straggler.prediction;
  ASSERT_TRUE(p.ran);
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.steps, 3u);
  EXPECT_EQ(p.measured_step_ns, 32 * kMs);
  EXPECT_EQ(p.replayed_step_ns, 32 * kMs);
  EXPECT_DOUBLE_EQ(p.step_error, 0);
  // Rank 2 sheds 20 of its 21 ms (the other ranks' median, 1 ms, stays): everyone arrives at
  // 10 ms.
  EXPECT_EQ(p.predicted_step_ns, 12 * kMs);
  // The clocks are aligned (one boot), so the first collective is joined too: four collectives
  // 20 ms sooner, and the time around them stays.
  EXPECT_EQ(p.measured_wall_ns, 136 * kMs);
  EXPECT_EQ(p.predicted_wall_ns, 56 * kMs);
  // Busy: ranks 0 and 1 had 4 x (8 + 22) ms and lose 20 ms of waiting at each collective; rank 2
  // keeps its 4 x (8 + 2) ms.
  EXPECT_DOUBLE_EQ(p.measured_utilization, (120.0 + 120.0 + 40.0) / (3 * 136.0));
  EXPECT_DOUBLE_EQ(p.predicted_utilization, (40.0 + 40.0 + 40.0) / (3 * 56.0));
}

TEST(StepJoinTest, WithoutAlignedClocksTheFirstCollectiveStaysAsMeasured) {
  std::vector<RankSummary> job = Job();
  job[1].clock = RankClock::kNone;  // nothing maps its times onto the others'
  const RanksSection section = Predicted(job);
  const StragglerPrediction& p = section.straggler.prediction;
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.predicted_step_ns, 12 * kMs);
  // Three steps 20 ms shorter; the first collective, its waiting included, as measured.
  EXPECT_EQ(p.predicted_wall_ns, 76 * kMs);
  EXPECT_DOUBLE_EQ(p.predicted_utilization, (60.0 + 60.0 + 40.0) / (3 * 76.0));
}

TEST(StepJoinTest, RanksGivenInAnyOrderAreJoinedInTheSectionsRowOrder) {
  std::vector<RankSummary> job = Job();
  std::swap(job[0], job[2]);  // the section's rows are by rank: row 2 is still rank 2
  const RanksSection section = Predicted(job);
  ASSERT_TRUE(section.straggler.prediction.ok);
  EXPECT_EQ(section.straggler.prediction.predicted_step_ns, 12 * kMs);
}

TEST(StepJoinTest, OfTwoRanksTheStragglerGetsTheOthersHostTime) {
  std::vector<RankSummary> job = Job();
  job.erase(job.begin() + 1);  // ranks 0 and 2
  const RanksSection section = Predicted(job);
  ASSERT_TRUE(section.straggler.prediction.ok);
  EXPECT_EQ(section.straggler.prediction.predicted_step_ns, 12 * kMs);
}

TEST(StepJoinTest, RanksTheCollectivesDoNotHoldTogetherGetNoPredictionAndSayWhy) {
  // Rank 2 runs 40 ms steps and its 2 ms collectives wait for nobody, while ranks 0 and 1 keep
  // their 32 ms steps: the collectives do not hold the ranks together (no all-reduce), and the
  // join (rank 2's 38 ms arrival + 2 ms = 40 ms) misses the measured steps (median 32 ms).
  std::vector<RankSummary> job = Job();
  for (int k = 0; k < 4; ++k) {
    RankStep& step = job[2].steps[static_cast<size_t>(k)];
    step.collective_start_ns = 5 * kMs + k * 40 * kMs + 30 * kMs;
    step.collective_end_ns = step.collective_start_ns + 2 * kMs;
  }
  const RanksSection section = Predicted(job);
  EXPECT_EQ(section.straggler.row, 2u);
  const StragglerPrediction& p = section.straggler.prediction;
  ASSERT_TRUE(p.ran);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.measured_step_ns, 32 * kMs);
  EXPECT_EQ(p.replayed_step_ns, 40 * kMs);
  EXPECT_NE(p.reason.find("all-reduce"), std::string::npos) << p.reason;
  EXPECT_EQ(p.predicted_wall_ns, 0);
}

TEST(StepJoinTest, NoStragglerOrTooFewStepsPredictNothing) {
  std::vector<RankSummary> balanced = Job();
  balanced.pop_back();  // ranks 0 and 1 arrive together
  const RanksSection none = Predicted(balanced);
  EXPECT_FALSE(none.straggler.found);
  EXPECT_FALSE(none.straggler.prediction.ran);

  std::vector<RankSummary> short_job = Job();
  for (RankSummary& r : short_job) r.steps.resize(2);
  const RanksSection two = Predicted(short_job);
  ASSERT_TRUE(two.straggler.found);
  EXPECT_TRUE(two.straggler.prediction.ran);
  EXPECT_FALSE(two.straggler.prediction.ok);
  EXPECT_NE(two.straggler.prediction.reason.find("fewer than three"), std::string::npos);
}

}  // namespace
}  // namespace gs::analyzer::whatif
