// html_report.h — `gsanalyze html`: one self-contained HTML file (no network fetches at view time)
// with the device timeline, the host threads under it, a flame graph of idle time by host stack,
// the cause breakdown, copy and memory panels and the recommendations.
//
// The page carries two JSON documents and a small renderer (assets/report.js):
//   "report"    the JSON report itself (analyzer/JSON.md), rendered by JsonReportFormat from the
//               same Analysis as `gsanalyze report --json` — every number in the panels comes
//               from it; only the stack tree is kept deeper and finer for the flame graph;
//   "timeline"  the decimated lanes (timeline.h), recorded while the same pass feeds the analysis.
// One streaming pass per trace, AnalyzeTraces' own (a TraceWatcher): records -> TimelineRecorder
// -> TraceAnalyzer, whose interval observer hands each idle interval to the timeline. Memory: the analysis' own, plus the bucket
// grid and at most TimelineOptions::max_exact_segments segments.
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
#include "analyzer/analysis/analyze_traces.h"
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

struct HtmlReportStats {
  uint64_t bytes = 0;            // of the page
  uint64_t records = 0;          // records read
  size_t lanes = 0;              // timeline lanes drawn
  bool exact = true;             // the timeline kept every segment (else buckets only)
  size_t exact_segments = 0;
  TimeNs idle_ns = 0;            // steady-state idle over all devices
};

// Analyses `paths` (errors as AnalyzeTraces': bad input, one line naming the file) and writes
// the page to `out`. `warnings` receives the analysis' warnings (damaged files) when non-null;
// `progress` is AnalyzeTraces' (the one pass over each file feeds the analysis and the timeline).
absl::StatusOr<HtmlReportStats> WriteHtmlReport(const std::vector<std::string>& paths, std::ostream* out,
                                                const HtmlReportOptions& options = HtmlReportOptions(),
                                                std::vector<std::string>* warnings = nullptr,
                                                const AnalyzeProgress& progress = AnalyzeProgress());

// The page for an analysis and its timeline (what WriteHtmlReport writes; tests call it with
// synthetic analyses). `title` is plain text.
std::string RenderHtmlPage(const Analysis& analysis, const Timeline& timeline, const std::string& title,
                           const HtmlReportOptions& options = HtmlReportOptions());

}  // namespace gs::analyzer::html

#endif  // GPUSTALL_ANALYZER_REPORT_HTML_HTML_REPORT_H_
