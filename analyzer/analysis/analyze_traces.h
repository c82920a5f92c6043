// analyze_traces.h — the analysis entry point: trace files in, an Analysis out.
//
// What gsanalyze's `report` calls and what scenario tests call directly. Traces are read one at
// a time (streaming); their results are merged (devices listed per trace, causes and stacks
// summed across traces).
#ifndef GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
#define GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_

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

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
