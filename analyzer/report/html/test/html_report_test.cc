#include "analyzer/report/html/html_report.h"

#include "absl/strings/match.h"
#include "analyzer/json/json_value.h"
#include "analyzer/report/report.h"
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

}  // namespace
}  // namespace gs::analyzer::html
