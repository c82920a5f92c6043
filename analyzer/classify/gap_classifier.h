// gap_classifier.h — decides why one device idle gap happened and charges its nanoseconds.
//
// The rules, for a gap [g0, g1) on a device, ended by activity A:
//   0. No host call is known for A (no correlation, or forgotten): the whole gap is `other`.
//   Let C be the call that submitted A (same correlation id), on thread T.
//   1. C had returned by g0 — the work was queued before the device went idle and started late:
//      g1 - g0 <= launch_latency_max_ns: `launch_latency`, else `device_wait` (evidence: a
//      cudaStreamWaitEvent on C's stream before C, when there is one).
//   2. Otherwise the host submitted late. T's time in [g0, g1) is split, in order:
//      - inside an allocation call (cudaMalloc/Free, host alloc/free): `allocator`;
//      - inside a copy whose host side is pageable: `pageable_copy`;
//      - inside any other enqueue call (launch, pinned copy, memset, event record/wait):
//        `launch_overhead`; outside calls but between two enqueue calls at most
//        back_to_back_max_ns apart: `launch_overhead` (the dispatch path of back-to-back launches);
//      - outside CUDA calls otherwise: `host_work`, split by what the thread was doing: exactly,
//        where a recorded wait (a blocking libc call: sleep, lock, I/O) covers it, by that wait's
//        state; elsewhere by the thread state of the samples taken in the same stretch between
//        two calls and outside any wait (a sample inside a wait stands for no time outside it);
//        `unsampled` where neither covers it. A wait that overlaps a CUDA call of the thread
//        counts only outside the call (only the stretches between calls are host work);
//      - inside sync/query/other calls: `other`;
//      - after C returned until A started: launch latency / device wait as in rule 1.
//   Independently: T was inside a synchronising call (stream/device/event sync, blocking D2H copy)
//   when the device went idle, or left one at most after_sync_tolerance_ns before: "after sync".
// Every nanosecond of the gap lands in exactly one cause, so shares sum to 100%.
//
// Attribution: in-call time is charged to the call's stack; host time inside a recorded wait to
// the wait's stack; other host time to the stacks of the samples taken in it (never those of
// samples taken inside a call or a wait) when there are some; else, and for a wait or sample
// without a stack, to the stack of the call that ended it (the code that was on its way to
// submit); time after C to C's stack.
//
// Thread safety: none; the classifier reuses its scratch storage between gaps.
#ifndef GPUSTALL_ANALYZER_CLASSIFY_GAP_CLASSIFIER_H_
#define GPUSTALL_ANALYZER_CLASSIFY_GAP_CLASSIFIER_H_

#include <array>
#include <cstdint>
#include <vector>

#include "analyzer/classify/cause.h"
#include "analyzer/timeline/host_history.h"
#include "analyzer/options/options.h"
#include "analyzer/model/types.h"

namespace gs::analyzer {

// What idle time is charged to: a stack id, or for calls without a stack the API function
// (kFunctionKeyBit | function id), or 0 when nothing is known.
inline constexpr uint64_t kFunctionKeyBit = uint64_t{1} << 32;
inline uint64_t ChargeKey(const ApiCall& c) {
  return c.stack ? c.stack : (kFunctionKeyBit | c.function);
}

struct Charge {
  uint64_t key = 0;
  Cause cause = Cause::kOther;
  // kHostWork only: what a recorded wait or the samples say the thread was doing (kUnsampled
  // where neither says).
  HostState state = HostState::kUnsampled;
  TimeNs ns = 0;
};

enum class GapRule : uint8_t {
  kNoHostCall = 0,   // rule 0
  kQueuedBefore,     // rule 1
  kHostLate,         // rule 2
};

struct IntervalVerdict {
  TimeNs start = 0;
  TimeNs end = 0;
  GapRule rule = GapRule::kNoHostCall;
  Cause cause = Cause::kOther;  // the cause with the most nanoseconds
  CauseNs by_cause{};
  std::array<TimeNs, kNumHostStates> host_states{};  // kHostWork split by state; sums to it
  TimeNs host_exact_ns = 0;  // the part of host_states measured by recorded waits, not sampled
  // Pointers into the HostHistory, valid until it next changes (AddCall/Prune): copy what you
  // keep. (Pointers, not copies: two 80-byte copies per gap were measurable.)
  bool has_resume = false;
  const ApiCall* resume = nullptr;     // the call whose work ended the gap (resume site)
  bool has_preceding = false;
  const ApiCall* preceding = nullptr;  // T's last call entered before the gap (and before C)
  bool after_sync = false;      // `preceding` is the synchronisation the host work followed
  TimeNs stream_wait_enter = -1;  // rule 1 evidence: a cudaStreamWaitEvent on C's stream
  std::vector<Charge> charges;  // sums to end - start
  TimeNs length() const { return end - start; }
};

class GapClassifier {
 public:
  explicit GapClassifier(const AnalysisOptions& options) : options_(options) {}

  // Classifies [g0, g1) ended by `resume`. Reuses `*out` (its vectors keep their capacity).
  void Classify(TimeNs g0, TimeNs g1, const GpuActivity& resume, const HostHistory& history,
                IntervalVerdict* out) const;

 private:
  void Add(IntervalVerdict* v, Cause cause, TimeNs ns, uint64_t key,
           HostState state = HostState::kUnsampled) const;
  void AddHost(IntervalVerdict* v, TimeNs ns, uint64_t key, HostState state) const;
  // Host work [from, to) told by one sample (or by none: kUnsampled), except the parts `waits`
  // cover, which are charged as the waits say; `*j` is a wait cursor moving forward only.
  void HostPiece(IntervalVerdict* v, TimeNs from, TimeNs to, uint64_t key, HostState state,
                 const RingDeque<HostWait>* waits, size_t* j, uint64_t next_key) const;
  void HostSegment(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall* prev,
                   const ApiCall& next, const ThreadHistory* thread) const;
  void InCall(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall& call) const;
  void QueuedTail(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall& call) const;

  const AnalysisOptions& options_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_CLASSIFY_GAP_CLASSIFIER_H_
