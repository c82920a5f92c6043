#include "analyzer/whatif/replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "analyzer/model/median.h"

namespace gs::analyzer::whatif {

namespace {

constexpr TimeNs kNever = std::numeric_limits<TimeNs>::min();

uint64_t StreamKey(uint32_t device, uint32_t stream) { return uint64_t{device} << 32 | stream; }

// A call's stream handle, as the key of the CUPTI stream its work ran on (handle_streams below).
// The legacy default stream's handle is 0 on every device.
uint64_t HandleKey(uint64_t handle, uint32_t device) {
  return handle != 0 ? handle : (uint64_t{1} << 63) | device;
}

}  // namespace

ReplayGraph::ReplayGraph(ReplayRecords records, std::vector<int32_t> step_work, ProfilerSteps profiler_steps)
    : records_(std::move(records)), step_work_(std::move(step_work)), profiler_steps_(std::move(profiler_steps)) {
  Build();
}

ProfilerSteps TieProfilerSteps(const ReplayRecords& records, const std::vector<TimeNs>& starts) {
  ProfilerSteps p;
  if (starts.size() < 2) return p;
  p.steps = static_cast<int32_t>(starts.size());
  p.call_step.assign(records.calls.size(), -1);
  TimeNs first_enter = 0;
  for (size_t i = 0; i < records.calls.size(); ++i) {
    const TimeNs enter = records.calls[i].enter_ns;
    const auto next = std::upper_bound(starts.begin(), starts.end(), enter);
    if (next == starts.begin()) continue;  // before the first step
    const int32_t k = static_cast<int32_t>(next - starts.begin()) - 1;
    p.call_step[i] = k;
    if (k == 0 && (p.first_call < 0 || enter < first_enter)) {
      p.first_call = static_cast<int32_t>(i);
      first_enter = enter;
    }
  }
  if (p.first_call < 0) return ProfilerSteps();
  p.first_before = first_enter - starts[0];
  return p;
}

void ReplayGraph::Build() {
  const std::vector<ApiCall>& calls = records_.calls;
  const std::vector<GpuActivity>& work = records_.work;
  call_nodes_.assign(calls.size(), CallNode{});
  work_nodes_.assign(work.size(), WorkNode{});
  parameters_.work = work.size();
  span_order_.resize(work.size());
  std::iota(span_order_.begin(), span_order_.end(), 0);
  std::sort(span_order_.begin(), span_order_.end(), [&work](int32_t a, int32_t b) {
    const GpuActivity& x = work[static_cast<size_t>(a)];
    const GpuActivity& y = work[static_cast<size_t>(b)];
    return std::tie(x.device, x.start_ns, x.end_ns) < std::tie(y.device, y.start_ns, y.end_ns);
  });

  // Program order per thread; a call that enters before the thread's current top-level call
  // returned is nested in it (the parent sorts first: same entry, later exit).
  std::vector<int32_t> order(calls.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const ApiCall& x = calls[static_cast<size_t>(a)];
    const ApiCall& y = calls[static_cast<size_t>(b)];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.enter_ns != y.enter_ns) return x.enter_ns < y.enter_ns;
    return x.exit_ns > y.exit_ns;
  });
  int32_t top = kNone;
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t i = order[k];
    const ApiCall& c = calls[static_cast<size_t>(i)];
    if (k > 0 && calls[static_cast<size_t>(order[k - 1])].thread != c.thread) top = kNone;
    CallNode& n = call_nodes_[static_cast<size_t>(i)];
    n.tail = c.exit_ns - c.enter_ns;
    if (top != kNone && c.enter_ns < calls[static_cast<size_t>(top)].exit_ns) {
      n.nested = true;
      n.prev = top;
      n.gap = c.enter_ns - calls[static_cast<size_t>(top)].enter_ns;
      ++parameters_.nested_calls;
      continue;
    }
    n.prev = top;
    n.gap = top == kNone ? 0 : c.enter_ns - calls[static_cast<size_t>(top)].exit_ns;
    top = i;
    ++parameters_.top_calls;
  }

  // Work to its launching call, and each stream's work in start order.
  absl::flat_hash_map<uint32_t, int32_t> by_correlation;
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].correlation != 0) by_correlation.try_emplace(calls[i].correlation, static_cast<int32_t>(i));
  absl::flat_hash_map<uint64_t, std::vector<int32_t>> streams;
  absl::flat_hash_map<uint64_t, uint64_t> handle_streams;  // HandleKey -> StreamKey
  std::vector<TimeNs> submitted(work.size());
  for (size_t w = 0; w < work.size(); ++w) {
    const GpuActivity& a = work[w];
    WorkNode& n = work_nodes_[w];
    if (a.correlation != 0) {
      auto it = by_correlation.find(a.correlation);
      if (it != by_correlation.end()) n.call = it->second;
    }
    if (n.call == kNone) ++parameters_.uncorrelated_work;
    submitted[w] = n.call != kNone ? calls[static_cast<size_t>(n.call)].enter_ns : a.start_ns;
    const uint64_t key = StreamKey(a.device, a.stream);
    streams[key].push_back(static_cast<int32_t>(w));
    if (n.call != kNone) {
      const ApiCall& c = calls[static_cast<size_t>(n.call)];
      handle_streams.try_emplace(HandleKey(c.stream, a.device), key);
    }
  }
  // Per stream: its work by start, and the running maximum of their submission times (for "the
  // last work submitted before t"; submission order is start order on a stream).
  absl::flat_hash_map<uint64_t, std::vector<TimeNs>> stream_submitted;
  for (auto& [key, list] : streams) {
    std::sort(list.begin(), list.end(), [&](int32_t x, int32_t y) {
      return work[static_cast<size_t>(x)].start_ns < work[static_cast<size_t>(y)].start_ns;
    });
    std::vector<TimeNs>& subs = stream_submitted[key];
    subs.reserve(list.size());
    for (size_t k = 0; k < list.size(); ++k) {
      const int32_t w = list[k];
      subs.push_back(std::max(k > 0 ? subs.back() : kNever, submitted[static_cast<size_t>(w)]));
      if (k > 0) work_nodes_[static_cast<size_t>(w)].stream_prev = list[k - 1];
    }
  }
  // Engines: per device and engine, in start order, each work that began after all earlier work
  // of its engine ended follows the one that ended last; one that began while earlier work ran
  // keeps its offset from the start of the work before it.
  auto engine_of = [](const GpuActivity& a) -> uint64_t {
    if (a.kind != ActivityKind::kMemcpy) return 0;
    if (a.direction == CopyDirection::kHostToDevice) return 1;
    if (a.direction == CopyDirection::kDeviceToHost) return 2;
    return 3;
  };
  {
    std::vector<int32_t> by_engine(work.size());
    std::iota(by_engine.begin(), by_engine.end(), 0);
    auto key = [&](int32_t w) { return uint64_t{work[static_cast<size_t>(w)].device} << 2 | engine_of(work[static_cast<size_t>(w)]); };
    std::sort(by_engine.begin(), by_engine.end(), [&](int32_t x, int32_t y) {
      if (key(x) != key(y)) return key(x) < key(y);
      return work[static_cast<size_t>(x)].start_ns < work[static_cast<size_t>(y)].start_ns;
    });
    int32_t last = kNone;  // the engine's work that ended last so far
    for (size_t k = 0; k < by_engine.size(); ++k) {
      const int32_t w = by_engine[k];
      if (k > 0 && key(by_engine[k - 1]) != key(w)) last = kNone;
      const GpuActivity& a = work[static_cast<size_t>(w)];
      WorkNode& n = work_nodes_[static_cast<size_t>(w)];
      if (last != kNone && a.start_ns >= work[static_cast<size_t>(last)].end_ns) {
        n.engine_prev = last;
      } else if (last != kNone) {  // began while `last` ran: no sooner after its predecessor's start
        const int32_t before = by_engine[k - 1];
        n.engine_started = before;
        n.engine_offset = a.start_ns - work[static_cast<size_t>(before)].start_ns;
      }
      if (last == kNone || a.end_ns > work[static_cast<size_t>(last)].end_ns) last = w;
    }
  }

  // The position in a stream's list of its first work submitted at t or later (the list's size
  // when none is).
  auto first_submitted_from = [&](uint64_t stream_key, TimeNs t) -> size_t {
    const std::vector<TimeNs>& subs = stream_submitted[stream_key];
    return static_cast<size_t>(std::lower_bound(subs.begin(), subs.end(), t) - subs.begin());
  };
  // The last work on a stream submitted strictly before t, or kNone.
  auto last_before = [&](uint64_t stream_key, TimeNs t) -> int32_t {
    const size_t k = first_submitted_from(stream_key, t);
    return k == 0 ? kNone : streams[stream_key][k - 1];
  };
  auto stream_of = [&](const ApiCall& c) -> const uint64_t* {
    auto it = handle_streams.find(HandleKey(c.stream, c.device));
    return it == handle_streams.end() ? nullptr : &it->second;
  };
  // Event records in entry order per event: the work each one follows.
  absl::flat_hash_map<uint64_t, std::vector<std::pair<TimeNs, int32_t>>> records;
  for (const ApiCall& c : calls) {
    if (c.api_class != ApiClass::kEventRecord) continue;
    const uint64_t* key = stream_of(c);
    records[c.address].push_back({c.enter_ns, key != nullptr ? last_before(*key, c.enter_ns) : kNone});
  }
  for (auto& [event, list] : records) std::sort(list.begin(), list.end());
  auto recorded_before = [&](uint64_t event, TimeNs t) -> int32_t {
    auto it = records.find(event);
    if (it == records.end()) return kNone;
    auto r = std::lower_bound(it->second.begin(), it->second.end(), std::make_pair(t, std::numeric_limits<int32_t>::min()));
    return r == it->second.begin() ? kNone : (r - 1)->second;
  };

  // Stream waits: the first work the waiting stream got after the wait waits for the event's work.
  std::vector<std::pair<int32_t, int32_t>> waits;  // (work, the work it waits for)
  for (const ApiCall& c : calls) {
    if (c.api_class != ApiClass::kStreamWaitEvent) continue;
    const int32_t awaited = recorded_before(c.address, c.enter_ns);
    const uint64_t* key = stream_of(c);
    if (awaited == kNone || key == nullptr) continue;
    const size_t k = first_submitted_from(*key, c.enter_ns);
    if (k < streams[*key].size()) waits.push_back({streams[*key][k], awaited});
  }
  std::sort(waits.begin(), waits.end());
  for (size_t k = 0; k < waits.size();) {
    WorkNode& n = work_nodes_[static_cast<size_t>(waits[k].first)];
    n.deps_begin = static_cast<uint32_t>(deps_.size());
    const int32_t w = waits[k].first;
    for (; k < waits.size() && waits[k].first == w; ++k) deps_.push_back(waits[k].second);
    n.deps_end = static_cast<uint32_t>(deps_.size());
  }

  // Launch latency and queued gap, fitted per device: a work whose other constraints (stream
  // predecessor, engine, event waits) were all met when its call entered shows the latency; one
  // whose stream predecessor ended last, and later than the call's entry plus that latency (it
  // was ready and waited for the device), shows the queued gap.
  std::vector<TimeNs> ready(work.size(), kNever);  // when the work's device-side constraints were met
  for (size_t w = 0; w < work.size(); ++w) {
    const WorkNode& n = work_nodes_[w];
    TimeNs& t = ready[w];
    if (n.stream_prev != kNone) t = std::max(t, work[static_cast<size_t>(n.stream_prev)].end_ns);
    if (n.engine_prev != kNone) t = std::max(t, work[static_cast<size_t>(n.engine_prev)].end_ns);
    if (n.engine_started != kNone)
      t = std::max(t, work[static_cast<size_t>(n.engine_started)].start_ns + n.engine_offset);
    for (uint32_t k = n.deps_begin; k < n.deps_end; ++k) t = std::max(t, work[static_cast<size_t>(deps_[k])].end_ns);
  }
  absl::flat_hash_map<uint32_t, std::vector<TimeNs>> latencies, queued_gaps;  // per device
  for (size_t w = 0; w < work.size(); ++w) {
    const WorkNode& n = work_nodes_[w];
    if (n.call == kNone) continue;
    const TimeNs enter = calls[static_cast<size_t>(n.call)].enter_ns;
    if (ready[w] <= enter) latencies[work[w].device].push_back(std::max<TimeNs>(0, work[w].start_ns - enter));
  }
  absl::flat_hash_map<uint32_t, TimeNs> latency, queued_gap;
  for (auto& [device, v] : latencies) latency[device] = Median(std::move(v));
  for (size_t w = 0; w < work.size(); ++w) {
    const WorkNode& n = work_nodes_[w];
    if (n.call == kNone || n.stream_prev == kNone || work_nodes_[static_cast<size_t>(n.stream_prev)].call == n.call)
      continue;
    const TimeNs enter = calls[static_cast<size_t>(n.call)].enter_ns;
    auto l = latency.find(work[w].device);
    if (work[static_cast<size_t>(n.stream_prev)].end_ns == ready[w] &&
        ready[w] > enter + (l != latency.end() ? l->second : 0)) {
      queued_gaps[work[w].device].push_back(std::max<TimeNs>(0, work[w].start_ns - ready[w]));
      work_nodes_[w].queued = true;
    }
  }
  for (auto& [device, v] : queued_gaps) queued_gap[device] = Median(std::move(v));
  if (!work.empty()) {
    parameters_.launch_latency_ns = latency.contains(work[0].device) ? latency[work[0].device] : 0;
    parameters_.queued_gap_ns = queued_gap.contains(work[0].device) ? queued_gap[work[0].device] : 0;
  }

  for (size_t w = 0; w < work.size(); ++w) {
    WorkNode& n = work_nodes_[w];
    const GpuActivity& a = work[w];
    const GpuActivity* prev = n.stream_prev != kNone ? &work[static_cast<size_t>(n.stream_prev)] : nullptr;
    const TimeNs measured_gap = prev != nullptr ? std::max<TimeNs>(0, a.start_ns - prev->end_ns) : 0;
    if (n.call == kNone) {
      n.anchored = prev == nullptr;
      n.after_prev = measured_gap;
      continue;
    }
    const TimeNs enter = calls[static_cast<size_t>(n.call)].enter_ns;
    const bool idle = ready[w] <= enter;
    const TimeNs own = std::max<TimeNs>(0, a.start_ns - enter);
    n.latency = idle ? own : std::min(own, latency.contains(a.device) ? latency[a.device] : own);
    if (prev != nullptr) {
      const bool same_call = work_nodes_[static_cast<size_t>(n.stream_prev)].call == n.call;
      n.after_prev = same_call ? measured_gap
                               : std::min(measured_gap, queued_gap.contains(a.device) ? queued_gap[a.device] : 0);
    }
  }

  // Each call's work (LaunchedWork): counted, then placed, in record order.
  launched_begin_.assign(calls.size() + 1, 0);
  for (const WorkNode& n : work_nodes_)
    if (n.call != kNone) ++launched_begin_[static_cast<size_t>(n.call) + 1];
  for (size_t i = 0; i < calls.size(); ++i) launched_begin_[i + 1] += launched_begin_[i];
  launched_.resize(launched_begin_.back());
  std::vector<uint32_t> next(launched_begin_.begin(), launched_begin_.end() - 1);
  for (size_t w = 0; w < work.size(); ++w)
    if (work_nodes_[w].call != kNone) launched_[next[static_cast<size_t>(work_nodes_[w].call)]++] = static_cast<int32_t>(w);

  // Synchronising calls: the work each one waits for.
  absl::flat_hash_map<uint32_t, std::vector<uint64_t>> device_streams;
  for (const auto& [key, list] : streams) device_streams[static_cast<uint32_t>(key >> 32)].push_back(key);
  for (auto& [device, keys] : device_streams) std::sort(keys.begin(), keys.end());
  std::vector<int32_t> awaited;
  for (size_t i = 0; i < calls.size(); ++i) {
    CallNode& n = call_nodes_[i];
    if (n.nested) continue;
    const ApiCall& c = calls[i];
    awaited.clear();
    switch (c.api_class) {
      case ApiClass::kStreamSync:
        if (const uint64_t* key = stream_of(c)) {
          awaited.push_back(last_before(*key, c.enter_ns));
          break;
        }
        // The trace does not say which stream (PyTorch-profiler traces give no stream for the
        // call): what the device's streams had been given before it, as a device sync.
        [[fallthrough]];
      case ApiClass::kDeviceSync: {
        // The calling thread's current device; a trace that does not say syncs its only device.
        auto it = device_streams.find(c.device);
        if (it == device_streams.end() && device_streams.size() == 1) it = device_streams.begin();
        if (it != device_streams.end())
          for (uint64_t key : it->second) awaited.push_back(last_before(key, c.enter_ns));
        break;
      }
      case ApiClass::kEventSync:
        awaited.push_back(recorded_before(c.address, c.enter_ns));
        break;
      case ApiClass::kMemcpy:  // a blocking copy waits for its own work
        if (!c.async) awaited.assign(LaunchedWork(i).begin(), LaunchedWork(i).end());
        break;
      default:
        break;
    }
    // Only work that ended before the call returned was waited for (a pageable upload returns
    // once its source is staged, before its copy ends).
    TimeNs waited_until = kNever;
    n.awaited_begin = static_cast<uint32_t>(awaited_.size());
    for (int32_t w : awaited) {
      if (w == kNone || work[static_cast<size_t>(w)].end_ns > c.exit_ns) continue;
      awaited_.push_back(w);
      waited_until = std::max(waited_until, work[static_cast<size_t>(w)].end_ns);
    }
    n.awaited_end = static_cast<uint32_t>(awaited_.size());
    if (n.awaited_end > n.awaited_begin) {
      n.tail = c.exit_ns - std::max(c.enter_ns, waited_until);
      ++parameters_.waits;
    }
  }
}

ReplayGraph::Times ReplayGraph::ReplayTimes(const ReplayChanges& changes) const {
  const std::vector<ApiCall>& calls = records_.calls;
  const std::vector<GpuActivity>& work = records_.work;
  const int32_t C = static_cast<int32_t>(calls.size());
  const int32_t N = 2 * C + static_cast<int32_t>(work.size());
  // Node ids: a call's entry i, its return C + i, a work's start 2C + w. Each is computed after
  // the nodes it depends on (a depth-first walk with an explicit stack); a dependency still in
  // progress (a cycle, which consistent records do not make) gives its measured time.
  std::vector<TimeNs> value(static_cast<size_t>(N));
  std::vector<uint8_t> state(static_cast<size_t>(N), 0);  // 0 new, 1 in progress, 2 done
  auto measured = [&](int32_t node) -> TimeNs {
    if (node < C) return calls[static_cast<size_t>(node)].enter_ns;
    if (node < 2 * C) return calls[static_cast<size_t>(node - C)].exit_ns;
    return work[static_cast<size_t>(node - 2 * C)].start_ns;
  };
  auto get = [&](int32_t node) { return state[static_cast<size_t>(node)] == 2 ? value[static_cast<size_t>(node)] : measured(node); };
  auto duration = [&](int32_t w) {
    const TimeNs d = changes.WorkDuration(static_cast<size_t>(w));
    return d != ReplayChanges::kKeep ? d : Duration(w);
  };
  auto end_of = [&](int32_t w) { return get(2 * C + w) + duration(w); };
  auto keep = [](TimeNs changed, TimeNs measured_ns) { return changed != ReplayChanges::kKeep ? changed : measured_ns; };
  auto for_each_dep = [&](int32_t node, auto&& f) {
    if (node < C) {
      const CallNode& n = call_nodes_[static_cast<size_t>(node)];
      if (n.prev != kNone) f(n.nested ? n.prev : C + n.prev);
    } else if (node < 2 * C) {
      const CallNode& n = call_nodes_[static_cast<size_t>(node - C)];
      f(node - C);
      if (changes.NoWait(static_cast<size_t>(node - C))) return;
      for (uint32_t k = n.awaited_begin; k < n.awaited_end; ++k) f(2 * C + awaited_[k]);
    } else {
      const WorkNode& n = work_nodes_[static_cast<size_t>(node - 2 * C)];
      if (n.call != kNone) f(n.call);
      if (n.stream_prev != kNone) f(2 * C + n.stream_prev);
      if (n.engine_prev != kNone) f(2 * C + n.engine_prev);
      if (n.engine_started != kNone) f(2 * C + n.engine_started);
      for (uint32_t k = n.deps_begin; k < n.deps_end; ++k) f(2 * C + deps_[k]);
    }
  };
  auto compute = [&](int32_t node) -> TimeNs {
    if (node < C) {
      const size_t i = static_cast<size_t>(node);
      const CallNode& n = call_nodes_[i];
      TimeNs t = calls[i].enter_ns;
      if (n.nested) {
        t = get(n.prev) + n.gap;
      } else if (n.prev != kNone) {
        t = get(C + n.prev) + keep(changes.HostGap(i), n.gap);
      }
      const TimeNs not_before = changes.NotBefore(i);
      return not_before != ReplayChanges::kKeep ? std::max(t, not_before) : t;
    }
    if (node < 2 * C) {
      const size_t i = static_cast<size_t>(node - C);
      const CallNode& n = call_nodes_[i];
      TimeNs from = get(node - C);
      if (!changes.NoWait(i))
        for (uint32_t k = n.awaited_begin; k < n.awaited_end; ++k) from = std::max(from, end_of(awaited_[k]));
      return from + keep(changes.CallCost(i), n.tail);
    }
    const int32_t w = node - 2 * C;
    const WorkNode& n = work_nodes_[static_cast<size_t>(w)];
    if (n.anchored) return work[static_cast<size_t>(w)].start_ns;
    TimeNs t = kNever;
    if (n.call != kNone) t = std::max(t, get(n.call) + n.latency);
    if (n.stream_prev != kNone)
      t = std::max(t, end_of(n.stream_prev) + keep(changes.WorkGapAfterPrevious(static_cast<size_t>(w)), n.after_prev));
    if (n.engine_prev != kNone) t = std::max(t, end_of(n.engine_prev));
    if (n.engine_started != kNone) t = std::max(t, get(2 * C + n.engine_started) + n.engine_offset);
    for (uint32_t k = n.deps_begin; k < n.deps_end; ++k) t = std::max(t, end_of(deps_[k]));
    return t;
  };
  std::vector<int32_t> stack;
  for (int32_t root = 0; root < N; ++root) {
    if (state[static_cast<size_t>(root)] != 0) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const int32_t node = stack.back();
      uint8_t& s = state[static_cast<size_t>(node)];
      if (s == 0) {
        s = 1;
        for_each_dep(node, [&](int32_t d) {
          if (state[static_cast<size_t>(d)] == 0) stack.push_back(d);
        });
      } else {
        stack.pop_back();
        if (s == 1) {
          value[static_cast<size_t>(node)] = compute(node);
          s = 2;
        }
      }
    }
  }
  Times t;
  t.enter.assign(value.begin(), value.begin() + C);
  t.exit.assign(value.begin() + C, value.begin() + 2 * C);
  t.start.assign(value.begin() + 2 * C, value.end());
  t.end.resize(t.start.size());
  for (size_t w = 0; w < t.start.size(); ++w) t.end[w] = t.start[w] + duration(static_cast<int32_t>(w));
  return t;
}

ReplayFigures ReplayGraph::Figures(const std::vector<TimeNs>& enter, const std::vector<TimeNs>& exit,
                                   const std::vector<TimeNs>& start, const std::vector<TimeNs>& end_times) const {
  ReplayFigures f;
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = kNever;
  for (size_t i = 0; i < enter.size(); ++i) {
    first = std::min(first, enter[i]);
    last = std::max(last, exit[i]);
  }
  // (device, (start, end)) of all work, and of compute work alone, in the measured order
  // (span_order_): sorted already unless the replay reordered work.
  std::vector<std::pair<uint64_t, std::pair<TimeNs, TimeNs>>> spans, compute;
  spans.reserve(start.size());
  compute.reserve(start.size());
  for (const int32_t i : span_order_) {
    const auto w = static_cast<size_t>(i);
    const TimeNs end = end_times[w];
    first = std::min(first, start[w]);
    last = std::max(last, end);
    spans.push_back({records_.work[w].device, {start[w], end}});
    if (IsCompute(records_.work[w].kind)) compute.push_back(spans.back());
  }
  if (first > last) return f;
  f.start_ns = first;
  f.wall_ns = last - first;
  auto union_ns = [](std::vector<std::pair<uint64_t, std::pair<TimeNs, TimeNs>>>* v, uint32_t* devices) {
    if (!std::is_sorted(v->begin(), v->end())) std::sort(v->begin(), v->end());
    TimeNs total = 0;
    for (size_t k = 0; k < v->size();) {
      const uint64_t device = (*v)[k].first;
      if (devices != nullptr) ++*devices;
      TimeNs covered_to = kNever;
      for (; k < v->size() && (*v)[k].first == device; ++k) {
        const auto [s, e] = (*v)[k].second;
        const TimeNs from = std::max(s, covered_to);
        if (e > from) total += e - from;
        covered_to = std::max(covered_to, e);
      }
    }
    return total;
  };
  f.busy_ns = union_ns(&spans, &f.devices);
  f.compute_busy_ns = union_ns(&compute, nullptr);
  if (f.wall_ns > 0 && f.devices > 0)
    f.utilization = static_cast<double>(f.compute_busy_ns) / (static_cast<double>(f.wall_ns) * f.devices);
  f.steps.reserve(step_work_.size());
  for (const int32_t w : step_work_)
    f.steps.push_back({start[static_cast<size_t>(w)], end_times[static_cast<size_t>(w)]});
  const ProfilerSteps& p = profiler_steps_;
  if (p.steps >= 2 && p.first_call >= 0) {
    // The end of the device work each complete step launched; the last of them ends the steps.
    TimeNs done = kNever;
    for (size_t w = 0; w < start.size(); ++w) {
      const int32_t c = work_nodes_[w].call;
      if (c < 0) continue;
      const int32_t k = p.call_step[static_cast<size_t>(c)];
      if (k >= 0 && k < p.steps - 1) done = std::max(done, end_times[w]);
    }
    const TimeNs begin = enter[static_cast<size_t>(p.first_call)] - p.first_before;
    if (done > begin) f.profiler_step_ns = (done - begin) / (p.steps - 1);
  }
  return f;
}

ReplayFigures ReplayGraph::Measured() const {
  std::vector<TimeNs> enter, exit, start, end;
  enter.reserve(records_.calls.size());
  exit.reserve(records_.calls.size());
  for (const ApiCall& c : records_.calls) {
    enter.push_back(c.enter_ns);
    exit.push_back(c.exit_ns);
  }
  start.reserve(records_.work.size());
  end.reserve(records_.work.size());
  for (const GpuActivity& a : records_.work) {
    start.push_back(a.start_ns);
    end.push_back(a.end_ns);
  }
  return Figures(enter, exit, start, end);
}

ReplayFigures ReplayGraph::Replay(const ReplayChanges& changes) const {
  const Times t = ReplayTimes(changes);
  return Figures(t.enter, t.exit, t.start, t.end);
}

ReplayCheck CheckReplay(const ReplayGraph& graph, double tolerance) {
  ReplayCheck check;
  check.tolerance = tolerance;
  check.measured = graph.Measured();
  check.replayed = graph.Replay();
  if (check.measured.wall_ns <= 0 || check.measured.busy_ns <= 0) {
    check.reason = "the trace has no timed device work to replay";
    return check;
  }
  check.wall_error = static_cast<double>(check.replayed.wall_ns - check.measured.wall_ns) / check.measured.wall_ns;
  check.busy_error = static_cast<double>(check.replayed.busy_ns - check.measured.busy_ns) / check.measured.busy_ns;
  const bool wall_ok = std::fabs(check.wall_error) <= tolerance;
  const bool busy_ok = std::fabs(check.busy_error) <= tolerance;
  check.ok = wall_ok && busy_ok;
  if (!wall_ok) {
    check.reason = absl::StrFormat(
        "replaying the trace's dependencies gives a wall time %+.1f%% off the measured one (more than "
        "%.0f%%): something it does not model set the pace (waits outside CUDA, contention between "
        "streams, implicit synchronisation)",
        100 * check.wall_error, 100 * tolerance);
  } else if (!busy_ok) {
    check.reason = absl::StrFormat(
        "replaying the trace's dependencies gives a device busy time %+.1f%% off the measured one "
        "(more than %.0f%%): work overlapped differently than the trace shows",
        100 * check.busy_error, 100 * tolerance);
  }
  return check;
}

}  // namespace gs::analyzer::whatif
