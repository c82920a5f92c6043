// `gsanalyze report`: analyse, render, apply --fail-under.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/analysis/units.h"
#include "analyzer/cli/commands.h"
#include "analyzer/report/report.h"

namespace gs::analyzer::cli {

namespace {
int TerminalWidth() {
  if (const char* cols = std::getenv("COLUMNS")) {
    int w;
    if (absl::SimpleAtoi(cols, &w) && w >= 40) return w;
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 100;
}
}  // namespace

int RunReport(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Analysis> analysis = AnalyzeTraces(args.traces);
  if (!analysis.ok()) {
    err << "gsanalyze: " << analysis.status().message() << "\n";
    return kExitBadInput;
  }
  for (const std::string& w : analysis->warnings) err << "gsanalyze: warning: " << w << "\n";
  ReportOptions options;
  options.width = args.width > 0 ? args.width : TerminalWidth();
  const ReportFormat* format = FindReportFormat(args.format);
  if (format == nullptr) {  // ParseArgs checks; kept for callers that build CliArgs themselves
    err << "gsanalyze: unknown format '" << args.format << "'\n";
    return kExitBadInput;
  }
  out << format->Render(*analysis, options);
  out.flush();
  if (args.fail_under && analysis->SteadyUtilization() < *args.fail_under) {
    err << "gsanalyze: steady-state GPU-Util " << FormatPercent(analysis->SteadyUtilization())
        << " is below --fail-under " << FormatPercent(*args.fail_under) << "\n";
    return kExitBelowThreshold;
  }
  return kExitOk;
}

}  // namespace gs::analyzer::cli
