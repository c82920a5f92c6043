// args.h — gsanalyze's command line, parsed into a value (tested as a value in args_test.cc).
//
//   gsanalyze report TRACE... [--json] [--format text|json] [--fail-under UTIL] [--width N] [--jobs N]
//   gsanalyze dump TRACE
//   gsanalyze export [--chrome OUT.json] [--kineto OUT.json] [--collapsed OUT.txt] TRACE
//   gsanalyze diff BEFORE AFTER [--json]      (or BEFORE... -- AFTER... for several traces)
//   gsanalyze html TRACE_OR_DIR... -o OUT.html
//   gsanalyze help | --help
//
// Hand-parsed rather than absl::flags: subcommands with positional arguments, and a parser that
// returns a value (not global flag state) is what the tests want.
#ifndef GPUSTALL_ANALYZER_CLI_ARGS_H_
#define GPUSTALL_ANALYZER_CLI_ARGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gs::analyzer::cli {

// Process exit codes (cli/exit_codes.cmake tests them as a table).
enum ExitCode : int {
  kExitOk = 0,
  kExitBelowThreshold = 1,  // only with --fail-under: steady-state GPU-Util below it
  kExitBadInput = 2,        // bad usage, not a trace, newer schema, unreadable
};

enum class Subcommand { kHelp, kReport, kDump, kExport, kDiff, kHtml, kSummarize };

struct CliArgs {
  Subcommand command = Subcommand::kHelp;
  std::vector<std::string> traces;        // diff: the BEFORE traces
  std::vector<std::string> after_traces;  // diff: the AFTER traces
  std::string chrome_out;                 // export --chrome
  std::string collapsed_out;              // export --collapsed
  std::string kineto_out;                 // export --kineto
  // Not flags: main() sets them from the real streams (cli/terminal/terminal.h), tests set them directly.
  bool color = false;                     // stdout is a terminal and NO_COLOR is unset/empty
  bool progress = false;                  // stderr is a terminal: draw a progress line
  std::string html_out;                   // html -o
  std::string summary_out;                // summarize -o
  std::string tables_dir;                 // export --tables (several traces or folders)
  std::string format = "text";          // --json is --format json
  std::optional<double> fail_under;     // a fraction 0..1
  int width = 0;                        // 0: $COLUMNS, else the terminal's, else 100
  int jobs = 0;                         // report --jobs: threads (AnalysisOptions::jobs); 0: one per core
  bool what_if = false;                 // report --what-if: replay the traces, predict each fix
};

// `args` excludes the program name. Errors are InvalidArgument with a one-line message.
absl::StatusOr<CliArgs> ParseArgs(const std::vector<std::string>& args);

// "0.8", "80%" and "80" all mean 80%: a number above 1 is a percentage.
absl::StatusOr<double> ParseUtilization(const std::string& text);

std::string Usage();

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_ARGS_H_
