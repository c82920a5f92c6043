// profiler_steps_test.cc — the step window: which device work it holds (launched before the last
// step began), its figures, and the per-step rows.
#include "analyzer/accounting/profiler_steps.h"

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

GpuActivity Work(uint32_t correlation, TimeNs start, TimeNs end, ActivityKind kind = ActivityKind::kKernel) {
  GpuActivity a;
  a.correlation = correlation;
  a.start_ns = start;
  a.end_ns = end;
  a.kind = kind;
  return a;
}

TEST(ProfilerSteps, WindowHoldsWorkLaunchedBeforeTheLastStepBegan) {
  ProfilerStepAccounting acc;
  acc.Enable({{7, 1000, 2000}, {5, 0, 400}, {6, 500, 900}, {8, 2000, 2500}});  // any order
  ASSERT_TRUE(acc.enabled());
  acc.AddCall(1, -50);    // before the first step
  acc.AddCall(2, 100);    // step 5
  acc.AddCall(3, 1100);   // step 7
  acc.AddCall(3, 1050);   // the earliest call of a correlation counts
  acc.AddCall(4, 2100);   // step 8: the last, incomplete
  acc.AddWork(Work(1, 10, 20));
  acc.AddWork(Work(2, 200, 300, ActivityKind::kMemcpy));
  acc.AddWork(Work(2, 250, 400));
  acc.AddWork(Work(3, 1200, 1300));
  acc.AddWork(Work(4, 2200, 2300));   // launched in the last step: out
  acc.AddWork(Work(9, 1500, 1600));   // no launching call: out
  auto out = acc.Finish();
  ASSERT_EQ(out.size(), 1u);
  const StepWindow& w = out[0];
  EXPECT_EQ(w.steps, 3u);
  EXPECT_EQ(w.first_step, 5);
  EXPECT_EQ(w.last_step, 7);
  EXPECT_EQ(w.incomplete_step, 8);
  EXPECT_EQ(w.work_before_first_step, 1u);
  EXPECT_EQ(w.figures.work, 4u);
  EXPECT_EQ(w.figures.wall_ns, 1300 - 10);
  EXPECT_EQ(w.figures.busy_ns, 10 + 200 + 100);
  EXPECT_EQ(w.figures.compute_busy_ns, 10 + 150 + 100);
  EXPECT_EQ(w.figures.idle_ns, 1290 - 310);
  EXPECT_DOUBLE_EQ(w.figures.utilization, 260.0 / 1290);
  EXPECT_EQ(StepWindowName(w), "over 3 complete profiler steps (ProfilerStep#5\u2013#7), as HTA");
  // Step 6 ([500, 900)) launched nothing: no row.
  ASSERT_EQ(w.per_step.size(), 2u);
  EXPECT_EQ(w.per_step[0].step, 5);
  EXPECT_EQ(w.per_step[0].figures.wall_ns, 200);
  EXPECT_EQ(w.per_step[0].figures.idle_ns, 0);
  EXPECT_EQ(w.per_step[1].step, 7);
  EXPECT_EQ(w.per_step[1].figures.idle_ns, 0);
  EXPECT_EQ(w.per_step[1].figures.busy_ns, 100);
}

TEST(ProfilerSteps, FewerThanTwoStepNumbersIsNoWindow) {
  ProfilerStepAccounting acc;
  acc.Enable({{1, 0, 100}, {1, 0, 100}});
  EXPECT_FALSE(acc.enabled());
  acc.AddCall(1, 10);
  acc.AddWork(Work(1, 20, 30));
  EXPECT_TRUE(acc.Finish().empty());
}

}  // namespace
}  // namespace gs::analyzer
