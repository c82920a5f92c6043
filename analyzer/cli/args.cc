#include "analyzer/cli/args.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/report/report.h"

namespace gs::analyzer::cli {

std::string Usage() {
  return absl::StrCat(
      "usage: gsanalyze report TRACE... [--json | --format FORMAT] [--fail-under UTIL] [--width N] [--jobs N]\n"
      "                        [--what-if]\n"
      "       gsanalyze dump TRACE\n"
      "       gsanalyze export [--chrome OUT.json] [--kineto OUT.json] [--collapsed OUT.txt] TRACE\n"
      "       gsanalyze diff BEFORE AFTER [--json] [--what-if]   (several traces: BEFORE... -- AFTER...)\n"
      "       gsanalyze html TRACE_OR_DIR... -o OUT.html [--what-if]\n"
      "       gsanalyze summarize TRACE -o SUMMARY   (report merges summaries of many ranks)\n"
      "       gsanalyze export --tables DIR TRACE_OR_DIR...\n"
      "\n"
      "report   why the GPU was idle and which host code owns it (data loss first)\n"
      "         --json            the documented JSON schema (analyzer/JSON.md)\n"
      "         --format FORMAT   one of: ", absl::StrJoin(ReportFormatNames(), ", "), "\n",
      "         --fail-under UTIL exit 1 if steady-state GPU-Util is below UTIL (0.8, 80 or 80%)\n"
      "         --width N         terminal columns (default: $COLUMNS, the terminal, or 100)\n"
      "         --jobs N          threads: up to N traces at once, else up to 3 per trace (default: one\n"
      "                           per core); same report\n"
      "         --what-if         replay each trace's dependencies and predict what each recommendation\n"
      "                           buys (run time, GPU-Util), where the replay matches the trace\n"
      "dump     every record of a trace as text\n"
      "export   --chrome: Chrome trace-event JSON (Perfetto UI, chrome://tracing);\n"
      "         --kineto: the PyTorch profiler's JSON (TensorBoard, Holistic Trace Analysis);\n"
      "         --collapsed: idle ns by host stack, folded (flamegraph.pl, speedscope)\n"
      "         --tables DIR: idle intervals, stacks, per-rank summaries as CSV and JSON lines\n"
      "summarize a small per-rank summary; report TRACE_OR_SUMMARY_OR_DIR... merges a job's ranks\n"
      "diff     utilisation, idle by cause and the stacks whose idle grew or shrank, before -> after;\n"
      "         --what-if: the before side's predictions against the after side as measured\n"
      "html     one self-contained page: timeline, host threads, idle flame graph, causes, advice\n"
      "\n"
      "exit codes: 0 ok, 1 below --fail-under, 2 bad input (usage, not a trace, newer version,\n"
      "unreadable); a cut trace is analysed up to its last complete chunk, with a warning.\n");
}

absl::StatusOr<double> ParseUtilization(const std::string& text) {
  std::string num = text;
  bool percent = absl::EndsWith(num, "%");
  if (percent) num.pop_back();
  double v;
  if (!absl::SimpleAtod(num, &v) || v < 0)
    return absl::InvalidArgumentError(absl::StrCat("--fail-under: '", text, "' is not a utilisation (e.g. 0.8 or 80%)"));
  if (percent || v > 1) v /= 100;
  if (v > 1) return absl::InvalidArgumentError(absl::StrCat("--fail-under: '", text, "' is above 100%"));
  return v;
}

absl::StatusOr<CliArgs> ParseArgs(const std::vector<std::string>& args) {
  CliArgs out;
  if (args.empty()) return absl::InvalidArgumentError("missing subcommand (report, dump, export, diff or html)");
  const std::string& sub = args[0];
  if (sub == "help" || sub == "--help" || sub == "-h") return out;
  if (sub == "report") {
    out.command = Subcommand::kReport;
  } else if (sub == "dump") {
    out.command = Subcommand::kDump;
  } else if (sub == "export") {
    out.command = Subcommand::kExport;
  } else if (sub == "diff") {
    out.command = Subcommand::kDiff;
  } else if (sub == "html") {
    out.command = Subcommand::kHtml;
  } else if (sub == "summarize") {
    out.command = Subcommand::kSummarize;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown subcommand '", sub, "' (report, dump, export, diff or html)"));
  }
  bool after_separator = false;  // diff: "--" seen
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    // --name=value or --name value
    auto value = [&](const char* name, std::string* v) -> absl::Status {
      std::string prefix = absl::StrCat(name, "=");
      if (absl::StartsWith(a, prefix)) {
        *v = a.substr(prefix.size());
        return absl::OkStatus();
      }
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      *v = args[++i];
      return absl::OkStatus();
    };
    auto is = [&](const char* name) { return a == name || absl::StartsWith(a, absl::StrCat(name, "=")); };
    if (a == "--help" || a == "-h") {
      out.command = Subcommand::kHelp;
      return out;
    }
    if (out.command == Subcommand::kDiff && a == "--") {
      if (after_separator) return absl::InvalidArgumentError("diff: '--' given twice");
      after_separator = true;
    } else if (out.command == Subcommand::kExport && is("--chrome")) {
      if (absl::Status s = value("--chrome", &out.chrome_out); !s.ok()) return s;
    } else if (out.command == Subcommand::kExport && is("--collapsed")) {
      if (absl::Status s = value("--collapsed", &out.collapsed_out); !s.ok()) return s;
    } else if (out.command == Subcommand::kExport && is("--tables")) {
      if (absl::Status s = value("--tables", &out.tables_dir); !s.ok()) return s;
    } else if (out.command == Subcommand::kSummarize && (a == "-o" || is("--output"))) {
      if (absl::Status s = value(a == "-o" ? "-o" : "--output", &out.summary_out); !s.ok()) return s;
    } else if (out.command == Subcommand::kExport && is("--kineto")) {
      if (absl::Status s = value("--kineto", &out.kineto_out); !s.ok()) return s;
    } else if (out.command == Subcommand::kHtml && (a == "-o" || is("--output"))) {
      if (absl::Status s = value(a == "-o" ? "-o" : "--output", &out.html_out); !s.ok()) return s;
    } else if ((out.command == Subcommand::kReport || out.command == Subcommand::kDiff) && a == "--json") {
      out.format = "json";
    } else if (out.command == Subcommand::kReport && is("--format")) {
      std::string v;
      if (absl::Status s = value("--format", &v); !s.ok()) return s;
      if (FindReportFormat(v) == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("--format: unknown format '", v, "' (",
                                                       absl::StrJoin(ReportFormatNames(), ", "), ")"));
      out.format = v;
    } else if (out.command == Subcommand::kReport && is("--fail-under")) {
      std::string v;
      if (absl::Status s = value("--fail-under", &v); !s.ok()) return s;
      absl::StatusOr<double> u = ParseUtilization(v);
      if (!u.ok()) return u.status();
      out.fail_under = *u;
    } else if (out.command == Subcommand::kReport && is("--width")) {
      std::string v;
      if (absl::Status s = value("--width", &v); !s.ok()) return s;
      if (!absl::SimpleAtoi(v, &out.width) || out.width < 40 || out.width > 1000)
        return absl::InvalidArgumentError(absl::StrCat("--width: '", v, "' is not a width between 40 and 1000"));
    } else if ((out.command == Subcommand::kReport || out.command == Subcommand::kDiff ||
                out.command == Subcommand::kHtml) &&
               a == "--what-if") {
      out.what_if = true;
    } else if (out.command == Subcommand::kReport && is("--jobs")) {
      std::string v;
      if (absl::Status s = value("--jobs", &v); !s.ok()) return s;
      if (!absl::SimpleAtoi(v, &out.jobs) || out.jobs < 1 || out.jobs > 256)
        return absl::InvalidArgumentError(absl::StrCat("--jobs: '", v, "' is not a thread count between 1 and 256"));
    } else if (absl::StartsWith(a, "-") && a != "-") {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", a, "' for ", sub));
    } else {
      (after_separator ? out.after_traces : out.traces).push_back(a);
    }
  }
  if (out.command == Subcommand::kDiff) {
    if (!after_separator) {
      if (out.traces.size() != 2)
        return absl::InvalidArgumentError("diff: give BEFORE and AFTER (or BEFORE... -- AFTER...)");
      out.after_traces.push_back(out.traces.back());
      out.traces.pop_back();
    } else if (out.traces.empty() || out.after_traces.empty()) {
      return absl::InvalidArgumentError("diff: traces needed on both sides of '--'");
    }
    return out;
  }
  if (out.command == Subcommand::kExport && !out.tables_dir.empty()) {
    if (!out.chrome_out.empty() || !out.kineto_out.empty() || !out.collapsed_out.empty())
      return absl::InvalidArgumentError("export: --tables goes alone (it takes several traces)");
    if (out.traces.empty()) return absl::InvalidArgumentError("export --tables: no trace or folder given");
    return out;
  }
  if (out.command == Subcommand::kSummarize) {
    if (out.traces.size() != 1) return absl::InvalidArgumentError("summarize: exactly one trace file");
    if (out.summary_out.empty()) return absl::InvalidArgumentError("summarize: give -o SUMMARY");
  }
  if (out.command == Subcommand::kExport) {
    if (out.chrome_out.empty() && out.kineto_out.empty() && out.collapsed_out.empty())
      return absl::InvalidArgumentError("export: give --chrome OUT.json, --kineto OUT.json and/or --collapsed OUT.txt");
    if (out.traces.size() != 1) return absl::InvalidArgumentError("export: exactly one trace file");
  }
  if (out.command == Subcommand::kHtml && out.html_out.empty())
    return absl::InvalidArgumentError("html: give -o OUT.html");
  if (out.traces.empty()) return absl::InvalidArgumentError(absl::StrCat(sub, ": no trace file given"));
  if (out.command == Subcommand::kDump && out.traces.size() != 1)
    return absl::InvalidArgumentError("dump: exactly one trace file");
  return out;
}

}  // namespace gs::analyzer::cli
