// commands.h — one function per gsanalyze subcommand (each in its own file). They write the
// result to `out`, diagnostics (one line each, prefixed "gsanalyze: ") to `err`, and return the
// process exit code (args.h ExitCode).
#ifndef GPUSTALL_ANALYZER_CLI_COMMANDS_COMMANDS_H_
#define GPUSTALL_ANALYZER_CLI_COMMANDS_COMMANDS_H_

#include <ostream>

#include "analyzer/cli/args.h"

namespace gs::analyzer::cli {

int RunReport(const CliArgs& args, std::ostream& out, std::ostream& err);
int RunDump(const CliArgs& args, std::ostream& out, std::ostream& err);
int RunExport(const CliArgs& args, std::ostream& out, std::ostream& err);
int RunDiff(const CliArgs& args, std::ostream& out, std::ostream& err);
int RunHtml(const CliArgs& args, std::ostream& out, std::ostream& err);
int RunSummarize(const CliArgs& args, std::ostream& out, std::ostream& err);      // multirank
int RunExportTables(const CliArgs& args, std::ostream& out, std::ostream& err);   // multirank

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_COMMANDS_COMMANDS_H_
