// gsanalyze — parses the command line and dispatches to one subcommand (cli/commands/commands.h).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands/commands.h"
#include "analyzer/cli/terminal/terminal.h"

int main(int argc, char** argv) {
  using namespace gs::analyzer::cli;
  // A job's traces stay open from the intake to the pass (cli/job_inputs.h: each opened once), so a
  // job of more ranks than the soft limit on descriptors (often 1024) needs the hard one.
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CliArgs> parsed = ParseArgs(args);
  if (!parsed.ok()) {
    std::cerr << "gsanalyze: " << parsed.status().message() << "\n" << Usage();
    return kExitBadInput;
  }
  parsed->color = ColorWanted(IsTerminal(STDOUT_FILENO), std::getenv("NO_COLOR"));
  parsed->progress = IsTerminal(STDERR_FILENO);
  switch (parsed->command) {
    case Subcommand::kHelp:
      std::cout << Usage();
      return kExitOk;
    case Subcommand::kReport:
      return RunReport(*parsed, std::cout, std::cerr);
    case Subcommand::kDump:
      return RunDump(*parsed, std::cout, std::cerr);
    case Subcommand::kExport:
      if (!parsed->tables_dir.empty()) return RunExportTables(*parsed, std::cout, std::cerr);
      return RunExport(*parsed, std::cout, std::cerr);
    case Subcommand::kDiff:
      return RunDiff(*parsed, std::cout, std::cerr);
    case Subcommand::kHtml:
      return RunHtml(*parsed, std::cout, std::cerr);
    case Subcommand::kSummarize:
      return RunSummarize(*parsed, std::cout, std::cerr);
  }
  return kExitBadInput;
}
