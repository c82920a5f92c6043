#include "analyzer/report/html/html_report.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/model/importer.h"
#include "analyzer/report/html/html_assets.h"
#include "analyzer/report/report.h"

namespace gs::analyzer::html {

namespace {

// JSON inside <script type="application/json">: a "</script>" (or "<!--") in a function name
// must not end the element. '<' occurs only inside JSON strings, where \u003c means the same.
std::string ScriptSafe(const std::string& json) { return absl::StrReplaceAll(json, {{"<", "\\u003c"}}); }

// Debian's Abseil has its own string_view (not std's): the embedded assets are std::string_view.
absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The timeline's view of AnalyzeTraces' pass: a TimelineRecorder in front of each trace's
// analyzer, fed its idle intervals by the analyzer's observer.
class TimelineWatcher final : public TraceWatcher {
 public:
  TimelineWatcher(Timeline* timeline, size_t traces) : timeline_(timeline), traces_(traces) {}

  RecordSink* BeginTrace(size_t index, const TraceImporter& importer, TraceAnalyzer* analyzer) override {
    recorder_ = std::make_unique<TimelineRecorder>(timeline_, index, importer.tables(), analyzer);
    TimelineRecorder* recorder = recorder_.get();
    analyzer->set_interval_observer(
        [recorder](uint32_t device, const IntervalVerdict& v) { recorder->OnInterval(device, v); });
    return recorder;
  }
  void EndTrace(size_t, const TraceImporter& importer) override {
    recorder_->Finish(traces_ > 1 ? importer.info().Label() : std::string(), importer.info().devices);
    recorder_.reset();
  }

 private:
  Timeline* timeline_;
  size_t traces_;
  std::unique_ptr<TimelineRecorder> recorder_;
};

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

absl::StatusOr<HtmlReportStats> WriteHtmlReport(const std::vector<std::string>& paths, std::ostream* out,
                                                const HtmlReportOptions& options,
                                                std::vector<std::string>* warnings,
                                                const AnalyzeProgress& progress) {
  Timeline timeline(options.timeline);
  TimelineWatcher watcher(&timeline, paths.size());
  AnalyzeHooks hooks;
  hooks.progress = progress;
  hooks.watcher = &watcher;
  absl::StatusOr<Analysis> analyzed = AnalyzeTraces(paths, options.analysis, hooks);
  if (!analyzed.ok()) return analyzed.status();
  Analysis analysis = std::move(*analyzed);
  if (warnings) *warnings = analysis.warnings;

  std::string title = "gpustall report";
  if (paths.size() == 1) absl::StrAppend(&title, ": ", paths[0]);
  else absl::StrAppend(&title, ": ", paths.size(), " traces");
  const std::string page = RenderHtmlPage(analysis, timeline, title, options);
  out->write(page.data(), static_cast<std::streamsize>(page.size()));
  if (!*out) return absl::InternalError("write failed");

  HtmlReportStats stats;
  stats.bytes = page.size();
  stats.records = analysis.events;
  stats.lanes = timeline.lanes();
  stats.exact = timeline.exact();
  stats.exact_segments = timeline.exact_segments();
  stats.idle_ns = analysis.steady_idle_ns;
  return stats;
}

}  // namespace gs::analyzer::html
