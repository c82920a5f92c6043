// job_inputs.h — what `gsanalyze report DIR_OR_FILES...` is given for a job: trace files,
// summary files (`gsanalyze summarize`), and folders holding either (a gsrun run folder).
//
// Thread safety: none needed; each call is independent.
#ifndef GPUSTALL_ANALYZER_CLI_JOB_INPUTS_H_
#define GPUSTALL_ANALYZER_CLI_JOB_INPUTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/result/analysis.h"
#include "analyzer/ranks/multi_rank.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

struct JobInputs {
  std::vector<std::string> traces;     // in the order given (a folder's files sorted by name)
  std::vector<std::string> summaries;  // files that start with kSummaryMagic
};

// A folder contributes its files ending in .gstrace, .json or .json.gz (PyTorch profiler traces;
// by name, since only the pass opens traces) and its summary files (by magic), not recursively; a
// file is kept as it is (a trace or not, and of which format: the pass says). Errors: a path that
// does not exist, a folder with neither.
absl::StatusOr<JobInputs> CollectJobInputs(const std::vector<std::string>& paths);

// The report of a job given (partly) as summaries: the ranks section, one TraceInfo per rank, and
// a note that per-trace sections need the traces themselves. The traces among the inputs are
// summarised on one pass (AnalyzeTraces with a RankSummaryObserver). Errors: the first unreadable
// input, one line naming it.
absl::StatusOr<Analysis> AnalysisFromJobSummaries(const JobInputs& inputs,
                                                  const AnalysisOptions& options = AnalysisOptions());

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLI_JOB_INPUTS_H_
