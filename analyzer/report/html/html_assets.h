// html_assets.h — the page template, style sheet and script of the HTML report, compiled into
// gsanalyze from assets/ at build time (embed_assets.cmake writes html_assets.cc), so that the
// report is one self-contained file and the binary needs no data files next to it.
#ifndef GPUSTALL_ANALYZER_REPORT_HTML_HTML_ASSETS_H_
#define GPUSTALL_ANALYZER_REPORT_HTML_HTML_ASSETS_H_

#include <string_view>

namespace gs::analyzer::html {

extern const std::string_view kReportHtml;  // assets/report.html: the page, with @GS_*@ slots
extern const std::string_view kReportCss;   // assets/report.css
extern const std::string_view kReportJs;    // assets/report.js

}  // namespace gs::analyzer::html

#endif  // GPUSTALL_ANALYZER_REPORT_HTML_HTML_ASSETS_H_
