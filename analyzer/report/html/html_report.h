// html_report.h — `gsanalyze html`: one self-contained HTML file (no network fetches at view time)
// with the device timeline (how full the kernels kept each device shaded in its busy time), the
// host threads under it, a flame graph of idle time by host stack, the cause breakdown, the
// devices' SM coverage beside GPU-Util, the under-filled kernels, copy and memory panels and the
// recommendations.
//
// The page carries two JSON documents and a small renderer (assets/report.js):
//   "report"    the JSON report itself (analyzer/JSON.md), rendered by JsonReportFormat from the
//               same Analysis as `gsanalyze report --json` — every number in the panels comes
//               from it; only the stack tree is kept deeper and finer for the flame graph;
//   "timeline"  the decimated lanes (timeline.h), recorded while the same pass feeds the analysis.
// The page computes nothing: `gsanalyze html` (cli/commands/html_command.cc) runs the one pass over the
// traces with a TimelineObserver (timeline.h) registered on it, then renders the Analysis and the
// Timeline here. Memory: the analysis' own, plus the bucket grid and at most
// TimelineOptions::max_exact_segments segments.
//
// Thread safety: none (plain functions).
#ifndef GPUSTALL_ANALYZER_REPORT_HTML_HTML_REPORT_H_
#define GPUSTALL_ANALYZER_REPORT_HTML_HTML_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/result/analysis.h"
#include "analyzer/options/options.h"
#include "analyzer/report/html/timeline.h"

namespace gs::analyzer::html {

struct HtmlReportOptions {
  AnalysisOptions analysis;
  TimelineOptions timeline;
  // The flame graph's tree: deeper than the JSON report's default (Python stacks are deep) and
  // down to 0.1% of idle time (narrower frames are under a pixel wide anyway).
  size_t flame_depth = 64;
  double flame_min_share = 0.001;
};

// The page for an analysis and its timeline (what `gsanalyze html` writes; tests call it with
// synthetic analyses). `title` is plain text.
std::string RenderHtmlPage(const Analysis& analysis, const Timeline& timeline, const std::string& title,
                           const HtmlReportOptions& options = HtmlReportOptions());

}  // namespace gs::analyzer::html

#endif  // GPUSTALL_ANALYZER_REPORT_HTML_HTML_REPORT_H_
