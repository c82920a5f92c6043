// what_ifs.h — one change of the replay graph (replay.h) per fix the report recommends, and what
// the trace replays to with it: the prediction beside each recommendation.
//
// The fixes, as changes (the recommendation kinds of result/recommendations.h):
//   remove_sync      the synchronising calls at the site most host work followed (the
//                    recommendation's after-sync site) no longer wait for device work; each keeps
//                    its own cost (its tail after the work ended): a sync deferred a step, or
//                    removed;
//   allocator        device allocation and free calls cost nothing and wait for nothing (buffers
//                    allocated once, a caching allocator);
//   pin_memory       copies from or to pageable memory become asynchronous copies from pinned
//                    buffers: the call costs what the trace's asynchronous copies cost (median), an
//                    upload waits for nothing (a download the host reads still waits for its
//                    copy), and the copy runs at the pinned bandwidth the copy accounting knows for
//                    its direction (accounting/copy_accounting.h: the trace's own pinned copies,
//                    else the link's peak), else at kPinnedOverPageable times the bandwidth the
//                    trace's pageable copies of that direction had on the device;
//   launch_overhead  each run of back-to-back launch calls of a thread becomes one call (a CUDA
//                    graph, a fused step): the later calls cost nothing and no host work separates
//                    them, and their kernels follow each other with the shortest gap the trace
//                    measured between queued kernels (none where no kernel queued: a launch-bound
//                    trace never shows the device's own gap);
//   input_pipeline   input preparation is free (the bound): before each call that ended an idle
//                    gap the analysis charged to host work, that host work is gone;
//   input_workers    N input workers prepare the batches: each such call waits until its batch is
//                    ready, N at a time, from when the first such gap's host work began (the first
//                    batch's preparation, or the wait for it). A batch takes what it took: with no
//                    workers in the trace
//                    (the training thread prepared its batches) the median host work of those gaps,
//                    unless that host work was mostly a wait on a lock or queue (loader threads
//                    the trace does not show: WhatIf::producers_unseen, no N predicted);
//                    with W worker processes (the trace's data_worker processes) W times the median
//                    interval between those calls (each worker made one batch per W intervals).
//                    N = 1, 2, 4, 8, 16 above W; the report keeps the N the host allows
//                    (predictions.h).
// A fix that changes nothing in a trace (no such call) is not predicted for it.
//
// Pure functions over an immutable graph; no thread safety concerns.
#ifndef GPUSTALL_ANALYZER_WHATIF_WHAT_IFS_H_
#define GPUSTALL_ANALYZER_WHATIF_WHAT_IFS_H_

#include <array>
#include <string>
#include <vector>

#include "analyzer/classify/cause.h"
#include "analyzer/model/trace_tables.h"
#include "analyzer/whatif/replay.h"

namespace gs::analyzer::whatif {

// An idle gap as the analysis classified it, tied to the graph's calls (indices into
// ReplayRecords::calls, -1 when the trace has no such call).
struct ClassifiedGap {
  TimeNs length = 0;
  CauseNs by_cause{};
  int32_t resume = -1;     // the call whose work ended the gap
  int32_t preceding = -1;  // the submitting thread's last call before it
  bool after_sync = false; // `preceding` is a synchronisation the host work followed
  TimeNs lock_wait_ns = 0;  // of its host work, the thread's waits on a lock or queue (HostState)
};

// The numbers of input workers predicted (input_workers), in the order the report tries them.
inline constexpr uint32_t kWorkerCounts[] = {1, 2, 4, 8, 16};

struct WhatIf {
  std::string kind;        // the recommendation kind it predicts for
  uint32_t workers = 0;    // input_workers: N
  // input_pipeline: no worker processes, and the host work the input waited on was mostly a wait
  // on a lock or queue: the batches come from producers the trace does not show (loader threads
  // it did not sample), so no number of workers is predicted, only the bound.
  bool producers_unseen = false;
  uint64_t changed = 0;    // calls (or gaps) the change touched
  ReplayFigures figures;   // the trace replayed with the change
};

// `pinned_bandwidth`: bytes/s per CopyDirection (CopyAccounting::KnownPinnedBandwidth), 0 unknown.
// `input_workers`: the trace's input worker processes (0: none).
std::vector<WhatIf> PredictFixes(const ReplayGraph& graph, const std::vector<ClassifiedGap>& gaps,
                                 const TraceTables& tables,
                                 const std::array<double, kNumCopyDirections>& pinned_bandwidth = {},
                                 uint32_t input_workers = 0);

}  // namespace gs::analyzer::whatif

#endif  // GPUSTALL_ANALYZER_WHATIF_WHAT_IFS_H_
