#include "analyzer/classify/gap_classifier.h"

#include <algorithm>
#include <limits>

namespace gs::analyzer {

namespace {

Cause InCallCause(const ApiCall& call) {
  switch (call.api_class) {
    case ApiClass::kMalloc:
    case ApiClass::kFree:
    case ApiClass::kHostAlloc:
    case ApiClass::kHostFree:
      return Cause::kAllocator;
    default:
      break;
  }
  if (IsPageableCopy(call)) return Cause::kPageableCopy;
  if (IsEnqueue(call.api_class)) return Cause::kLaunchOverhead;
  return Cause::kOther;  // sync, query, other calls: no finer evidence
}

bool SameCall(const ApiCall& a, const ApiCall& b) {
  return a.enter_ns == b.enter_ns && a.correlation == b.correlation && a.thread == b.thread;
}

}  // namespace

inline void GapClassifier::Add(IntervalVerdict* v, Cause cause, TimeNs ns, uint64_t key, HostState state) const {
  if (ns <= 0) return;
  v->by_cause[static_cast<int>(cause)] += ns;
  if (!v->charges.empty() && v->charges.back().key == key && v->charges.back().cause == cause &&
      v->charges.back().state == state) {
    v->charges.back().ns += ns;
  } else {
    // Fields stored one by one: building a Charge on the stack and copying it as one 16-byte
    // move stalls on store forwarding (measured: a third of Classify's time).
    Charge& c = v->charges.emplace_back();
    c.key = key;
    c.cause = cause;
    c.state = state;
    c.ns = ns;
  }
}

inline void GapClassifier::HostSegment(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall* prev,
                                const ApiCall& next, const ThreadHistory* thread) const {
  if (b <= a) return;
  if (prev != nullptr && IsEnqueue(prev->api_class) && IsEnqueue(next.api_class) &&
      next.enter_ns - prev->exit_ns <= options_.back_to_back_max_ns) {
    Add(v, Cause::kLaunchOverhead, b - a, ChargeKey(next));
    return;
  }
  // [a, b) lies in one stretch of host work: the thread's time outside CUDA calls from `prev`'s
  // exit to `next`'s entry. Only samples taken in that stretch say what the thread did in it: a
  // sample taken inside a call (a futex in a blocking copy, a sync's wait) or across a call says
  // nothing about the host work on either side, so it never counts here. Each sample of the
  // stretch stands for the time it is the nearest sample of the stretch to: from the midpoint
  // with the previous one to the midpoint with the next (at most kMaxStandNs/2 each way); the
  // first and last reach to the stretch's ends. So samples that are not evenly spaced (a running
  // thread's waits for its signal handler to run, later on a busy machine; a blocked thread's is
  // taken on time) weigh what they cover, not one each, and a stretch without a sample of its
  // own is `unsampled`, not charged to the state of a sample taken elsewhere.
  if (thread != nullptr && !thread->samples.empty()) {
    constexpr TimeNs kMaxStandNs = 200000000;  // 200 ms: beyond that a neighbour is not one
    const RingDeque<Sample>& s = thread->samples;
    // The stretch's start: `prev` exited at or before a (a is the later of g0 and its exit).
    const TimeNs s0 = prev != nullptr ? std::min(prev->exit_ns, a) : std::numeric_limits<TimeNs>::min();
    const TimeNs s1 = std::max(next.enter_ns, b);
    size_t i = 0;
    while (i < s.size() && s[i].time_ns < a) ++i;  // pruned: the front is near g0
    if (i > 0 && s[i - 1].time_ns >= s0) --i;       // the stretch's last sample before a reaches into it
    TimeNs covered_from = a;
    TimeNs charged = 0;
    for (; i < s.size(); ++i) {
      const TimeNs t = s[i].time_ns;
      if (t >= s1) break;  // taken inside `next` or after it
      TimeNs from = t - kMaxStandNs / 2, to = t + kMaxStandNs / 2;
      if (i > 0 && s[i - 1].time_ns >= s0) from = std::max(from, t - (t - s[i - 1].time_ns) / 2);
      if (i + 1 < s.size() && s[i + 1].time_ns < s1) to = std::min(to, t + (s[i + 1].time_ns - t) / 2);
      if (from >= b) break;
      from = std::max(from, covered_from);
      to = std::min(to, b);
      if (to <= from) continue;
      if (from > covered_from) {  // a hole between samples too far apart
        Add(v, Cause::kHostWork, from - covered_from, ChargeKey(next));
        v->host_states[static_cast<int>(HostState::kUnsampled)] += from - covered_from;
      }
      const HostState state = HostStateFromThreadState(s[i].state);
      Add(v, Cause::kHostWork, to - from, s[i].stack ? s[i].stack : ChargeKey(next), state);
      v->host_states[static_cast<int>(state)] += to - from;
      charged += to - from;
      covered_from = to;
    }
    if (charged > 0) {
      if (covered_from < b) {
        Add(v, Cause::kHostWork, b - covered_from, ChargeKey(next));
        v->host_states[static_cast<int>(HostState::kUnsampled)] += b - covered_from;
      }
      return;
    }
  }
  Add(v, Cause::kHostWork, b - a, ChargeKey(next));
  v->host_states[static_cast<int>(HostState::kUnsampled)] += b - a;
}

inline void GapClassifier::InCall(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall& call) const {
  if (b <= a) return;
  Add(v, InCallCause(call), b - a, ChargeKey(call));
}

inline void GapClassifier::QueuedTail(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall& call) const {
  if (b <= a) return;
  Add(v, b - a <= options_.launch_latency_max_ns ? Cause::kLaunchLatency : Cause::kDeviceWait,
      b - a, ChargeKey(call));
}

void GapClassifier::Classify(TimeNs g0, TimeNs g1, const GpuActivity& resume,
                             const HostHistory& history, IntervalVerdict* v) const {
  v->start = g0;
  v->end = g1;
  v->by_cause.fill(0);
  v->host_states.fill(0);
  v->charges.clear();
  v->has_resume = v->has_preceding = v->after_sync = false;
  v->resume = v->preceding = nullptr;
  v->stream_wait_enter = -1;

  const ApiCall* found = history.FindCorrelated(resume.correlation);
  if (found == nullptr) {
    v->rule = GapRule::kNoHostCall;
    Add(v, Cause::kOther, g1 - g0, 0);
    v->cause = Cause::kOther;
    return;
  }
  const ApiCall& c = *found;  // valid until the next HostHistory::AddCall, i.e. all of Classify
  v->has_resume = true;
  v->resume = &c;

  const ThreadHistory* thread = history.Thread(c.thread);
  const RingDeque<ApiCall>* calls = thread ? &thread->calls : nullptr;
  // Preceding call: the thread's last call entered at or before g0 and before C.
  // The history is pruned to just before the earliest device frontier, so the calls around g0
  // sit at the front of the thread's deque: scan from the front (binary searches over the
  // deque, which also holds the calls far ahead of g0, cost more than these short scans).
  if (calls != nullptr && !calls->empty()) {
    TimeNs bound = std::min(g0, c.enter_ns - 1);
    size_t i = 0;
    while (i < calls->size() && (*calls)[i].enter_ns <= bound) ++i;
    if (i > 0) {
      v->has_preceding = true;
      v->preceding = &(*calls)[i - 1];
    }
  }

  if (c.exit_ns <= g0) {  // rule 1: queued before the device went idle
    v->rule = GapRule::kQueuedBefore;
    QueuedTail(v, g0, g1, c);
    v->stream_wait_enter = history.LastStreamWaitBefore(c.stream, c.enter_ns);
  } else {  // rule 2: the host submitted late
    v->rule = GapRule::kHostLate;
    if (v->has_preceding && IsSynchronizing(*v->preceding) &&
        v->preceding->exit_ns + options_.after_sync_tolerance_ns >= g0) {
      v->after_sync = true;
    }
    TimeNs cursor = g0;
    const ApiCall* prev = v->preceding;
    if (calls != nullptr) {
      size_t i = 0;
      while (i < calls->size() && (*calls)[i].exit_ns <= g0) ++i;
      for (; i < calls->size() && (*calls)[i].enter_ns < c.enter_ns && cursor < g1; ++i) {
        const ApiCall& k = (*calls)[i];
        if (SameCall(k, c)) break;
        HostSegment(v, cursor, std::min(k.enter_ns, g1), prev, k, thread);
        InCall(v, std::max(cursor, k.enter_ns), std::min(k.exit_ns, g1), k);
        cursor = std::max(cursor, std::min(k.exit_ns, g1));
        prev = &k;
      }
    }
    if (cursor < g1) {
      HostSegment(v, cursor, std::min(c.enter_ns, g1), prev, c, thread);
      InCall(v, std::max(cursor, c.enter_ns), std::min(c.exit_ns, g1), c);
      cursor = std::max(cursor, std::min(c.exit_ns, g1));
    }
    QueuedTail(v, cursor, g1, c);
  }
  int best = 0;
  for (int i = 1; i < kNumCauses; ++i)
    if (v->by_cause[i] > v->by_cause[best]) best = i;
  v->cause = static_cast<Cause>(best);
}

}  // namespace gs::analyzer
