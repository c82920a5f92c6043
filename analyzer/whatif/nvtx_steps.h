// nvtx_steps.h — a program's steps as its own NVTX ranges mark them, for traces without PyTorch
// profiler steps (an agent trace of a loop that pushes "step", "train_step" or "iteration 12").
//
// The replay predicts a mean step where the trace says where steps begin (replay.h,
// ProfilerSteps); PyTorch-profiler traces say it with ProfilerStep#N. An agent trace has only the
// program's NVTX ranges, and which of them is "the step" is not written anywhere, so it is found
// by shape: of the outermost ranges (depth 0), those of one thread, domain and name, the name's
// trailing number and separators set aside ("step 3", "ProfilerStep#3" and "iter_12" are each one
// name), that
//   - are three or more (two make one step, too few for a mean the report can stand on);
//   - never overlap (each begins after the previous one ended): a step does not run twice at once;
//   - cover 80% or more of the time from the first one's start to the last one's end: they tile
//     the loop, as steps do, where phases of a step marked at the outermost level ("forward",
//     "backward", "optimizer" side by side) each cover a part of it.
// Of several such, the one that covers the most time marks the steps (then the most ranges, then
// the earliest). None: no steps, and the report gives the run only, as before.
#ifndef GPUSTALL_ANALYZER_WHATIF_NVTX_STEPS_H_
#define GPUSTALL_ANALYZER_WHATIF_NVTX_STEPS_H_

#include <string>
#include <vector>

#include "analyzer/model/trace_tables.h"
#include "analyzer/model/types.h"

namespace gs::analyzer::whatif {

struct NvtxSteps {
  std::vector<TimeNs> starts;  // the steps' starts in time order; empty: no range marks steps
  std::string first_name, last_name;  // the first and the last step's range names, as the trace has them
};

// How the report names them: NVTX range "step", or NVTX ranges "iter 0" to "iter 11".
std::string DescribeNvtxSteps(const NvtxSteps& steps);

// `outermost`: the trace's depth-0 NVTX ranges, in any order.
NvtxSteps FindNvtxSteps(const std::vector<NvtxRange>& outermost, const TraceTables& tables);

// "step 3" -> "step", "ProfilerStep#3" -> "ProfilerStep", "iter_12" -> "iter": the name with its
// trailing digits and then its trailing separators (space, '#', '_', '-', ':', '.') set aside.
std::string StepNameKey(const std::string& name);

}  // namespace gs::analyzer::whatif

#endif  // GPUSTALL_ANALYZER_WHATIF_NVTX_STEPS_H_
