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

// What a recorded wait says the thread was doing (the agent records IDLE, LOCK_WAIT, IO_WAIT);
// a wait without a state still blocked, measured: `other`, never `unsampled`.
HostState WaitState(const HostWait& w) {
  const HostState s = HostStateFromThreadState(w.state);
  return s == HostState::kUnsampled ? HostState::kOther : s;
}

// True when `t` lies inside one of `waits` (ordered by start). `*cursor` only moves forward:
// successive queries must not go back in time. It stops at the first wait that ends after t; a
// wait holding t is that one (the ones before it ended by t, the ones after start no earlier).
inline bool InsideWait(const RingDeque<HostWait>& waits, size_t* cursor, TimeNs t) {
  while (*cursor < waits.size() && waits[*cursor].end_ns <= t) ++*cursor;
  return *cursor < waits.size() && waits[*cursor].start_ns <= t;
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

inline void GapClassifier::AddHost(IntervalVerdict* v, TimeNs ns, uint64_t key, HostState state) const {
  if (ns <= 0) return;
  Add(v, Cause::kHostWork, ns, key, state);
  v->host_states[static_cast<int>(state)] += ns;
}

inline void GapClassifier::HostPiece(IntervalVerdict* v, TimeNs from, TimeNs to, uint64_t key, HostState state,
                                     const RingDeque<HostWait>* waits, size_t* j, uint64_t next_key) const {
  if (waits != nullptr) {
    while (from < to) {
      // The first wait (by start) that ends after `from`: it covers `from` if it started by then
      // (waits that overlap each other count once, the earlier-started first).
      while (*j < waits->size() && (*waits)[*j].end_ns <= from) ++*j;
      if (*j == waits->size() || (*waits)[*j].start_ns >= to) break;
      const HostWait& w = (*waits)[*j];
      if (w.start_ns > from) {
        AddHost(v, w.start_ns - from, key, state);
        from = w.start_ns;
      }
      const TimeNs e = std::min(w.end_ns, to);
      AddHost(v, e - from, w.stack ? w.stack : next_key, WaitState(w));
      v->host_exact_ns += e - from;
      from = e;
    }
  }
  AddHost(v, to - from, key, state);
}

inline void GapClassifier::HostSegment(IntervalVerdict* v, TimeNs a, TimeNs b, const ApiCall* prev,
                                const ApiCall& next, const ThreadHistory* thread) const {
  if (b <= a) return;
  const uint64_t next_key = ChargeKey(next);
  if (prev != nullptr && IsEnqueue(prev->api_class) && IsEnqueue(next.api_class) &&
      next.enter_ns - prev->exit_ns <= options_.back_to_back_max_ns) {
    Add(v, Cause::kLaunchOverhead, b - a, next_key);
    return;
  }
  // [a, b) lies in one stretch of host work: the thread's time outside CUDA calls from `prev`'s
  // exit to `next`'s entry. The thread's recorded waits (blocking libc calls) say exactly what it
  // did in the part of [a, b) they cover; they are clipped to [a, b), so a wait that began inside
  // a CUDA call counts from the call's exit (HostPiece). The rest is told by samples: only
  // samples taken in the stretch and not inside a wait say what the thread did there (a sample
  // taken inside a call — a futex in a blocking copy, a sync's wait — or across one says nothing
  // about the host work on either side; one taken inside a wait says nothing the wait does not
  // say better), so others never count here. Each such sample stands for the time it is the
  // nearest such sample of the stretch to: from the midpoint with the previous one to the
  // midpoint with the next (at most kMaxStandNs/2 each way), less the waits in it; the first and
  // last reach to the stretch's ends. So samples that are not evenly spaced (a running thread's
  // waits for its signal handler to run, later on a busy machine; a blocked thread's is taken on
  // time) weigh what they cover, not one each, and time that neither a wait nor a sample of the
  // stretch covers is `unsampled`, not charged to the state of a sample taken elsewhere.
  const RingDeque<HostWait>* waits =
      thread != nullptr && !thread->waits.empty() ? &thread->waits : nullptr;
  size_t wj = 0;  // HostPiece's wait cursor: pieces come in time order
  if (thread != nullptr && !thread->samples.empty()) {
    constexpr TimeNs kMaxStandNs = 200000000;  // 200 ms: beyond that a neighbour is not one
    const RingDeque<Sample>& s = thread->samples;
    // The stretch's start: `prev` exited at or before a (a is the later of g0 and its exit).
    const TimeNs s0 = prev != nullptr ? std::min(prev->exit_ns, a) : std::numeric_limits<TimeNs>::min();
    const TimeNs s1 = std::max(next.enter_ns, b);
    size_t i = 0;
    while (i < s.size() && s[i].time_ns < a) ++i;  // pruned: the front is near g0
    // The stretch's last sample before a (not taken inside a wait) reaches into it.
    for (size_t k = i; k > 0 && s[k - 1].time_ns >= s0; --k) {
      size_t from_first = 0;  // queried backwards: a fresh cursor each time
      if (waits == nullptr || !InsideWait(*waits, &from_first, s[k - 1].time_ns)) {
        i = k - 1;
        break;
      }
    }
    size_t sc = 0;  // InsideWait's cursor: queried in time order from s[i] on
    auto counts = [&](size_t k) {
      return s[k].time_ns < s1 && (waits == nullptr || !InsideWait(*waits, &sc, s[k].time_ns));
    };
    while (i < s.size() && s[i].time_ns < s1 && !counts(i)) ++i;
    TimeNs covered_from = a;
    TimeNs charged = 0;
    bool has_prev = false;
    TimeNs prev_t = 0;  // the previous sample that counts (in the stretch, not in a wait)
    while (i < s.size()) {
      const TimeNs t = s[i].time_ns;
      if (t >= s1) break;  // taken inside `next` or after it
      size_t n = i + 1;  // the next sample that counts, if any
      while (n < s.size() && s[n].time_ns < s1 && !counts(n)) ++n;
      TimeNs from = t - kMaxStandNs / 2, to = t + kMaxStandNs / 2;
      if (has_prev) from = std::max(from, t - (t - prev_t) / 2);
      if (n < s.size() && s[n].time_ns < s1) to = std::min(to, t + (s[n].time_ns - t) / 2);
      if (from >= b) break;
      has_prev = true;
      prev_t = t;
      const size_t here = i;
      i = n;
      from = std::max(from, covered_from);
      to = std::min(to, b);
      if (to <= from) continue;
      // A hole between samples too far apart.
      HostPiece(v, covered_from, from, next_key, HostState::kUnsampled, waits, &wj, next_key);
      HostPiece(v, from, to, s[here].stack ? s[here].stack : next_key,
                HostStateFromThreadState(s[here].state), waits, &wj, next_key);
      charged += to - from;
      covered_from = to;
    }
    if (charged > 0) {
      HostPiece(v, covered_from, b, next_key, HostState::kUnsampled, waits, &wj, next_key);
      return;
    }
  }
  HostPiece(v, a, b, next_key, HostState::kUnsampled, waits, &wj, next_key);
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
  v->host_exact_ns = 0;
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
  // The largest cause, the first on ties. Its nanoseconds stay in a register: reloading
  // by_cause[best] made each step's load wait for the previous step's compare (a serial chain
  // that took ~5% of the whole analysis, BENCHMARKS.md "Reader and analyzer throughput").
  int best = 0;
  TimeNs best_ns = v->by_cause[0];
  for (int i = 1; i < kNumCauses; ++i) {
    if (v->by_cause[i] > best_ns) {
      best = i;
      best_ns = v->by_cause[i];
    }
  }
  v->cause = static_cast<Cause>(best);
}

}  // namespace gs::analyzer
