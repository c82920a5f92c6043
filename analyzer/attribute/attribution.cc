#include "analyzer/attribute/attribution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/classify/stack_view.h"
#include "analyzer/units/units.h"

namespace gs::analyzer {

namespace {
bool ExampleLonger(const IntervalVerdict& a, const IntervalVerdict& b) { return a.length() > b.length(); }
}  // namespace

IdleAttribution::IdleAttribution(const AnalysisOptions& options, const TraceTables& tables, NvtxAccounting* nvtx)
    : options_(options), tables_(tables), nvtx_(*nvtx) {
  intervals_.histogram = IdleHistogramBuckets();
}

void IdleAttribution::ChargeGap(uint32_t device, const IntervalVerdict& v) {
  for (int i = 0; i < kNumCauses; ++i) causes_[i] += v.by_cause[i];
  for (int i = 0; i < kNumHostStates; ++i) host_states_[i] += v.host_states[i];
  host_exact_ns_ += v.host_exact_ns;
  ++dominant_[static_cast<int>(v.cause)];
  for (const Charge& c : v.charges) {
    // Consecutive gaps mostly charge the same few stacks: the cache saves the hash lookup.
    charge_cache_.Get(charges_, c.key)[static_cast<int>(c.cause)] += c.ns;
    if (c.cause == Cause::kHostWork && c.state != HostState::kUnsampled)
      state_charges_[static_cast<int>(c.state)][c.key] += c.ns;
  }
  if (nvtx_.enabled() && v.has_resume) {
    // The charges are consecutive pieces of [start, end) on the resuming call's thread: NVTX
    // ranges open there at the same time become outer frames of these stacks at Finish.
    TimeNs t = v.start;
    for (const Charge& c : v.charges) {
      nvtx_.AddCharge(v.resume->thread, t, c.ns, c.key, c.cause);
      t += c.ns;
    }
  }

  TimeNs len = v.length();
  ++intervals_.count;
  intervals_.idle_ns += len;
  for (HistogramBucket& b : intervals_.histogram) {
    if (len >= b.min_ns && (b.max_ns == 0 || len < b.max_ns)) {
      ++b.count;
      b.idle_ns += len;
      break;
    }
  }
  switch (v.rule) {
    case GapRule::kNoHostCall: ++intervals_.no_host_call; break;
    case GapRule::kQueuedBefore:
      ++intervals_.queued_before;
      if (v.stream_wait_enter >= 0) ++intervals_.with_stream_wait;
      break;
    case GapRule::kHostLate: ++intervals_.host_late; break;
  }
  if (v.has_resume) {
    SiteAcc& s = resume_cache_.Get(resume_sites_, ChargeKey(*v.resume));
    s.ns += len;
    ++s.count;
    s.function = v.resume->function;
  }
  if (v.after_sync) {
    intervals_.after_sync_idle_ns += len;
    ++intervals_.after_sync_count;
    SiteAcc& s = sync_sites_[ChargeKey(*v.preceding)];
    s.ns += len;
    ++s.count;
    s.function = v.preceding->function;
  }
  // Keep the longest intervals as examples (a min-heap of bounded size, without charges).
  if (options_.longest_intervals == 0) return;
  if (longest_.size() < options_.longest_intervals || len > longest_.front().verdict.length()) {
    Example ex;
    ex.device = device;
    ex.verdict.start = v.start;
    ex.verdict.end = v.end;
    ex.verdict.rule = v.rule;
    ex.verdict.cause = v.cause;
    ex.verdict.by_cause = v.by_cause;
    ex.verdict.has_resume = v.has_resume;
    if (v.has_resume) ex.resume = *v.resume;
    ex.verdict.has_preceding = v.has_preceding;
    if (v.has_preceding) ex.preceding = *v.preceding;
    ex.verdict.after_sync = v.after_sync;
    ex.verdict.stream_wait_enter = v.stream_wait_enter;
    auto cmp = [](const Example& x, const Example& y) { return ExampleLonger(x.verdict, y.verdict); };
    if (longest_.size() == options_.longest_intervals) {
      std::pop_heap(longest_.begin(), longest_.end(), cmp);
      longest_.pop_back();
    }
    longest_.push_back(std::move(ex));
    std::push_heap(longest_.begin(), longest_.end(), cmp);
  }
}

std::vector<FrameInfo> IdleAttribution::StackFrames(uint32_t stack) const {
  return ViewStack(tables_.ResolveStack(stack));
}

std::vector<FrameInfo> IdleAttribution::KeyFrames(uint64_t key) const { return ChargeKeyFrames(tables_, key); }

std::string IdleAttribution::Evidence(const IntervalVerdict& v, const ApiCall* resume_call,
                                    const ApiCall* preceding_call) const {
  if (v.rule != GapRule::kNoHostCall && resume_call == nullptr) return "";
  const ApiCall& resume = *resume_call;
  switch (v.rule) {
    case GapRule::kNoHostCall:
      return "no host call recorded for the work that ended the gap";
    case GapRule::kQueuedBefore: {
      std::string s = absl::StrCat(tables_.FunctionName(resume.function), " had returned ",
                                   FormatDuration(v.start - resume.exit_ns),
                                   " before the device went idle; the work started ",
                                   FormatDuration(v.length()), " after (launch latency limit ",
                                   FormatDuration(options_.launch_latency_max_ns), ")");
      if (v.stream_wait_enter >= 0)
        absl::StrAppend(&s, "; cudaStreamWaitEvent on its stream ",
                        FormatDuration(resume.enter_ns - v.stream_wait_enter), " before it");
      return s;
    }
    case GapRule::kHostLate: {
      std::string thread = tables_.ThreadName(resume.thread);
      std::string s = absl::StrCat("thread ", resume.thread, thread.empty() ? "" : " (", thread,
                                   thread.empty() ? "" : ")");
      if (resume.enter_ns >= v.start) {
        absl::StrAppend(&s, " entered ", tables_.FunctionName(resume.function), " ",
                        FormatDuration(resume.enter_ns - v.start), " after the device went idle:");
      } else {  // the call that submitted the work was already running as the device went idle
        absl::StrAppend(&s, " was inside ", tables_.FunctionName(resume.function), " (entered ",
                        FormatDuration(v.start - resume.enter_ns), " before the device went idle):");
      }
      bool first = true;
      for (int i = 0; i < kNumCauses; ++i) {
        if (v.by_cause[i] <= 0) continue;
        absl::StrAppend(&s, first ? " " : ", ", CauseTitle(static_cast<Cause>(i)), " ",
                        FormatDuration(v.by_cause[i]));
        first = false;
      }
      if (v.after_sync && preceding_call != nullptr)
        absl::StrAppend(&s, "; began after ", tables_.FunctionName(preceding_call->function),
                        " returned");
      return s;
    }
  }
  return "";
}

void IdleAttribution::Finish(TimeNs t0, TraceResult* r) {
  r->causes = causes_;
  r->dominant = dominant_;
  r->host_states = host_states_;
  r->host_exact_ns = host_exact_ns_;
  r->intervals = intervals_;
  // Idle time charged while NVTX ranges were open moves to the same stack under range frames.
  NvtxAccounting::Result nvtx = nvtx_.Finish(tables_);
  for (const auto& [key, ns] : nvtx.moved)
    for (int i = 0; i < kNumCauses; ++i) charges_[key][i] -= ns[i];
  for (int i = 0; i < kNumHostStates; ++i)
    for (const auto& [key, ns] : state_charges_[i])
      r->state_stacks.push_back({static_cast<HostState>(i), KeyFrames(key), ns});
  for (const auto& [key, ns] : charges_) {
    if (std::all_of(ns.begin(), ns.end(), [](TimeNs x) { return x == 0; })) continue;
    r->stacks.push_back({KeyFrames(key), ns});
  }
  for (NvtxChargedStack& s : nvtx.stacks) {
    std::vector<FrameInfo> frames = KeyFrames(s.key);
    frames.insert(frames.end(), s.ranges.begin(), s.ranges.end());
    r->stacks.push_back({std::move(frames), s.by_cause});
  }
  r->nvtx_ranges = std::move(nvtx.ranges);
  auto sites = [this](const absl::flat_hash_map<uint64_t, SiteAcc>& from, std::vector<Site>* to) {
    for (const auto& [key, acc] : from) {
      Site s;
      s.api = tables_.FunctionName(acc.function);
      if (!(key & kFunctionKeyBit) && key != 0)
        SiteWithCallers(StackFrames(static_cast<uint32_t>(key)), kSiteCallers, &s.frame, &s.callers);
      s.idle_ns = acc.ns;
      s.count = acc.count;
      to->push_back(std::move(s));
    }
  };
  sites(resume_sites_, &r->intervals.resume_sites);
  sites(sync_sites_, &r->intervals.after_sync_sites);
  std::sort(longest_.begin(), longest_.end(),
            [](const Example& x, const Example& y) { return ExampleLonger(x.verdict, y.verdict); });
  for (const Example& ex : longest_) {
    IntervalExample e;
    e.device = absl::StrCat("GPU ", ex.device);
    e.start_ns = ex.verdict.start;
    e.end_ns = ex.verdict.end;
    e.offset_ns = ex.verdict.start - t0;
    e.cause = ex.verdict.cause;
    e.by_cause = ex.verdict.by_cause;
    e.evidence = Evidence(ex.verdict, &ex.resume, &ex.preceding);
    e.after_sync = ex.verdict.after_sync;
    if (ex.verdict.has_resume) {
      e.resume_api = tables_.FunctionName(ex.resume.function);
      e.resume_frame = SiteFrame(StackFrames(ex.resume.stack));
    }
    if (ex.verdict.has_preceding) {
      e.preceding_api = tables_.FunctionName(ex.preceding.function);
      e.preceding_frame = SiteFrame(StackFrames(ex.preceding.stack));
    }
    r->intervals.longest.push_back(std::move(e));
  }
}

}  // namespace gs::analyzer
