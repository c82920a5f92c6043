// `gsanalyze dump`: the reader's record dump.
#include "analyzer/cli/commands/commands.h"
#include "analyzer/reader/dump.h"

namespace gs::analyzer::cli {

int RunDump(const CliArgs& args, std::ostream& out, std::ostream& err) {
  absl::Status s = reader::DumpTrace(args.traces.at(0), out);
  out.flush();
  if (!s.ok()) {
    err << "gsanalyze: " << s.message() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gs::analyzer::cli
