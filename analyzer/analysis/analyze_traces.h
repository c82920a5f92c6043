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
#include "analyzer/result/analysis.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

class AnalysisBuilder;
class RecordSink;
class TraceAnalyzer;
class TraceImporter;

// Errors (bad input: not a trace, newer version, unreadable): the first file's, one line that
// names it. A cut or damaged file is not an error: it is analysed and a warning added.
absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options = AnalysisOptions());

// Progress after each chunk read: (index into `paths`, bytes of that file read so far, its size
// or 0 when unknown). For a progress line on a terminal (cli/progress.h).
using AnalyzeProgress = std::function<void(size_t index, uint64_t bytes_read, uint64_t file_bytes)>;

// Something that needs the same pass as the analysis (the HTML report's timeline sees every
// record and every idle interval as they go by): one pass, no second read of a large file.
class TraceWatcher {
 public:
  virtual ~TraceWatcher() = default;
  // Before trace `index` is read: the sink its records go to. That sink must pass every record
  // on to `analyzer` (it may also set the analyzer's interval observer). nullptr: the records go
  // to the analyzer directly.
  virtual RecordSink* BeginTrace(size_t index, const TraceImporter& importer, TraceAnalyzer* analyzer) = 0;
  // After it is read and analysed; the importer and its tables are still alive.
  virtual void EndTrace(size_t index, const TraceImporter& importer) = 0;
};

struct AnalyzeHooks {
  AnalyzeProgress progress;         // empty: none
  TraceWatcher* watcher = nullptr;  // null: none
};
absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks);

// One opened trace into `builder`: what AnalyzeTraces does for each file (the fuzzer calls it
// on a trace in memory). `index` is the trace's position, for the watcher.
absl::Status AnalyzeTrace(TraceImporter* importer, const AnalysisOptions& options, AnalysisBuilder* builder,
                          size_t index = 0, TraceWatcher* watcher = nullptr);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
