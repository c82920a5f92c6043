// `gsanalyze report --what-if`: the replay check and each recommendation's prediction, in the text
// and the JSON report; the same whatever the jobs; nothing of it without the flag.
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/commands/run_command_for_test.h"
#include "analyzer/json/json_value.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

Ran Report(const std::vector<std::string>& argv) { return RunCommand(&RunReport, argv); }

class WhatIfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestCaseFolder("what_if.");
    starved_ = dir_ + "/starved.gstrace";
    ASSERT_EQ(testing::WriteStarvedTrace(starved_), "");
  }
  std::string dir_, starved_;
};

TEST_F(WhatIfTest, TheJsonReportHasTheReplayCheckAndTheInputPipelinesPrediction) {
  const Ran r = Report({"report", "--what-if", "--json", "--jobs", "1", starved_});
  ASSERT_EQ(r.exit, 0) << r.err;
  absl::StatusOr<Json> j = Json::Parse(r.out);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(j->Has("replay"));
  const Json& replay = (*j)["replay"];
  EXPECT_TRUE(replay["ok"].as_bool()) << r.out;
  EXPECT_EQ(replay["measured_step_ns"].as_int(), 0);  // no profiler steps, one trace
  EXPECT_DOUBLE_EQ(replay["tolerance"].as_double(), 0.03);
  EXPECT_LE(std::abs(replay["wall_error"].as_double()), 0.03);
  EXPECT_GT(replay["measured_wall_ns"].as_int(), 0);
  EXPECT_EQ(replay["reason"].as_string(), "");
  bool predicted = false;
  for (const Json& rec : (*j)["recommendations"].items()) {
    if (rec["kind"].as_string() != "input_pipeline") continue;
    ASSERT_TRUE(rec.Has("prediction")) << r.out;
    const Json& p = rec["prediction"];
    EXPECT_EQ(p["wall_ns_before"].as_int(), replay["measured_wall_ns"].as_int());
    // The starved trace's device waits on the host most of the time: a fix shortens the run and
    // fills the device, and free input preparation is the bound of any number of workers.
    EXPECT_LT(p["wall_ns"].as_int(), p["wall_ns_before"].as_int());
    EXPECT_GT(p["utilization"].as_double(), p["utilization_before"].as_double());
    EXPECT_GE(p["workers"].as_int(), 1);
    EXPECT_LE(p["bound_wall_ns"].as_int(), p["wall_ns"].as_int());
    predicted = true;
  }
  EXPECT_TRUE(predicted) << r.out;
}

TEST_F(WhatIfTest, TheTextReportSaysWhatEachFixBuysAndWhetherTheReplayHeld) {
  const Ran r = Report({"report", "--what-if", "--width", "100", starved_});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_NE(r.out.find("What-if (replayed): run "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Replay check: the traces' dependencies replay to"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("so each recommendation shows what it would buy"), std::string::npos) << r.out;
}

TEST_F(WhatIfTest, AnAgentTraceWhoseNvtxRangesMarkItsStepsGetsTheStepPredicted) {
  // No profiler steps: the loop's own "train_step N" ranges mark the steps (whatif/nvtx_steps.h).
  const std::string marked = dir_ + "/marked.gstrace";
  ASSERT_EQ(testing::WriteStarvedTraceWithStepRanges(marked), "");
  const Ran r = Report({"report", "--what-if", "--json", "--jobs", "1", marked});
  ASSERT_EQ(r.exit, 0) << r.err;
  absl::StatusOr<Json> j = Json::Parse(r.out);
  ASSERT_TRUE(j.ok()) << j.status();
  const Json& replay = (*j)["replay"];
  EXPECT_TRUE(replay["ok"].as_bool()) << r.out;
  EXPECT_EQ(replay["step_marks"].as_string(), "NVTX ranges \"train_step 0\" to \"train_step 11\"");
  // Each step of the written loop: 33 ms of loading and copying, 10 us to the first kernel, three
  // 2 ms kernels, the read-back's 30 us.
  const double step = 33e6 + 10e3 + 6e6 + 30e3;
  EXPECT_NEAR(static_cast<double>(replay["measured_step_ns"].as_int()), step, 0.01 * step);
  EXPECT_NEAR(static_cast<double>(replay["replayed_step_ns"].as_int()), step, 0.03 * step);
  bool predicted = false;
  for (const Json& rec : (*j)["recommendations"].items()) {
    if (rec["kind"].as_string() != "input_pipeline") continue;
    ASSERT_TRUE(rec.Has("prediction")) << r.out;
    const Json& p = rec["prediction"];
    EXPECT_EQ(p["step_ns_before"].as_int(), replay["measured_step_ns"].as_int());
    // Loading is 30 of the step's 39 ms: free input preparation leaves the device's 6 ms and the
    // copies' few, and never less than the device's own 6 ms.
    EXPECT_LT(p["step_ns"].as_int(), p["step_ns_before"].as_int() / 2) << p.Dump(2);
    EXPECT_GE(p["step_ns"].as_int(), 6000000) << p.Dump(2);
    predicted = true;
  }
  EXPECT_TRUE(predicted) << r.out;
  const Ran text = Report({"report", "--what-if", "--width", "200", marked});
  ASSERT_EQ(text.exit, 0) << text.err;
  EXPECT_NE(text.out.find("(steps marked by NVTX ranges \"train_step 0\" to \"train_step 11\": "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(", step 39.0 ms -> "), std::string::npos) << text.out;
}

TEST_F(WhatIfTest, WithoutTheFlagTheReportHasNoneOfIt) {
  const Ran r = Report({"report", "--json", starved_});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out.find("\"replay\""), std::string::npos);
  EXPECT_EQ(r.out.find("\"prediction\""), std::string::npos);
  const Ran text = Report({"report", starved_});
  EXPECT_EQ(text.out.find("What-if"), std::string::npos);
}

TEST_F(WhatIfTest, TheReportIsTheSameWhateverTheJobs) {
  ASSERT_EQ(testing::WriteHealthyTrace(dir_ + "/healthy.gstrace"), "");
  for (const char* format : {"--json", "--format=text"}) {
    const Ran one = Report({"report", "--what-if", format, "--jobs", "1", starved_, dir_ + "/healthy.gstrace"});
    const Ran two = Report({"report", "--what-if", format, "--jobs", "2", starved_, dir_ + "/healthy.gstrace"});
    ASSERT_EQ(one.exit, 0) << one.err;
    EXPECT_EQ(one.out, two.out) << format;
  }
}

TEST_F(WhatIfTest, DiffSetsTheBeforeSidesPredictionsAgainstTheAfterSide) {
  // The starved run "fixed" into the healthy one: the before side predicted its input
  // recommendation; the after side no longer has it and is measured by the same measure.
  ASSERT_EQ(testing::WriteHealthyTrace(dir_ + "/healthy.gstrace"), "");
  const Ran json = RunCommand(&RunDiff, {"diff", "--what-if", "--json", starved_, dir_ + "/healthy.gstrace"});
  ASSERT_EQ(json.exit, 0) << json.err;
  const std::string out = json.out;
  absl::StatusOr<Json> j = Json::Parse(out);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(j->Has("what_if")) << out;
  const Json& w = (*j)["what_if"];
  EXPECT_TRUE(w["replay_ok"].as_bool());
  ASSERT_GE(w["predictions"].size(), 1u) << out;
  bool input = false;
  for (const Json& p : w["predictions"].items()) {
    EXPECT_GT(p["wall_ns_after"].as_int(), 0);
    EXPECT_LT(p["wall_ns_predicted"].as_int(), p["wall_ns_before"].as_int());
    const double error = static_cast<double>(p["wall_ns_predicted"].as_int() - p["wall_ns_after"].as_int()) /
                         static_cast<double>(p["wall_ns_after"].as_int());
    EXPECT_NEAR(p["wall_error"].as_double(), error, 1e-6);  // JSON keeps 6 significant digits
    if (p["kind"].as_string() == "input_pipeline") {
      input = true;
      EXPECT_FALSE(p["still_recommended"].as_bool());
    }
  }
  EXPECT_TRUE(input) << out;
  const Ran text = RunCommand(&RunDiff, {"diff", "--what-if", starved_, dir_ + "/healthy.gstrace"});
  ASSERT_EQ(text.exit, 0) << text.err;
  EXPECT_NE(text.out.find("What-if: the before side's predictions against the after side"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("no longer recommended after"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(prediction "), std::string::npos) << text.out;
  // Without the flag: none of it.
  const Ran plain = RunCommand(&RunDiff, {"diff", starved_, dir_ + "/healthy.gstrace"});
  ASSERT_EQ(plain.exit, 0) << plain.err;
  EXPECT_EQ(plain.out.find("What-if"), std::string::npos);
}

TEST(WhatIfStepsTest, APyTorchTraceWithProfilerStepsGetsItsStepPredicted) {
  // A real trace with ProfilerStep#N ranges: the mean complete step, measured and with each fix,
  // beside the run (the synthetic traces above have no steps: no step figures).
  const std::string trace = std::string(GS_KINETO_TESTDATA) + "/v100_resnet50_workers4.pt.trace.json.gz";
  const Ran r = Report({"report", "--what-if", "--json", trace});
  ASSERT_EQ(r.exit, 0) << r.err;
  absl::StatusOr<Json> j = Json::Parse(r.out);
  ASSERT_TRUE(j.ok()) << j.status();
  const Json& replay = (*j)["replay"];
  ASSERT_TRUE(replay["ok"].as_bool()) << r.out;
  const int64_t step = replay["measured_step_ns"].as_int();
  EXPECT_GT(step, 0);
  EXPECT_LT(step, replay["measured_wall_ns"].as_int());
  // The replay reproduces the step as it does the run (within the tolerance).
  EXPECT_NEAR(static_cast<double>(replay["replayed_step_ns"].as_int()), static_cast<double>(step), 0.03 * step);
  size_t with_step = 0;
  for (const Json& rec : (*j)["recommendations"].items()) {
    if (!rec.Has("prediction")) continue;
    const Json& p = rec["prediction"];
    ASSERT_TRUE(p.Has("step_ns")) << rec.Dump(2);
    EXPECT_EQ(p["step_ns_before"].as_int(), step);
    EXPECT_GT(p["step_ns"].as_int(), 0);
    // A fix that shortens the run shortens no step more than the run.
    EXPECT_LE(step - p["step_ns"].as_int(), p["wall_ns_before"].as_int() - p["wall_ns"].as_int() + step / 100)
        << rec.Dump(2);
    ++with_step;
  }
  EXPECT_GE(with_step, 1u) << r.out;
  const Ran text = Report({"report", "--what-if", "--width", "100", trace});
  EXPECT_NE(text.out.find(", step "), std::string::npos) << text.out;
}

TEST(WhatIfStepsTest, DiffOfARealBeforeAfterPairSetsThePredictedStepAgainstTheMeasuredOne) {
  // The V100 ResNet-50 run with no input workers, then with four: the input prediction of the
  // first against the second's measured step, both from their profiler steps.
  const std::string before = std::string(GS_KINETO_TESTDATA) + "/v100_resnet50_workers0.pt.trace.json.gz";
  const std::string after = std::string(GS_KINETO_TESTDATA) + "/v100_resnet50_workers4.pt.trace.json.gz";
  const Ran r = RunCommand(&RunDiff, {"diff", "--what-if", "--json", before, after});
  ASSERT_EQ(r.exit, 0) << r.err;
  absl::StatusOr<Json> j = Json::Parse(r.out);
  ASSERT_TRUE(j.ok()) << j.status();
  bool input = false;
  for (const Json& p : (*j)["what_if"]["predictions"].items()) {
    ASSERT_TRUE(p.Has("step_ns_after")) << p.Dump(2);
    EXPECT_GT(p["step_ns_before"].as_int(), 0);
    EXPECT_GT(p["step_ns_after"].as_int(), 0);
    const double error = static_cast<double>(p["step_ns_predicted"].as_int() - p["step_ns_after"].as_int()) /
                         static_cast<double>(p["step_ns_after"].as_int());
    EXPECT_NEAR(p["step_error"].as_double(), error, 1e-5);
    input |= p["kind"].as_string() == "input_pipeline" || p["kind"].as_string() == "input_workers";
  }
  EXPECT_TRUE(input) << r.out;
}

TEST(WhatIfArgsTest, WhatIfIsAReportAndDiffFlag) {
  absl::StatusOr<CliArgs> a = ParseArgs({"report", "--what-if", "t.gstrace"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->what_if);
  EXPECT_FALSE(ParseArgs({"report", "t.gstrace"})->what_if);
  absl::StatusOr<CliArgs> diff = ParseArgs({"diff", "--what-if", "a", "b"});
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_TRUE(diff->what_if);
  absl::StatusOr<CliArgs> html = ParseArgs({"html", "--what-if", "a", "-o", "x.html"});
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_TRUE(html->what_if);
  absl::StatusOr<CliArgs> dump = ParseArgs({"dump", "--what-if", "a"});
  ASSERT_FALSE(dump.ok());
  EXPECT_NE(std::string(dump.status().message()).find("unknown option '--what-if'"), std::string::npos);
}

}  // namespace
}  // namespace gs::analyzer::cli
