// `gsanalyze html TRACE... -o report.html`: the self-contained HTML report (report/html/).
#include <cstdio>
#include <fstream>

#include "analyzer/units/units.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/progress.h"
#include "analyzer/report/html/html_report.h"

namespace gs::analyzer::cli {

int RunHtml(const CliArgs& args, std::ostream& out, std::ostream& err) {
  std::ofstream file(args.html_out, std::ios::binary | std::ios::trunc);
  if (!file) {
    err << "gsanalyze: cannot write " << args.html_out << "\n";
    return kExitBadInput;
  }
  std::vector<std::string> warnings;
  ProgressLine progress(&err, args.progress);  // on a terminal only; erased before the summary
  absl::StatusOr<html::HtmlReportStats> stats =
      html::WriteHtmlReport(args.traces, &file, {}, &warnings, [&](size_t i, uint64_t read, uint64_t size) {
        progress.Update(i, args.traces.size(), args.traces[i], read, size);
      });
  progress.Finish();
  file.close();
  if (stats.ok() && !file) stats = absl::InternalError("write failed: " + args.html_out);
  if (!stats.ok()) {
    err << "gsanalyze: " << stats.status().message() << "\n";
    std::remove(args.html_out.c_str());  // no half-written page for a browser to choke on
    return kExitBadInput;
  }
  for (const std::string& w : warnings) err << "gsanalyze: warning: " << w << "\n";
  out << "wrote " << args.html_out << ": " << stats->bytes / 1024 << " KiB, " << stats->records << " records, "
      << stats->lanes << " timeline lanes ("
      << (stats->exact ? "every segment kept" : "decimated to buckets: over the exact-segment budget") << "), "
      << FormatDuration(stats->idle_ns) << " of steady-state idle\n";
  return kExitOk;
}

}  // namespace gs::analyzer::cli
