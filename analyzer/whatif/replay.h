// replay.h — one process's trace as a dependency graph, re-timed by walking it: the core of the
// what-if predictions (issue "What-if: predict what each fix buys").
//
// The graph (what CUDA guarantees, and what the trace measured):
//   host      each thread's calls in program order: a call enters when the previous one on its
//             thread returned plus the host work measured between them; a call nested inside
//             another (a driver call under a runtime call) keeps its offset from its parent;
//   launch    device work starts no earlier than its launching call (correlation id) entered plus
//             the work's launch latency: its own where the stream was idle at submission, else
//             the device's median over such work;
//   stream    work on one stream runs in submission order: it starts no earlier than its
//             predecessor ended plus the device's queued gap (the median gap between work that
//             was submitted before its predecessor ended); work of one call (a graph launch's
//             kernels, a copy in pieces) keeps its measured gaps between its pieces;
//   engine    work of one device and engine (kernels and memsets; uploads; downloads; other
//             copies) that did not overlap the engine's earlier work in the trace does not
//             overlap it in the replay either, and work that began while earlier work ran
//             begins no sooner after the start of the one before it than it did: streams give
//             no more concurrency than the device showed;
//   events    cudaStreamWaitEvent: later work on the waiting stream starts no earlier than the
//             work the event's latest cudaEventRecord followed;
//   syncs     a stream/device/event synchronisation (a stream sync whose stream the trace does
//             not give waits as a device sync), and a copy that does not return before its
//             copy ends (a blocking copy), returns no earlier than the work it waits for ended
//             plus its measured tail (its return after that work ended); its earlier part is not
//             kept: it was waiting.
// Work the trace cannot tie to a call (no correlation) keeps its measured gap from its stream
// predecessor, or its measured start when it is the stream's first.
//
// Replaying the unmodified graph is the check that the model holds for this trace: the same
// wall time (first record to last) and device busy time within a tolerance, else no prediction
// (CheckReplay below). What it does not model shows up there: device work slowed by other work
// (concurrent streams, contention), host threads that wait on each other outside CUDA (input
// workers, locks), calls that block for reasons it does not see (a full launch queue, an
// implicit synchronisation).
//
// Thread safety: a ReplayGraph is immutable after construction; Replay may run concurrently.
// Memory: the trace's API calls and device work, a few words more per record.
#ifndef GPUSTALL_ANALYZER_WHATIF_REPLAY_H_
#define GPUSTALL_ANALYZER_WHATIF_REPLAY_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "analyzer/model/types.h"

namespace gs::analyzer::whatif {

// What the replay reads of one process's trace: every API call, and every timed piece of device
// work (IsDeviceWork, a start and an end).
struct ReplayRecords {
  std::vector<ApiCall> calls;
  std::vector<GpuActivity> work;
};

// A collective that delimits a training step (RankSummary::steps): when it started and ended.
struct StepTimes {
  TimeNs start = 0, end = 0;
};

// One timeline's figures (measured or replayed), computed alike from the calls and the work.
struct ReplayFigures {
  TimeNs start_ns = 0;      // the first call's entry or work's start
  TimeNs wall_ns = 0;       // from there to the last return or end
  TimeNs busy_ns = 0;       // the union of each device's work, summed over devices
  TimeNs compute_busy_ns = 0;  // the same of its kernels and collectives (GPU-Util's numerator)
  uint32_t devices = 0;
  double utilization = 0;   // compute busy / (wall * devices): GPU-Util as the report has it
  std::vector<StepTimes> steps;  // the graph's step collectives (ReplayGraph's step_work), in order
  // The mean complete profiler step (ProfilerStep#N, ReplayGraph's ProfilerSteps): from the first
  // step's start to the end of the device work the last complete step launched, over the complete
  // steps (the step that began last is incomplete, as accounting/profiler_steps.h has it); 0
  // without two steps with calls.
  TimeNs profiler_step_ns = 0;
};

// A trace's profiler steps tied to the graph: which step each call entered in, and where the
// first step began, `first_before` ns before call `first_call` entered (so that it moves with
// that call in a replay).
struct ProfilerSteps {
  std::vector<int32_t> call_step;  // per call: the step it entered in, -1 outside any
  int32_t steps = 0;               // steps begun (the last is incomplete)
  int32_t first_call = -1;
  TimeNs first_before = 0;
};

// The model's parameters as fitted to the trace (for the report and tests).
struct ReplayParameters {
  TimeNs launch_latency_ns = 0;  // median over work submitted to an idle stream (first device)
  TimeNs queued_gap_ns = 0;      // median gap after a predecessor for work submitted before it ended
  uint64_t top_calls = 0, nested_calls = 0, work = 0, uncorrelated_work = 0;
  uint64_t waits = 0;            // calls that return after device work they wait for
};

// A fix, as changed weights of the graph (what_ifs.h builds one per recommendation). Indices are
// into ReplayRecords::calls and ::work; kKeep leaves the measured weight.
class ReplayChanges {
 public:
  static constexpr TimeNs kKeep = std::numeric_limits<TimeNs>::min();
  // The call's own host time (a waiting call's tail after the work it waited for).
  void SetCallCost(size_t call, TimeNs ns) { Set(&call_cost_, call, ns); }
  // The host work on the call's thread between the previous call's return and this call.
  void SetHostGap(size_t call, TimeNs ns) { Set(&host_gap_, call, ns); }
  // The call enters no earlier than this (a resource outside CUDA: input a worker produced).
  void SetNotBefore(size_t call, TimeNs t) { Set(&not_before_, call, t); }
  // The call no longer waits for device work (a sync removed or deferred, a copy made async).
  void DropWaits(size_t call) {
    if (no_wait_.size() <= call) no_wait_.resize(call + 1, 0);
    no_wait_[call] = 1;
  }
  void SetWorkDuration(size_t work, TimeNs ns) { Set(&work_duration_, work, ns); }
  // The work's minimum gap after its stream predecessor ended.
  void SetWorkGapAfterPrevious(size_t work, TimeNs ns) { Set(&work_after_prev_, work, ns); }

  TimeNs CallCost(size_t i) const { return Get(call_cost_, i); }
  TimeNs HostGap(size_t i) const { return Get(host_gap_, i); }
  TimeNs NotBefore(size_t i) const { return Get(not_before_, i); }
  bool NoWait(size_t i) const { return i < no_wait_.size() && no_wait_[i] != 0; }
  TimeNs WorkDuration(size_t w) const { return Get(work_duration_, w); }
  TimeNs WorkGapAfterPrevious(size_t w) const { return Get(work_after_prev_, w); }
  bool empty() const {
    return call_cost_.empty() && host_gap_.empty() && not_before_.empty() && no_wait_.empty() &&
           work_duration_.empty() && work_after_prev_.empty();
  }

 private:
  static void Set(std::vector<TimeNs>* v, size_t i, TimeNs ns) {
    if (v->size() <= i) v->resize(i + 1, kKeep);
    (*v)[i] = ns;
  }
  static TimeNs Get(const std::vector<TimeNs>& v, size_t i) { return i < v.size() ? v[i] : kKeep; }
  std::vector<TimeNs> call_cost_, host_gap_, not_before_, work_duration_, work_after_prev_;
  std::vector<uint8_t> no_wait_;
};

class ReplayGraph {
 public:
  // `step_work`: the work (indices into records.work) that delimits the trace's steps, the
  // collectives of a rank (step_join.h), in time order; every figure gives their times.
  // `profiler_steps`: the trace's profiler steps (TieProfilerSteps below).
  explicit ReplayGraph(ReplayRecords records, std::vector<int32_t> step_work = {},
                       ProfilerSteps profiler_steps = {});

  ReplayFigures Measured() const;
  // The graph re-timed: as it is (the check), or with a fix's changes.
  ReplayFigures Replay(const ReplayChanges& changes = ReplayChanges()) const;
  const ReplayParameters& parameters() const { return parameters_; }

  // Replayed times, per call (enter, exit) and per work (start, end), in the order of records().
  struct Times {
    std::vector<TimeNs> enter, exit, start, end;
  };
  Times ReplayTimes(const ReplayChanges& changes = ReplayChanges()) const;
  const ReplayRecords& records() const { return records_; }
  // Whether the call waits for device work in the graph (a sync, a blocking copy).
  bool Waits(size_t call) const { return call_nodes_[call].awaited_end > call_nodes_[call].awaited_begin; }
  // The call's kept host time: its tail after the work it waited for, or its whole duration.
  TimeNs CallCost(size_t call) const { return call_nodes_[call].tail; }
  bool Nested(size_t call) const { return call_nodes_[call].nested; }
  // The host work before the call on its thread (0 for a thread's first call and nested calls).
  TimeNs HostGap(size_t call) const { return call_nodes_[call].nested ? 0 : call_nodes_[call].gap; }
  // The previous top-level call of the call's thread, or -1.
  int32_t PreviousCall(size_t call) const { return call_nodes_[call].nested ? kNone : call_nodes_[call].prev; }
  // Whether the work was ready before its stream predecessor ended and waited for it (the device,
  // not the launch, set its start).
  bool Queued(size_t work) const { return work_nodes_[work].queued; }
  // The launching call of a piece of work, or -1; the work's stream predecessor, or -1.
  int32_t LaunchingCall(size_t work) const { return work_nodes_[work].call; }
  // The work a call launched (the inverse of LaunchingCall), in record order.
  absl::Span<const int32_t> LaunchedWork(size_t call) const {
    return absl::MakeConstSpan(launched_).subspan(launched_begin_[call], launched_begin_[call + 1] - launched_begin_[call]);
  }
  int32_t StreamPrevious(size_t work) const { return work_nodes_[work].stream_prev; }

 private:
  static constexpr int32_t kNone = -1;
  struct CallNode {
    int32_t prev = kNone;     // previous top-level call of the thread, or the parent (nested)
    bool nested = false;
    TimeNs gap = 0;           // top-level: enter - prev's exit (host work); nested: enter - parent's enter
    TimeNs tail = 0;          // exit - max(enter, awaited work's end) (waits), else exit - enter
    uint32_t awaited_begin = 0, awaited_end = 0;  // [begin, end) of awaited_
  };
  struct WorkNode {
    int32_t call = kNone;     // launching call
    int32_t stream_prev = kNone;
    int32_t engine_prev = kNone;  // the engine's work it followed without overlap (see "engine")
    int32_t engine_started = kNone;  // the engine's work that started before it while running
    TimeNs engine_offset = 0;        // ... and how long after that one's start it started
    TimeNs latency = 0;       // start - call's enter (launch edge)
    TimeNs after_prev = 0;    // minimum gap after stream_prev's end
    bool anchored = false;    // no call, no predecessor: starts where it started
    bool queued = false;      // it was ready before its stream predecessor ended (measured)
    uint32_t deps_begin = 0, deps_end = 0;  // [begin, end) of deps_: event-wait predecessors
  };
  void Build();
  TimeNs Duration(int32_t work) const {
    return records_.work[static_cast<size_t>(work)].end_ns - records_.work[static_cast<size_t>(work)].start_ns;
  }
  ReplayFigures Figures(const std::vector<TimeNs>& enter, const std::vector<TimeNs>& exit,
                        const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) const;

  ReplayRecords records_;
  std::vector<int32_t> step_work_;
  ProfilerSteps profiler_steps_;
  std::vector<CallNode> call_nodes_;
  std::vector<WorkNode> work_nodes_;
  std::vector<int32_t> awaited_;  // work indices
  std::vector<int32_t> launched_;  // work indices, by launching call: [launched_begin_[c], launched_begin_[c + 1])
  std::vector<uint32_t> launched_begin_;
  std::vector<int32_t> deps_;     // work indices
  // Work indices by (device, measured start, measured end): the order Figures sums each device's
  // busy time in. A replay mostly keeps it, so Figures sorts only when it does not.
  std::vector<int32_t> span_order_;
  ReplayParameters parameters_;
};

// The profiler steps that began at `starts` (ascending), tied to the calls: a call entered in
// step k when it entered at or after starts[k] and before starts[k + 1] (the last step runs to
// the end). The first step's start is tied to the first call that entered in it.
ProfilerSteps TieProfilerSteps(const ReplayRecords& records, const std::vector<TimeNs>& starts);

// The unmodified graph replayed against the trace: whether the model holds for it.
struct ReplayCheck {
  ReplayFigures measured, replayed;
  double wall_error = 0, busy_error = 0;  // (replayed - measured) / measured
  double tolerance = 0;
  bool ok = false;
  std::string reason;  // why not ok: one sentence
};
// The default tolerance is the issue's: a model that misses the trace's own wall or busy time by
// more than 3% predicts nothing.
ReplayCheck CheckReplay(const ReplayGraph& graph, double tolerance = 0.03);

}  // namespace gs::analyzer::whatif

#endif  // GPUSTALL_ANALYZER_WHATIF_REPLAY_H_
