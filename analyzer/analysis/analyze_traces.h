// analyze_traces.h — the one pass: trace files in, an Analysis out, and every view that needs
// the traces fed on the way (trace_observer.h).
//
// What gsanalyze's subcommands and the scenario tests call. Traces are read streaming, once each,
// one after another or, with AnalysisOptions::jobs > 1, up to `jobs` at once (each on a thread of
// its own, the observers forked per trace: trace_observer.h); their results are merged in input
// order either way (devices listed per trace, causes and stacks summed across traces), so the
// Analysis is the same for every `jobs`. Nothing else reads trace files: summaries, exports, tables and the HTML
// timeline are TraceObservers registered here. A file is opened once (trace_file.h), here or by a
// job's intake that looked at its first bytes already (cli/job_inputs.h), and read over that one
// descriptor.
//
// Formats: a file's first bytes choose the importer: PyTorch profiler (Kineto) Chrome-trace JSON,
// plain or gzip (analyzer/import/), or else a .gstrace. Observers see either through the same TraceImporter (importer.imported() says
// which; an imported trace has no chunks, only model records).
//
// Thread safety: none needed; each call is independent. The threads a call starts end before it
// returns.
#ifndef GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
#define GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/analysis/trace_file.h"
#include "analyzer/analysis/trace_observer.h"
#include "analyzer/options/options.h"
#include "analyzer/result/analysis.h"

namespace gs::analyzer {

class AnalysisBuilder;
class TraceImporter;

// What a trace in flight is reckoned to hold per byte of its file, for the memory bound of a pass
// that reads several at once (AnalysisOptions::trace_memory_budget): the agent's traces take ~4.6
// bytes an event on disk, and the per-rank summary's gaps took ~75 an event in the analysis until
// it charged them to their steps as they came (BENCHMARKS.md, "Several traces at once", "The
// per-rank summary's gaps"); what is left to grow has caps, so this errs on the safe side.
inline constexpr uint64_t kTraceMemoryPerFileByte = 16;

// Errors (bad input: not a trace, newer version, unreadable): the first file's, one line that
// names it. A cut or damaged file is not an error: it is analysed and a warning added.
absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths,
                                       const AnalysisOptions& options = AnalysisOptions());

// Progress after each chunk read (a .gstrace), or each buffer parsed (an imported trace, which is
// read whole before its records are delivered): (index into `paths`, bytes of that file read so
// far, its size or 0 when unknown). For a progress line on a terminal (cli/terminal/progress.h).
// With several traces read at once it is called from their threads, one call at a time.
using AnalyzeProgress = std::function<void(size_t index, uint64_t bytes_read, uint64_t file_bytes)>;

struct AnalyzeHooks {
  AnalyzeProgress progress;               // empty: none
  std::vector<TraceObserver*> observers;  // called in this order; not owned
};
absl::StatusOr<Analysis> AnalyzeTraces(const std::vector<std::string>& paths, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks);
// The same over files opened already (a job's intake looked inside them, cli/job_inputs.h): each
// read over its own descriptor, none opened again.
absl::StatusOr<Analysis> AnalyzeTraces(std::vector<TraceFile> files, const AnalysisOptions& options,
                                       const AnalyzeHooks& hooks);

// One opened trace into `builder`: what AnalyzeTraces does for each file (the fuzzer calls it
// on a trace in memory). `index` is the trace's position, for the observers.
absl::Status AnalyzeTrace(TraceImporter* importer, const AnalysisOptions& options, AnalysisBuilder* builder,
                          size_t index = 0, const std::vector<TraceObserver*>& observers = {});

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_ANALYSIS_ANALYZE_TRACES_H_
