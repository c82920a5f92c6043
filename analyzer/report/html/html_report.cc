#include "analyzer/report/html/html_report.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analyzer/report/html/html_assets.h"
#include "analyzer/report/report.h"

namespace gs::analyzer::html {

namespace {

// JSON inside <script type="application/json">: a "</script>" (or "<!--") in a function name
// must not end the element. '<' occurs only inside JSON strings, where \u003c means the same.
std::string ScriptSafe(const std::string& json) { return absl::StrReplaceAll(json, {{"<", "\\u003c"}}); }

// Debian's Abseil has its own string_view (not std's): the embedded assets are std::string_view.
absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string HtmlText(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

}  // namespace

std::string RenderHtmlPage(const Analysis& analysis, const Timeline& timeline, const std::string& title,
                           const HtmlReportOptions& options) {
  ReportOptions report_options;
  report_options.tree_depth = options.flame_depth;
  report_options.tree_min_share = options.flame_min_share;
  const std::string report = JsonReportFormat().Render(analysis, report_options);
  const std::string safe_title = HtmlText(title), safe_report = ScriptSafe(report),
                    safe_timeline = ScriptSafe(timeline.ToJson());
  // One pass over the template: what is substituted is not searched again.
  return absl::StrReplaceAll(Absl(kReportHtml), std::vector<std::pair<absl::string_view, absl::string_view>>{
                                              {"@GS_TITLE@", safe_title},
                                              {"@GS_STYLE@", Absl(kReportCss)},
                                              {"@GS_REPORT@", safe_report},
                                              {"@GS_TIMELINE@", safe_timeline},
                                              {"@GS_SCRIPT@", Absl(kReportJs)}});
}

}  // namespace gs::analyzer::html
