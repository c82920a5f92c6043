// job_inputs.h — what `gsanalyze report DIR_OR_FILES...` is given for a job: trace files,
// summary files (`gsanalyze summarize`), and folders holding either (a gsrun run folder).
//
// Each file is opened once, here (analysis/trace_file.h): its first bytes say what it is, and a
// trace goes on to the one pass over the same descriptor.
//
// Thread safety: none needed; each call is independent.
#ifndef GPUSTALL_ANALYZER_CLI_JOB_INPUTS_H_
#define GPUSTALL_ANALYZER_CLI_JOB_INPUTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzer/analysis/trace_file.h"
#include "analyzer/result/analysis.h"
#include "analyzer/ranks/multi_rank.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

struct JobInputs {
  std::vector<TraceFile> traces;       // in the order given (a folder's files sorted by name), open
  std::vector<std::string> summaries;  // files that start with kSummaryMagic
  // One line per folder that held files gsanalyze wrote itself, left out (see CollectJobInputs):
  // "skipped 2 files in DIR: report.json (a gsanalyze report), r0.json (exported by gsanalyze
  // from r0.gstrace)". For the user, on stderr.
  std::vector<std::string> skipped;

  std::vector<std::string> TracePaths() const;
};

// A folder contributes its files ending in .gstrace, .json or .json.gz (PyTorch profiler traces)
// and its summary files (by magic), not recursively; a file named is kept as it is (a trace or not,
// and of which format: the pass says). Of a folder's JSON files, two kinds are left out, by
// content, and listed in `skipped`: a `report --json` (its first member is "schema_version", or
// the empty file that `report --json DIR > DIR/report.json` is while it runs), and an
// `export --chrome/--kineto` of a .gstrace in the same folder (export/export_marker.h), which
// would be that rank a second time. Errors: a path that does not exist or cannot be opened, a
// folder with none of those files.
absl::StatusOr<JobInputs> CollectJobInputs(const std::vector<std::string>& paths);
// The same for a command that needs the traces themselves (the page's timeline, the tables' idle
// intervals): a summary among the inputs is an error, "S is a summary (gsanalyze summarize): "
// followed by `why_traces`.
absl::StatusOr<JobInputs> CollectJobTraces(const std::vector<std::string>& paths, absl::string_view why_traces);

// The report of a job given (partly) as summaries: the ranks section, one TraceInfo per rank, and
// a note that per-trace sections need the traces themselves. The traces among the inputs are
// summarised on one pass (AnalyzeTraces with a RankSummaryObserver), which takes their files.
// Errors: the first unreadable input, one line naming it. `ranks` (optional) receives the
// summaries the ranks section was made of (the straggler's what-if joins them).
absl::StatusOr<Analysis> AnalysisFromJobSummaries(JobInputs inputs,
                                                  const AnalysisOptions& options = AnalysisOptions(),
                                                  std::vector<RankSummary>* ranks = nullptr);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLI_JOB_INPUTS_H_
