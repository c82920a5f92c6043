// collapsed_stacks.h — `gsanalyze export --collapsed`: idle time by host stack in the "folded"
// format of Brendan Gregg's stackcollapse scripts, which flamegraph.pl and speedscope read:
//
//   main (workload.cc:99);train_step (workload.cc:80);load_batch (workload.cc:42) 360000000
//
// one line per distinct stack, frames root first and joined by ';', then a space and the idle
// nanoseconds charged to it. The numbers are the analysis' own attribution (Analysis::top_stacks
// computed with no top-N cut), so the lines sum to the report's attributed (steady-state) idle.
#ifndef GPUSTALL_ANALYZER_EXPORT_COLLAPSED_STACKS_H_
#define GPUSTALL_ANALYZER_EXPORT_COLLAPSED_STACKS_H_

#include <ostream>
#include <string>
#include <vector>

#include "analyzer/result/analysis.h"
#include "analyzer/options/options.h"

namespace gs::analyzer {

// Options for analyses whose every stack is exported (no top-N cut).
AnalysisOptions AllStacksOptions(AnalysisOptions options = AnalysisOptions());

// One frame as a folded-stack element: "function (file:line)", with ';' and line breaks
// (the format's separators) replaced.
std::string FoldedFrame(const FrameInfo& frame);

// Writes one line per stack of `analysis.top_stacks` with idle > 0; returns the total written.
TimeNs WriteCollapsedStacks(const Analysis& analysis, std::ostream* out);

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_EXPORT_COLLAPSED_STACKS_H_
