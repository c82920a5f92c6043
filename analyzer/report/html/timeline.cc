#include "analyzer/report/html/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "analyzer/json/json_value.h"

namespace gs::analyzer::html {

namespace {

// Past this the grid stops growing (2^52 ns ≈ 52 days per bucket); later records are clipped.
constexpr TimeNs kMaxWidth = TimeNs{1} << 52;

std::string Quote(const std::string& s) { return Json(s).Dump(0); }

TimeNs Overlap(TimeNs a0, TimeNs a1, TimeNs b0, TimeNs b1) {
  return std::max<TimeNs>(0, std::min(a1, b1) - std::max(a0, b0));
}

// Per-mille of the bucket width, rounded up so that a short kernel in a long bucket still shows.
void AppendPerMille(std::string* out, const std::vector<int64_t>& v, TimeNs width) {
  *out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t pm = v[i] <= 0 ? 0 : std::min<int64_t>(1000, (v[i] * 1000 + width - 1) / width);
    absl::StrAppend(out, i ? "," : "", pm);
  }
  *out += ']';
}

void AppendCounts(std::string* out, const std::vector<int64_t>& v) {
  *out += '[';
  for (size_t i = 0; i < v.size(); ++i) absl::StrAppend(out, i ? "," : "", v[i]);
  *out += ']';
}

const char* KindName(Lane::Kind k) {
  switch (k) {
    case Lane::Kind::kDevice: return "device";
    case Lane::Kind::kStream: return "stream";
    case Lane::Kind::kThread: return "thread";
    case Lane::Kind::kNvtx: return "nvtx";
  }
  return "?";
}

}  // namespace

// ---- BucketGrid --------------------------------------------------------------------------------

BucketGrid::BucketGrid(size_t buckets) : buckets_(std::max<size_t>(2, buckets & ~size_t{1})) {}

std::vector<int64_t>* BucketGrid::NewSeries() {
  series_.push_back(std::make_unique<std::vector<int64_t>>(buckets_, 0));
  return series_.back().get();
}

void BucketGrid::Double(bool keep_origin) {
  // Keeping the origin puts the old span in the left half (growing right); otherwise the old span
  // becomes the right half (growing left). Either way bucket pairs merge into one.
  const size_t half = buckets_ / 2;
  for (auto& s : series_) {
    std::vector<int64_t>& v = *s;
    if (keep_origin) {
      for (size_t i = 0; i < half; ++i) v[i] = v[2 * i] + v[2 * i + 1];
      std::fill(v.begin() + half, v.end(), 0);
    } else {
      for (size_t i = half; i-- > 0;) v[half + i] = v[2 * i] + v[2 * i + 1];
      std::fill(v.begin(), v.begin() + half, 0);
    }
  }
  if (!keep_origin) origin_ -= width_ * static_cast<TimeNs>(buckets_);
  width_ *= 2;
}

void BucketGrid::Cover(TimeNs start, TimeNs end) {
  if (!started_) {
    started_ = true;
    origin_ = start - ((start % width_) + width_) % width_;
  }
  while (width_ < kMaxWidth && start < origin_) Double(false);
  while (width_ < kMaxWidth && end > origin_ + width_ * static_cast<TimeNs>(buckets_)) Double(true);
}

int64_t BucketGrid::AddSpan(std::vector<int64_t>* series, TimeNs start, TimeNs end, double weight) {
  if (end <= start) return 0;
  Cover(start, end);
  const TimeNs limit = origin_ + width_ * static_cast<TimeNs>(buckets_);
  start = std::max(start, origin_);
  end = std::min(end, limit);
  if (end <= start) return 0;
  int64_t added = 0;
  size_t b = static_cast<size_t>((start - origin_) / width_);
  for (TimeNs t = start; t < end && b < buckets_; ++b) {
    const TimeNs bucket_end = origin_ + width_ * static_cast<TimeNs>(b + 1);
    const TimeNs upto = std::min(end, bucket_end);
    const int64_t ns = weight == 1.0 ? upto - t : std::llround(static_cast<double>(upto - t) * weight);
    (*series)[b] += ns;
    added += ns;
    t = upto;
  }
  return added;
}

void BucketGrid::AddPoint(std::vector<int64_t>* series, TimeNs t) {
  Cover(t, t + 1);
  if (t < origin_) return;
  size_t b = static_cast<size_t>((t - origin_) / width_);
  if (b < buckets_) ++(*series)[b];
}

// ---- Timeline ----------------------------------------------------------------------------------

Timeline::Timeline(const TimelineOptions& options) : options_(options), grid_(options.buckets) {}

Lane& Timeline::DeviceLane(size_t trace, uint32_t device) {
  auto [it, inserted] = lanes_.try_emplace({trace, 0, device, 0});
  Lane& l = it->second;
  if (inserted) {
    l.kind = Lane::Kind::kDevice;
    l.trace = trace;
    l.device = device;
    l.label = absl::StrCat("GPU ", device);
  }
  return l;
}

Lane& Timeline::StreamLane(size_t trace, uint32_t device, uint32_t stream) {
  DeviceLane(trace, device);  // a stream is always drawn under its device
  auto [it, inserted] = lanes_.try_emplace({trace, 0, device, uint64_t{1} + stream});
  Lane& l = it->second;
  if (inserted) {
    l.kind = Lane::Kind::kStream;
    l.trace = trace;
    l.device = device;
    l.stream = stream;
    l.label = absl::StrCat("stream ", stream);
    l.busy = grid_.NewSeries();
  }
  return l;
}

Lane& Timeline::ThreadLane(size_t trace, uint64_t thread) {
  auto [it, inserted] = lanes_.try_emplace({trace, 1, thread, 0});
  Lane& l = it->second;
  if (inserted) {
    l.kind = Lane::Kind::kThread;
    l.trace = trace;
    l.thread = thread;
    l.label = absl::StrCat("thread ", thread);
    l.busy = grid_.NewSeries();
  }
  return l;
}

void Timeline::AddExact(Lane* lane, const Segment& s) {
  ++lane->segments;
  if (!exact_) return;
  if (exact_count_ >= options_.max_exact_segments) {
    // Over budget: from here on every zoom level draws buckets (all lanes alike, so that no lane
    // looks emptier than another at the same zoom).
    exact_ = false;
    for (auto& [key, l] : lanes_) std::vector<Segment>().swap(l.exact);
    return;
  }
  ++exact_count_;
  lane->exact.push_back(s);
}

Lane& Timeline::NvtxLane(size_t trace, uint64_t thread) {
  ThreadLane(trace, thread);
  auto [it, inserted] = lanes_.try_emplace({trace, 1, thread, 1});
  Lane& l = it->second;
  if (inserted) {
    l.kind = Lane::Kind::kNvtx;
    l.trace = trace;
    l.thread = thread;
    l.label = "NVTX ranges";
    l.busy = grid_.NewSeries();
  }
  return l;
}

uint32_t Timeline::Name(const std::string& name) {
  auto [it, inserted] = name_ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

std::vector<const Lane*> Timeline::ShownThreads() const {
  std::vector<const Lane*> threads;
  for (const auto& [key, l] : lanes_)
    if (l.kind == Lane::Kind::kThread) threads.push_back(&l);
  std::stable_sort(threads.begin(), threads.end(),
                   [](const Lane* a, const Lane* b) { return a->busy_ns + a->segments > b->busy_ns + b->segments; });
  if (threads.size() > options_.max_threads) threads.resize(options_.max_threads);
  return threads;
}

bool Timeline::Shown(const std::vector<const Lane*>& threads, const Lane& lane) {
  if (lane.kind != Lane::Kind::kThread && lane.kind != Lane::Kind::kNvtx) return true;
  return std::any_of(threads.begin(), threads.end(),
                     [&](const Lane* t) { return t->trace == lane.trace && t->thread == lane.thread; });
}

size_t Timeline::lanes() const {
  const std::vector<const Lane*> shown = ShownThreads();
  size_t n = 0;
  for (const auto& [key, l] : lanes_) n += Shown(shown, l) ? 1 : 0;
  return n;
}

std::string Timeline::ToJson() const {
  const TimeNs width = grid_.width();
  const TimeNs origin = grid_.origin();
  std::string out;
  absl::StrAppend(&out, "{\"origin\":", origin, ",\"width\":", width, ",\"buckets\":", grid_.size(),
                  ",\"start\":", any_ ? first_ : 0, ",\"end\":", any_ ? last_ : 0,
                  ",\"exact\":", exact_ ? "true" : "false", ",\"exact_segments\":", exact_count_,
                  ",\"max_exact_segments\":", options_.max_exact_segments, ",\"records\":", records_);
  out += ",\"causes\":[";
  for (int c = 0; c < kNumCauses; ++c) absl::StrAppend(&out, c ? "," : "", "\"", CauseName(static_cast<Cause>(c)), "\"");
  out += "],\"states\":[";
  for (int s = 0; s < kNumHostStates; ++s)
    absl::StrAppend(&out, s ? "," : "", "\"", HostStateName(static_cast<HostState>(s)), "\"");
  out += "],\"names\":[";
  for (size_t i = 0; i < names_.size(); ++i) absl::StrAppend(&out, i ? "," : "", Quote(names_[i]));
  out += "]";

  // The busiest threads are shown; the rest are only counted.
  const std::vector<const Lane*> threads = ShownThreads();
  size_t all_threads = 0;
  for (const auto& [key, l] : lanes_) all_threads += l.kind == Lane::Kind::kThread ? 1 : 0;
  absl::StrAppend(&out, ",\"threads_hidden\":", all_threads - threads.size(), ",\"lanes\":[");

  bool first_lane = true;
  std::vector<int64_t> busy(grid_.size());
  for (const auto& [key, l] : lanes_) {
    if (!Shown(threads, l)) continue;
    absl::StrAppend(&out, first_lane ? "" : ",", "{\"kind\":\"", KindName(l.kind),
                    "\",\"trace\":", l.trace, ",\"label\":", Quote(l.label), ",\"segments\":", l.segments);
    first_lane = false;
    switch (l.kind) {
      case Lane::Kind::kDevice: {
        absl::StrAppend(&out, ",\"device\":", l.device);
        // Busy = the steady window (first work start to last work end) minus the analysis'
        // idle intervals in each bucket.
        std::fill(busy.begin(), busy.end(), 0);
        if (l.has_work) {
          absl::StrAppend(&out, ",\"work\":[", l.work_start, ",", l.work_end, "]");
          for (size_t b = 0; b < busy.size(); ++b) {
            TimeNs b0 = origin + width * static_cast<TimeNs>(b);
            busy[b] = Overlap(b0, b0 + width, l.work_start, l.work_end);
            for (const std::vector<int64_t>* idle : l.idle)
              if (idle) busy[b] -= (*idle)[b];
          }
        }
        out += ",\"busy\":";
        AppendPerMille(&out, busy, width);
        out += ",\"idle\":{";
        bool first = true;
        for (int c = 0; c < kNumCauses; ++c) {
          if (!l.idle[c]) continue;
          absl::StrAppend(&out, first ? "" : ",", "\"", CauseName(static_cast<Cause>(c)), "\":");
          AppendPerMille(&out, *l.idle[c], width);
          first = false;
        }
        out += "}";
        if (l.underfilled) {
          absl::StrAppend(&out, ",\"underfilled_ns\":", l.underfilled_ns, ",\"underfilled\":");
          AppendPerMille(&out, *l.underfilled, width);
        }
        break;
      }
      case Lane::Kind::kStream:
        absl::StrAppend(&out, ",\"device\":", l.device, ",\"stream\":", l.stream, ",\"busy\":");
        AppendPerMille(&out, *l.busy, width);
        break;
      case Lane::Kind::kNvtx:
        absl::StrAppend(&out, ",\"thread\":", l.thread, ",\"busy\":");
        AppendPerMille(&out, *l.busy, width);
        break;
      case Lane::Kind::kThread: {
        absl::StrAppend(&out, ",\"thread\":", l.thread, ",\"busy\":");
        AppendPerMille(&out, *l.busy, width);
        out += ",\"states\":{";
        bool first = true;
        for (int s = 0; s < kNumHostStates; ++s) {
          if (!l.states[s]) continue;
          absl::StrAppend(&out, first ? "" : ",", "\"", HostStateName(static_cast<HostState>(s)), "\":");
          AppendCounts(&out, *l.states[s]);
          first = false;
        }
        out += "}";
        break;
      }
    }
    // Exact segments sorted by start, as [start - previous start, duration, label] triples (the
    // first start relative to "start"): small numbers keep the page small.
    if (exact_) {
      std::vector<Segment> segs = l.exact;
      std::sort(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) { return a.start < b.start; });
      out += ",\"exact\":[";
      TimeNs prev = any_ ? first_ : 0;
      for (size_t i = 0; i < segs.size(); ++i) {
        absl::StrAppend(&out, i ? "," : "", segs[i].start - prev, ",", segs[i].end - segs[i].start, ",", segs[i].label);
        prev = segs[i].start;
      }
      out += "]";
    }
    out += "}";
  }
  out += "]}";
  return out;
}

// ---- TimelineRecorder --------------------------------------------------------------------------

TimelineRecorder::TimelineRecorder(Timeline* timeline, size_t trace, const TraceTables& tables, RecordSink* next)
    : t_(*timeline), trace_(trace), tables_(tables), next_(next) {}

void TimelineRecorder::See(TimeNs start, TimeNs end) {
  if (!t_.any_) {
    t_.any_ = true;
    t_.first_ = start;
    t_.last_ = end;
  }
  t_.first_ = std::min(t_.first_, start);
  t_.last_ = std::max(t_.last_, end);
}

void TimelineRecorder::OnApiCall(const ApiCall& call) {
  t_.AddRecords(1);
  if (call.exit_ns >= call.enter_ns) {
    See(call.enter_ns, call.exit_ns);
    Lane& lane = t_.ThreadLane(trace_, call.thread);
    t_.grid().AddSpan(lane.busy, call.enter_ns, call.exit_ns);
    lane.busy_ns += call.exit_ns - call.enter_ns;
    auto [it, inserted] = function_names_.try_emplace(call.function, 0);
    if (inserted) it->second = t_.Name(tables_.FunctionName(call.function));
    t_.AddExact(&lane, {call.enter_ns, call.exit_ns, it->second});
  }
  if (next_ != nullptr) next_->OnApiCall(call);
}

void TimelineRecorder::OnActivity(const GpuActivity& a) {
  t_.AddRecords(1);
  if (IsDeviceWork(a.kind) && a.end_ns > a.start_ns) {
    See(a.start_ns, a.end_ns);
    Lane& device = t_.DeviceLane(trace_, a.device);
    if (!device.has_work) {
      device.has_work = true;
      device.work_start = a.start_ns;
      device.work_end = a.end_ns;
    }
    device.work_start = std::min(device.work_start, a.start_ns);
    device.work_end = std::max(device.work_end, a.end_ns);
    Lane& lane = t_.StreamLane(trace_, a.device, a.stream);
    t_.grid().AddSpan(lane.busy, a.start_ns, a.end_ns);
    lane.busy_ns += a.end_ns - a.start_ns;
    std::string name = a.kind == ActivityKind::kKernel   ? "kernel"
                       : a.kind == ActivityKind::kMemset ? "memset"
                       : a.kind == ActivityKind::kMemcpy ? absl::StrCat("memcpy ", CopyDirectionName(a.direction))
                                                         : "collective";
    t_.AddExact(&lane, {a.start_ns, a.end_ns, t_.Name(name)});
  }
  if (next_ != nullptr) next_->OnActivity(a);
}

void TimelineRecorder::OnSample(const Sample& s) {
  t_.AddRecords(1);
  See(s.time_ns, s.time_ns);
  Lane& lane = t_.ThreadLane(trace_, s.thread);
  const int state = static_cast<int>(HostStateFromThreadState(s.state));
  if (!lane.states[state]) lane.states[state] = t_.grid().NewSeries();
  t_.grid().AddPoint(lane.states[state], s.time_ns);
  if (next_ != nullptr) next_->OnSample(s);
}

void TimelineRecorder::OnMemoryEvent(const MemoryEvent& event) {
  t_.AddRecords(1);
  if (next_ != nullptr) next_->OnMemoryEvent(event);
}

void TimelineRecorder::OnNvtxRange(const NvtxRange& r) {
  t_.AddRecords(1);
  // Outermost ranges only: they do not overlap on a thread, which is what a lane draws.
  if (r.depth == 0 && r.end_ns > r.start_ns) {
    See(r.start_ns, r.end_ns);
    Lane& lane = t_.NvtxLane(trace_, r.thread);
    t_.grid().AddSpan(lane.busy, r.start_ns, r.end_ns);
    lane.busy_ns += r.end_ns - r.start_ns;
    auto [it, inserted] = range_names_.try_emplace(r.name, 0);
    if (inserted) {
      std::string name = r.name ? tables_.StringValue(r.name) : std::string();
      it->second = t_.Name(name.empty() ? "(range)" : name);
    }
    t_.AddExact(&lane, {r.start_ns, r.end_ns, it->second});
  }
  if (next_ != nullptr) next_->OnNvtxRange(r);
}

void TimelineRecorder::OnInterval(uint32_t device, const IntervalVerdict& v) {
  if (v.end <= v.start) return;
  Lane& lane = t_.DeviceLane(trace_, device);
  const int cause = static_cast<int>(v.cause);
  if (!lane.idle[cause]) lane.idle[cause] = t_.grid().NewSeries();
  t_.grid().AddSpan(lane.idle[cause], v.start, v.end);
  t_.AddExact(&lane, {v.start, v.end, static_cast<uint32_t>(cause)});
}

void TimelineRecorder::OnFill(uint32_t device, const FillPiece& piece) {
  const double empty = 1.0 - piece.coverage;  // the share of the device its kernels left without work
  if (piece.end <= piece.start || empty <= 0) return;
  Lane& lane = t_.DeviceLane(trace_, device);
  if (!lane.underfilled) lane.underfilled = t_.grid().NewSeries();
  lane.underfilled_ns += t_.grid().AddSpan(lane.underfilled, piece.start, piece.end, empty);
}

void TimelineRecorder::Finish(const std::string& trace_label, const std::vector<DeviceDescription>& devices) {
  std::map<uint32_t, std::string> device_names;
  for (const DeviceDescription& d : devices) device_names[d.index] = d.name;
  for (auto& [key, l] : t_.lanes_) {
    if (l.trace != trace_) continue;
    if (l.kind == Lane::Kind::kDevice) {
      const std::string& name = device_names[l.device];
      l.label = absl::StrCat("GPU ", l.device, name.empty() ? "" : " (", name, name.empty() ? "" : ")",
                             trace_label.empty() ? "" : " · ", trace_label);
    } else if (l.kind == Lane::Kind::kThread) {
      std::string name = tables_.ThreadName(l.thread);
      l.label = name.empty() ? absl::StrCat("thread ", l.thread) : absl::StrCat(name, " (", l.thread, ")");
      if (!trace_label.empty()) absl::StrAppend(&l.label, " · ", trace_label);
    }
  }
}

// ---- TimelineObserver --------------------------------------------------------------------------

void TimelineObserver::BeginTrace(size_t index, const TraceImporter& importer, const TraceAnalyzer&) {
  recorder_ = std::make_unique<TimelineRecorder>(timeline_, index, importer.tables(), nullptr);
}

void TimelineObserver::OnIdleInterval(uint32_t device, const IntervalVerdict& verdict) {
  recorder_->OnInterval(device, verdict);
}

void TimelineObserver::OnFillPiece(uint32_t device, const FillPiece& piece) { recorder_->OnFill(device, piece); }

void TimelineObserver::EndTrace(size_t, const TraceImporter& importer, const TraceResult&) {
  recorder_->Finish(traces_ > 1 ? importer.info().Label() : std::string(), importer.info().devices);
  recorder_.reset();
}

}  // namespace gs::analyzer::html
