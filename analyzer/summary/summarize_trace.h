// summarize_trace.h — one trace in, its RankSummary out (and, on request, its idle intervals and
// stacks as table rows for `gsanalyze export --tables`).
//
// Two passes over the file: the reader alone (header identity and clocks, collective kernels by
// name), then the importer and the ordinary per-trace analysis (TraceAnalyzer), whose interval
// observer gives every idle gap with its causes and charged stacks. Memory grows with the number
// of idle gaps and collectives (kept until the steps are cut), not with the number of records.
//
// Thread safety: none needed; each call is independent.
#ifndef GPUSTALL_ANALYZER_SUMMARY_SUMMARIZE_TRACE_H_
#define GPUSTALL_ANALYZER_SUMMARY_SUMMARIZE_TRACE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/ranks/rank_summary.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

// One steady-state idle gap, as `export --tables` writes it.
struct IdleIntervalRow {
  uint32_t device = 0;
  TimeNs start_ns = 0, end_ns = 0;
  Cause cause = Cause::kOther;     // largest cause
  CauseNs by_cause{};
  bool after_sync = false;
  std::string after_sync_site;     // the synchronising call's frame ("" unless after_sync)
  uint64_t stack_id = 0;           // the stack charged most of it (TraceStacks key; 0: none)
};

// Stacks of one trace by id (the analysis' charge keys), frames as printable strings, leaf first.
using TraceStacks = std::map<uint64_t, std::vector<std::string>>;

// Errors: the trace cannot be opened or is not a trace (one line naming the file). A damaged
// trace is summarised as far as it reads. `intervals`/`stacks` may be null.
absl::StatusOr<RankSummary> SummarizeTrace(const std::string& path,
                                           const AnalysisOptions& options = AnalysisOptions(),
                                           std::vector<IdleIntervalRow>* intervals = nullptr,
                                           TraceStacks* stacks = nullptr);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_SUMMARY_SUMMARIZE_TRACE_H_
