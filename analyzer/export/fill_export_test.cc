// How full the kernels kept the device, in the trace-event exports of an agent trace: kernels carry
// their launch configuration and devices their SM limits under the PyTorch profiler's names, the
// Chrome export draws an "SM coverage" counter, and the Kineto export read back by gsanalyze gives
// the same fill figures. The trace is testing::WriteSizedTrace (trace_files.h): its numbers below
// are worked out from what it says.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/export/kineto_export.h"
#include "analyzer/json/json_value.h"
#include "analyzer/report/report.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

constexpr int kSteps = 10;
constexpr double kT0Us = 5'000'000;  // the trace's first step, in µs
// Covered: per step 1 ms × 1/132 (tiny_kernel) + 1 ms × 1 (register_bound).
constexpr TimeNs kCoveredNs = 10'075'758;  // llround(10 × (1e6 / 132 + 1e6))
// Estimated occupancy: per step 1 ms × 1/1056 + 1 ms × 0.5.
constexpr TimeNs kOccupiedNs = 5'009'470;  // llround(10 × (1e6 / 1056 + 5e5))

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/fill_export_test_", getpid(), "_", name);
}

class FillExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("sized.gstrace");
    ASSERT_EQ(testing::WriteSizedTrace(path_, kSteps), "");
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

Json Parse(const std::string& text) {
  absl::StatusOr<Json> j = Json::Parse(text);
  EXPECT_TRUE(j.ok()) << j.status() << "\n" << text.substr(0, 2000);
  return j.ok() ? *j : Json();
}

std::vector<int64_t> Ints(const Json& array) {
  std::vector<int64_t> out;
  for (const Json& v : array.items()) out.push_back(v.as_int());
  return out;
}

// Both kernels' args, as the PyTorch profiler names them (the same in both dialects).
void ExpectLaunchArgs(const Json& root, const std::string& kernel_category) {
  int tiny = 0, big = 0;
  for (const Json& e : root["traceEvents"].items()) {
    if (e["ph"].as_string() != "X" || e["cat"].as_string() != kernel_category) continue;
    const Json& args = e["args"];
    if (e["name"].as_string() == "tiny_kernel") {
      ++tiny;
      EXPECT_EQ(Ints(args["grid"]), (std::vector<int64_t>{1, 1, 1}));
      EXPECT_EQ(Ints(args["block"]), (std::vector<int64_t>{256, 1, 1}));
      EXPECT_EQ(args["registers per thread"].as_int(), 32);
      EXPECT_EQ(args["shared memory"].as_int(), 2048 + 4096);  // static + dynamic
    } else if (e["name"].as_string() == "register_bound") {
      ++big;
      EXPECT_EQ(Ints(args["grid"]), (std::vector<int64_t>{264, 1, 1}));
      EXPECT_EQ(Ints(args["block"]), (std::vector<int64_t>{1024, 1, 1}));
      EXPECT_EQ(args["registers per thread"].as_int(), 64);
      EXPECT_EQ(args["shared memory"].as_int(), 0);
    }
  }
  EXPECT_EQ(tiny, kSteps);
  EXPECT_EQ(big, kSteps);
}

TEST_F(FillExportTest, ChromeKernelsCarryTheirLaunchAndDevicesAnSmCoverageCounter) {
  std::ostringstream out;
  absl::StatusOr<ChromeExportStats> stats = ExportChromeTrace(path_, &out);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const Json root = Parse(out.str());
  ExpectLaunchArgs(root, "kernel");
  struct Sample {
    double ts_us, share;
  };
  std::vector<Sample> samples;
  for (const Json& e : root["traceEvents"].items()) {
    if (e["ph"].as_string() != "C") continue;
    EXPECT_EQ(e["name"].as_string(), "SM coverage");
    EXPECT_EQ(e["pid"].as_int(), GpuPid(0));
    samples.push_back({e["ts"].as_double(), e["args"]["share"].as_double()});
  }
  // Per step: 1/132 from tiny_kernel's start, 0 from its end (nothing runs until the next one),
  // 1 from register_bound's start, 0 from its end.
  ASSERT_EQ(samples.size(), 4u * kSteps);
  EXPECT_EQ(stats->fill_samples, samples.size());
  const Sample first_step[] = {{kT0Us + 10, 1.0 / 132}, {kT0Us + 1010, 0}, {kT0Us + 1500, 1}, {kT0Us + 2500, 0}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(samples[i].ts_us, first_step[i].ts_us, 1e-6) << i;
    EXPECT_NEAR(samples[i].share, first_step[i].share, 1e-8) << i;  // six significant digits
  }
  // The track's integral is the report's covered time.
  double covered_ns = 0;
  for (size_t i = 0; i + 1 < samples.size(); ++i)
    covered_ns += samples[i].share * (samples[i + 1].ts_us - samples[i].ts_us) * 1000;
  EXPECT_EQ(samples.back().share, 0);
  EXPECT_NEAR(covered_ns, static_cast<double>(kCoveredNs), 1.0);
  absl::StatusOr<Analysis> analysis = AnalyzeTraces({path_});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->devices.at(0).sm_coverage_busy_ns, kCoveredNs);
}

TEST_F(FillExportTest, KinetoDevicesCarryTheirSmLimits) {
  std::ostringstream out;
  ASSERT_TRUE(ExportKinetoTrace(path_, &out).ok());
  const Json root = Parse(out.str());
  ExpectLaunchArgs(root, "kernel");
  ASSERT_EQ(root["deviceProperties"].size(), 1u);
  const Json& d = root["deviceProperties"].items()[0];
  EXPECT_EQ(d["name"].as_string(), "H100");
  const struct {
    const char* name;
    int64_t value;
  } limits[] = {{"numSms", 132},
                {"computeMajor", 9},
                {"computeMinor", 0},
                {"maxThreadsPerBlock", 1024},
                {"maxThreadsPerMultiprocessor", 2048},
                {"regsPerBlock", 65536},
                {"regsPerMultiprocessor", 65536},
                {"warpSize", 32},
                {"sharedMemPerBlock", 49152},
                {"sharedMemPerBlockOptin", 232448},
                {"sharedMemPerMultiprocessor", 233472}};
  for (const auto& l : limits) {
    ASSERT_TRUE(d.Has(l.name)) << l.name;
    EXPECT_EQ(d[l.name].as_int(), l.value) << l.name;
  }
  // The counter is the Chrome export's: a file HTA reads keeps to what Kineto writes.
  for (const Json& e : root["traceEvents"].items()) EXPECT_NE(e["ph"].as_string(), "C");
}

// `gsanalyze export --kineto` of the agent trace, read back by gsanalyze: the same devices[] fill
// figures and the same kernel_configs[] (but their launch sites: the export's calls carry their
// stacks as an arg the importer does not read, and PyTorch's own sites are its cpu_op events).
TEST_F(FillExportTest, KinetoExportReadBackGivesTheSameFill) {
  const std::string exported = TempPath("sized.kineto.json");
  {
    std::ofstream out(exported, std::ios::trunc);
    ASSERT_TRUE(ExportKinetoTrace(path_, &out).ok());
  }
  absl::StatusOr<Analysis> original = AnalyzeTraces({path_});
  absl::StatusOr<Analysis> read_back = AnalyzeTraces({exported});
  std::remove(exported.c_str());
  ASSERT_TRUE(original.ok()) << original.status();
  ASSERT_TRUE(read_back.ok()) << read_back.status();
  ASSERT_EQ(read_back->devices.size(), 1u);
  for (const Analysis* a : {&*original, &*read_back}) {
    const DeviceSummary& d = a->devices.at(0);
    ASSERT_TRUE(d.has_fill);
    EXPECT_TRUE(d.has_occupancy);
    EXPECT_EQ(d.sm_coverage_busy_ns, kCoveredNs);
    EXPECT_EQ(d.est_occupancy_busy_ns, kOccupiedNs);
    // The wall: the first launch to the last kernel's end, 9 steps of 3 ms and 2.5 ms.
    EXPECT_EQ(d.wall_ns, 29'500'000);
    ASSERT_EQ(a->kernel_configs.size(), 2u);
    const KernelConfigStats& tiny = a->kernel_configs[0];
    EXPECT_EQ(tiny.name, "tiny_kernel");
    EXPECT_EQ(tiny.underfilled_ns, 9'924'242);  // llround(10 × 1 ms × 131/132)
    EXPECT_EQ(tiny.occupancy.active_blocks, 8);
    EXPECT_EQ(tiny.occupancy.limiters, kLimitWarps | kLimitRegisters);
    EXPECT_EQ(tiny.fill.waves, 1);
    const KernelConfigStats& big = a->kernel_configs[1];
    EXPECT_EQ(big.name, "register_bound");
    EXPECT_EQ(big.underfilled_ns, 0);
    EXPECT_EQ(big.occupancy.active_blocks, 1);
    EXPECT_EQ(big.occupancy.limiters, static_cast<uint32_t>(kLimitRegisters));
    EXPECT_EQ(big.fill.waves, 2);
  }
  // The report's JSON of both, the fill figures and kernel_configs[] without their launch sites.
  auto fill_json = [](const Analysis& a) {
    const Json report = Parse(JsonReportFormat().Render(a, ReportOptions()));
    Json out = Json::Object();
    const Json& d = report["devices"].items().at(0);
    for (const char* k : {"sm_coverage_busy_ns", "sm_coverage_utilization", "est_occupancy_busy_ns",
                          "est_occupancy_utilization", "utilization", "wall_ns"})
      out.Set(k, d[k]);
    Json configs = Json::Array();
    for (const Json& k : report["kernel_configs"].items()) {
      Json row = Json::Object();
      for (const auto& [key, value] : k.members())
        if (key != "stacks") row.Set(key, value);
      configs.Push(std::move(row));
    }
    out.Set("kernel_configs", std::move(configs));
    return out.Dump();
  };
  EXPECT_EQ(fill_json(*read_back), fill_json(*original));
}

}  // namespace
}  // namespace gs::analyzer
