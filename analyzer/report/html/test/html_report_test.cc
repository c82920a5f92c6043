#include "analyzer/report/html/html_report.h"

#include "absl/strings/match.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/json/json_value.h"
#include "analyzer/report/html/test/record_pass.h"
#include "analyzer/report/report.h"
#include "analyzer/result/analysis_builder.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer::html {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

std::string Between(const std::string& page, const std::string& open, const std::string& close) {
  size_t a = page.find(open);
  if (a == std::string::npos) return "";
  a += open.size();
  return page.substr(a, page.find(close, a) - a);
}

Analysis HostileAnalysis() {
  testing::SyntheticTrace t;
  // Function names are data: one that would end a <script> element must not.
  uint32_t stack = t.Stack({"</script><b>x</b>@a.py:1", "main"});
  for (int i = 0; i < 5; ++i) t.Launch(1, i * 1'000'000, i * 1'000'000 + 5'000, i * 1'000'000 + 10'000, i * 1'000'000 + 300'000, stack);
  return t.Analyze();
}

TEST(HtmlPageTest, IsSelfContainedAndScriptSafe) {
  Analysis a = HostileAnalysis();
  Timeline timeline;
  std::string page = RenderHtmlPage(a, timeline, "<trace & title>");
  // Four scripts (error recorder, two JSON documents, the renderer) and nothing fetched.
  EXPECT_EQ(Count(page, "</script>"), 4u);
  EXPECT_EQ(Count(page, "<script"), 4u);
  EXPECT_FALSE(absl::StrContains(page, "src="));
  EXPECT_FALSE(absl::StrContains(page, "http://"));
  EXPECT_FALSE(absl::StrContains(page, "https://"));
  EXPECT_FALSE(absl::StrContains(page, "@GS_"));
  EXPECT_TRUE(absl::StrContains(page, "&lt;trace &amp; title&gt;"));
  // The embedded report is the JSON report with the flame graph's tree options.
  std::string json = Between(page, "<script type=\"application/json\" id=\"gs-report\">", "</script>");
  absl::StatusOr<Json> embedded = Json::Parse(json);
  ASSERT_TRUE(embedded.ok()) << embedded.status();
  ReportOptions o;
  HtmlReportOptions h;
  o.tree_depth = h.flame_depth;
  o.tree_min_share = h.flame_min_share;
  absl::StatusOr<Json> direct = Json::Parse(JsonReportFormat().Render(a, o));
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(embedded->Dump(0), direct->Dump(0));
  EXPECT_EQ((*embedded)["stack_tree"]["children"].items()[0]["children"].items()[0]["function"].as_string(),
            "</script><b>x</b>");
}

// Busy is not full: what the page shows of it comes in its two documents. On a 4-SM device, a
// 1-block kernel (1/4 of the SMs) runs 20 µs, then a 4-block one (all of them) 20 µs; the trace
// spans 60 µs from the first call.
TEST(HtmlPageTest, CarriesHowFullTheKernelsKeptTheDevice) {
  testing::SyntheticTrace t;
  t.AddDevice(0, 4);
  const uint32_t small = t.Stack({"cudaLaunchKernel", "launch_small@s.py:3", "main"});
  const uint32_t big = t.Stack({"cudaLaunchKernel", "launch_big@s.py:9", "main"});
  t.Launch(1, 0, 5'000, 10'000, 30'000, small);
  t.activities().back().launch_config = t.Config(1, 128);
  t.Launch(1, 30'000, 35'000, 40'000, 60'000, big);
  t.activities().back().launch_config = t.Config(4, 128);
  Timeline timeline;
  const std::string page = RenderHtmlPage(RecordPass(t, &timeline, t.info().devices), timeline, "fill");
  // Where the renderer puts the figures.
  EXPECT_TRUE(absl::StrContains(page, "<div id=\"devices\">"));
  EXPECT_TRUE(absl::StrContains(page, "<div id=\"kernels\">"));

  absl::StatusOr<Json> report = Json::Parse(Between(page, "<script type=\"application/json\" id=\"gs-report\">", "</script>"));
  ASSERT_TRUE(report.ok()) << report.status();
  // Covered: 20 µs × 1/4 + 20 µs × 1 = 25 µs of the 60 µs wall; GPU-Util 40 of 60.
  const Json& device = (*report)["devices"].items().at(0);
  EXPECT_EQ(device["sm_coverage_busy_ns"].as_int(), 25'000);
  EXPECT_NEAR(device["sm_coverage_utilization"].as_double(), 25.0 / 60, 1e-6);  // JSON keeps 6 digits
  EXPECT_NEAR(device["utilization"].as_double(), 40.0 / 60, 1e-6);
  EXPECT_EQ(device["est_occupancy_utilization"].type(), Json::Type::kNull) << "no SM limits: no occupancy";
  // The under-filled kernels: the 1-block one left 3/4 of the device empty for 20 µs, first.
  const std::vector<Json>& configs = (*report)["kernel_configs"].items();
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0]["underfilled_ns"].as_int(), 15'000);
  EXPECT_EQ(configs[0]["grid"].items()[0].as_int(), 1);
  EXPECT_EQ(configs[0]["block"].items()[0].as_int(), 128);
  EXPECT_DOUBLE_EQ(configs[0]["wave_coverage"].as_double(), 0.25);
  EXPECT_EQ(configs[0]["sms"].as_int(), 4);
  // Its launch site: the stack's first frame of the user's code, past the runtime's.
  const Json& site = configs[0]["stacks"].items().at(0);
  ASSERT_EQ(site["site"].as_int(), 1);
  EXPECT_EQ(site["frames"].items().at(1)["function"].as_string(), "launch_small");
  EXPECT_EQ(configs[1]["underfilled_ns"].as_int(), 0);

  absl::StatusOr<Json> lanes = Json::Parse(Between(page, "<script type=\"application/json\" id=\"gs-timeline\">", "</script>"));
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  const Json& lane = (*lanes)["lanes"].items().at(0);
  ASSERT_EQ(lane["kind"].as_string(), "device");
  // The same 15 µs on the timeline: kernel time (40 µs) less covered time (25 µs).
  EXPECT_EQ(lane["underfilled_ns"].as_int(), 15'000);
}

}  // namespace
}  // namespace gs::analyzer::html
