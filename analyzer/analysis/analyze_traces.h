// analyze_traces.h — the analysis entry point: trace files in, an Analysis out.
//
// What gsanalyze's `report` calls and what scenario tests call directly. Traces are read one at
// a time (streaming); their results are merged (devices listed per trace, causes and stacks
// summed across traces).
#ifndef GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
#define GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/options.h"

namespace gs::analyzer {

// Errors (bad input: not a trace, newer version, unreadable): the first file's, one line that
// names it. A cut or damaged file is not an error: it is analysed and a warning added.
absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options = AnalysisOptions());

// The same, reporting progress after each chunk read: (index into `paths`, bytes of that file
// read so far, its size or 0 when unknown). For a progress line on a terminal (cli/progress.h).
using AnalyzeProgress = std::function<void(size_t index, uint64_t bytes_read, uint64_t file_bytes)>;
absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeProgress& progress);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
