// json_report.cc — the documented JSON schema (analyzer/JSON.md describes every field).
#include "analyzer/units/units.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/json/json_value.h"
#include "analyzer/report/report.h"

namespace gs::analyzer {

namespace {

Json StepFiguresJson(const StepFigures& f, Json o) {
  return o.Set("wall_ns", f.wall_ns)
      .Set("busy_ns", f.busy_ns)
      .Set("compute_busy_ns", f.compute_busy_ns)
      .Set("idle_ns", f.idle_ns)
      .Set("utilization", f.utilization)
      .Set("work", f.work);
}

// devices[].complete_steps: the device over its trace's complete profiler steps (HTA's window).
Json StepWindowJson(const StepWindow& w) {
  Json rows = Json::Array();
  for (const StepRow& r : w.per_step) rows.Push(StepFiguresJson(r.figures, Json::Object().Set("step", r.step)));
  return StepFiguresJson(w.figures, Json::Object()
                                        .Set("window", StepWindowName(w))
                                        .Set("steps", w.steps)
                                        .Set("first_step", w.first_step)
                                        .Set("last_step", w.last_step)
                                        .Set("incomplete_step", w.incomplete_step))
      .Set("work_before_first_step", w.work_before_first_step)
      .Set("per_step", std::move(rows));
}

constexpr int kJsonSchemaVersion = 1;

Json FrameJson(const FrameInfo& f) {
  return Json::Object()
      .Set("function", f.function)
      .Set("file", f.file)
      .Set("line", f.line)
      .Set("module", f.module);
}

Json ByCause(const CauseNs& c) {
  Json j = Json::Object();
  for (int i = 0; i < kNumCauses; ++i)
    if (c[i] > 0) j.Set(CauseName(static_cast<Cause>(i)), c[i]);
  return j;
}

Json KernelConfigsJson(const std::vector<KernelConfigStats>& configs) {
  Json rows = Json::Array();
  for (const KernelConfigStats& k : configs) {
    const LaunchConfig& c = k.config;
    Json grid = Json::Array(), block = Json::Array(), stacks = Json::Array();
    for (int i = 0; i < 3; ++i) grid.Push(c.grid[i]), block.Push(c.block[i]);
    for (const KernelConfigStats::LaunchSite& site : k.stacks) {
      Json frames = Json::Array();
      for (const FrameInfo& f : site.frames) frames.Push(FrameJson(f));
      // Where its "launched from" starts (the text report's): the first frame of the user's code.
      const auto site_index = static_cast<int64_t>(SiteFrameIndex(site.frames));
      stacks.Push(Json::Object()
                      .Set("frames", std::move(frames))
                      .Set("site", site_index)
                      .Set("underfilled_ns", site.underfilled_ns));
    }
    const bool occ = k.occupancy_known;
    rows.Push(Json::Object()
                  .Set("trace", static_cast<int64_t>(k.trace))
                  .Set("device", k.device)
                  .Set("name", k.name)
                  .Set("grid", std::move(grid))
                  .Set("block", std::move(block))
                  .Set("registers_per_thread", c.has_resources ? Json(c.registers_per_thread) : Json())
                  .Set("shared_memory_bytes", c.has_resources ? Json(c.shared_memory_bytes) : Json())
                  .Set("count", k.count)
                  .Set("total_ns", k.total_ns)
                  .Set("sms", k.sm_count)
                  .Set("blocks_per_sm", k.fill.blocks_per_sm)
                  .Set("sm_coverage", k.fill.sm_coverage)
                  .Set("wave_coverage", k.fill.wave_coverage)
                  .Set("active_blocks_per_sm", occ ? Json(k.occupancy.active_blocks) : Json())
                  .Set("limiter", occ ? Json(LimiterNames(k.occupancy.limiters)) : Json())
                  .Set("theoretical_occupancy", occ ? Json(k.occupancy.theoretical_occupancy) : Json())
                  .Set("waves", occ ? Json(k.fill.waves) : Json())
                  .Set("wave_efficiency", occ ? Json(k.fill.wave_efficiency) : Json())
                  .Set("est_occupancy", occ ? Json(k.fill.est_occupancy) : Json())
                  .Set("underfilled_ns", k.underfilled_ns)
                  .Set("stacks", std::move(stacks)));
  }
  return rows;
}

Json SiteJson(const Site& s) {
  Json callers = Json::Array();
  for (const FrameInfo& f : s.callers) callers.Push(FrameJson(f));
  return Json::Object()
      .Set("api", s.api)
      .Set("frame", FrameJson(s.frame))
      .Set("callers", std::move(callers))
      .Set("idle_ns", s.idle_ns)
      .Set("count", s.count)
      .Set("share", s.share);
}

// Present only when the traces carry ProcessStats records (JSON.md "input_workers").
Json InputWorkersJson(const InputWorkersSummary& s) {
  Json workers = Json::Array();
  for (const WorkerEvidence& w : s.workers)
    workers.Push(Json::Object()
                     .Set("pid", w.pid)
                     .Set("comm", w.comm)
                     .Set("trace", w.trace)
                     .Set("depth", w.depth)
                     .Set("span_ns", w.span_ns)
                     .Set("cpu_ns", w.cpu_ns)
                     .Set("cpu_busy", w.cpu_busy)
                     .Set("probes", w.probes)
                     .Set("running", w.running)
                     .Set("disk_wait", w.disk_wait)
                     .Set("sleeping", w.sleeping)
                     .Set("read_bytes", w.read_bytes)
                     .Set("read_chars", w.read_chars));
  const HostEvidence& h = s.host;
  return Json::Object()
      .Set("verdict", WorkerVerdictName(s.verdict))
      .Set("evidence", s.evidence)
      .Set("worker_count", static_cast<uint64_t>(s.workers.size()))
      .Set("other_children", s.other_children)
      .Set("main_cpu_busy", s.main_cpu_busy)
      .Set("cpu_busy_mean", s.cpu_busy_mean)
      .Set("cpu_busy_min", s.cpu_busy_min)
      .Set("cpu_busy_max", s.cpu_busy_max)
      .Set("running_mean", s.running_mean)
      .Set("disk_wait_mean", s.disk_wait_mean)
      .Set("sleeping_mean", s.sleeping_mean)
      .Set("read_bytes", s.read_bytes)
      .Set("workers", std::move(workers))
      .Set("host", Json::Object()
                       .Set("online_cores", h.online_cores)
                       .Set("affinity_cores", h.affinity_cores)
                       .Set("busy", h.busy)
                       .Set("idle_cores", h.idle_cores)
                       .Set("iowait", h.iowait)
                       .Set("load_1m", static_cast<double>(h.load_1m))
                       .Set("span_ns", h.span_ns)
                       .Set("untracked_processes", h.untracked)
                       .Set("period_ms", h.period_ms)
                       .Set("collection_ns", h.collection_ns)
                       .Set("collections", h.collections));
}

Json TreeJson(const StackTreeNode& n, const ReportOptions& o, size_t depth) {
  Json j = FrameJson(n.frame);
  j.Set("idle_ns", n.inclusive_ns).Set("share", n.share);
  Json children = Json::Array();
  if (depth < o.tree_depth)
    for (const StackTreeNode& c : n.children)
      if (c.share >= o.tree_min_share) children.Push(TreeJson(c, o, depth + 1));
  j.Set("children", std::move(children));
  return j;
}

Json LossesJson(const LossCounters& l) {
  return Json::Object()
      .Set("any", l.Any())
      .Set("api_calls_dropped", l.ring_dropped)
      .Set("activities_dropped", l.cupti_dropped)
      .Set("other_dropped", l.other_dropped)
      .Set("samples_dropped", l.samples_dropped)
      .Set("stacks_truncated", l.stacks_truncated)
      .Set("activities_without_time", l.activities_without_time)
      .Set("corrupt_frames", l.corrupt_frames)
      .Set("missing_chunks", l.missing_chunks)
      .Set("truncated_bytes", l.truncated_bytes)
      .Set("late_activities", l.late_activities)
      .Set("unmatched_activities", l.unmatched_activities)
      .Set("folded_host_calls", l.folded_host_calls);
}

// The straggler's prediction: null unless asked for (--what-if); JSON.md, "ranks".
Json StragglerPredictionJson(const StragglerPrediction& p) {
  if (!p.ran) return Json();
  return Json::Object()
      .Set("ok", p.ok)
      .Set("reason", p.reason)
      .Set("steps", p.steps)
      .Set("measured_step_ns", p.measured_step_ns)
      .Set("replayed_step_ns", p.replayed_step_ns)
      .Set("predicted_step_ns", p.predicted_step_ns)
      .Set("step_error", p.step_error)
      .Set("tolerance", p.tolerance)
      .Set("measured_wall_ns", p.measured_wall_ns)
      .Set("predicted_wall_ns", p.predicted_wall_ns)
      .Set("measured_utilization", p.measured_utilization)
      .Set("predicted_utilization", p.predicted_utilization);
}

// The multi-rank section (JSON.md "ranks"): per-rank rows, clock alignment, straggler.
Json RanksJson(const RanksSection& r) {
  auto causes = [](const CauseNs& by_cause) {
    Json j = Json::Object();
    for (int c = 0; c < kNumCauses; ++c) j.Set(CauseName(static_cast<Cause>(c)), by_cause[c]);
    return j;
  };
  Json rows = Json::Array();
  for (const RankRow& row : r.rows) {
    rows.Push(Json::Object()
                  .Set("label", row.label)
                  .Set("rank", row.rank ? Json(*row.rank) : Json())
                  .Set("host", row.host)
                  .Set("pid", row.pid)
                  .Set("utilization", row.utilization)
                  .Set("steady_utilization", row.steady_utilization)
                  .Set("sm_coverage_utilization",
                       row.sm_coverage_utilization ? Json(*row.sm_coverage_utilization) : Json())
                  .Set("est_occupancy_utilization",
                       row.est_occupancy_utilization ? Json(*row.est_occupancy_utilization) : Json())
                  .Set("wall_ns", row.wall_ns)
                  .Set("steady_idle_ns", row.steady_idle_ns)
                  .Set("host_bound_idle_ns", row.host_bound_idle_ns)
                  .Set("idle_by_cause", causes(row.idle_by_cause))
                  .Set("top_cause", CauseName(row.top_cause))
                  .Set("steps", row.steps)
                  .Set("collective_ns", row.collective_ns)
                  .Set("collective_wait_ns", row.collective_wait_ns)
                  .Set("last_at_steps", row.last_at_steps)
                  .Set("delay_caused_ns", row.delay_caused_ns)
                  .Set("clock_offset_ns", row.clock_offset_ns));
  }
  const StragglerVerdict& v = r.straggler;
  Json straggler;  // null when there is none
  if (v.found) {
    Json stacks = Json::Array();
    for (const RankStack& st : v.stacks) {
      Json frames = Json::Array();
      for (const std::string& f : st.frames) frames.Push(f);
      stacks.Push(Json::Object()
                      .Set("frames", std::move(frames))
                      .Set("idle_ns", st.idle_ns)
                      .Set("step_host_bound_ns", st.step_host_bound_ns)
                      .Set("cause", CauseName(st.cause)));
    }
    straggler = Json::Object()
                    .Set("label", v.label)
                    .Set("rank", v.rank ? Json(*v.rank) : Json())
                    .Set("last_at_steps", v.last_at_steps)
                    .Set("steps_with_delay", v.steps_with_delay)
                    .Set("delay_caused_ns", v.delay_caused_ns)
                    .Set("delay_share", v.delay_share)
                    .Set("idle_ns", v.idle_ns)
                    .Set("host_bound_idle_ns", v.host_bound_idle_ns)
                    .Set("evidence", v.evidence)
                    .Set("stacks", std::move(stacks))
                    .Set("prediction", StragglerPredictionJson(v.prediction));
  }
  Json notes = Json::Array();
  for (const std::string& n : r.notes) notes.Push(n);
  return Json::Object()
      .Set("rows", std::move(rows))
      .Set("world_size", r.world_size ? Json(*r.world_size) : Json())
      .Set("steps_compared", r.steps_compared)
      .Set("step_ns", r.step_ns)
      .Set("run_ns", r.run_ns)
      .Set("total_delay_ns", r.total_delay_ns)
      .Set("clocks", Json::Object()
                         .Set("method", r.clocks.method)
                         .Set("boots", r.clocks.boots)
                         .Set("hosts", r.clocks.hosts)
                         .Set("residual_error_ns", r.clocks.residual_error_ns)
                         .Set("realtime_unmeasured", r.clocks.realtime_unmeasured)
                         .Set("collective_end_spread_ns", r.clocks.collective_end_spread_ns))
      .Set("straggler", std::move(straggler))
      .Set("notes", std::move(notes));
}

class JsonFormat final : public ReportFormat {
 public:
  std::string_view name() const override { return "json"; }
  std::string Render(const Analysis& a, const ReportOptions& o) const override {
    Json root = Json::Object();
    root.Set("schema_version", kJsonSchemaVersion);
    root.Set("losses", LossesJson(a.losses));
    Json warnings = Json::Array();
    for (const std::string& w : a.warnings) warnings.Push(w);
    root.Set("warnings", std::move(warnings));

    Json traces = Json::Array();
    for (const TraceInfo& t : a.traces) {
      Json j = Json::Object();
      j.Set("path", t.path).Set("host", t.host).Set("pid", t.pid);
      j.Set("rank", t.rank ? Json(*t.rank) : Json());
      j.Set("capture_mode", t.capture_mode).Set("clean_end", t.losses.clean_end);
      j.Set("cuda_runtime", t.cuda_runtime.empty() ? Json() : Json(t.cuda_runtime));
      j.Set("cupti_cuda_major", t.cupti_cuda_major != 0 ? Json(static_cast<int64_t>(t.cupti_cuda_major)) : Json());
      j.Set("cupti_version", t.cupti_version != 0 ? Json(static_cast<int64_t>(t.cupti_version)) : Json());
      traces.Push(std::move(j));
    }
    root.Set("traces", std::move(traces));
    root.Set("events", a.events);
    root.Set("utilization", a.Utilization());
    root.Set("steady_utilization", a.SteadyUtilization());

    Json devices = Json::Array();
    for (const DeviceSummary& d : a.devices) {
      Json samples = Json::Array();
      for (double v : d.utilization_samples) samples.Push(v);
      Json complete_steps;  // null: no step window
      if (d.step_window.steps > 0) complete_steps = StepWindowJson(d.step_window);
      devices.Push(Json::Object()
                       .Set("label", d.label)
                       .Set("trace", static_cast<int64_t>(d.trace))
                       .Set("device", d.device)
                       .Set("name", d.name)
                       .Set("wall_ns", d.wall_ns)
                       .Set("busy_ns", d.busy_ns)
                       .Set("compute_busy_ns", d.compute_busy_ns)
                       .Set("copy_busy_ns", d.copy_busy_ns)
                       .Set("idle_ns", d.idle_ns)
                       .Set("leading_idle_ns", d.leading_idle_ns)
                       .Set("trailing_idle_ns", d.trailing_idle_ns)
                       .Set("steady_wall_ns", d.steady_wall_ns)
                       .Set("steady_idle_ns", d.steady_idle_ns)
                       .Set("utilization", d.utilization)
                       .Set("steady_utilization", d.steady_utilization)
                       .Set("steady_window", kFirstToLastWindow)
                       .Set("complete_steps", std::move(complete_steps))
                       .Set("busy_fraction", d.busy_fraction)
                       .Set("kernels", d.kernels)
                       .Set("copies", d.copies)
                       .Set("memsets", d.memsets)
                       .Set("idle_intervals", d.idle_intervals)
                       .Set("sm_coverage_busy_ns", d.has_fill ? Json(d.sm_coverage_busy_ns) : Json())
                       .Set("sm_coverage_utilization", d.has_fill ? Json(d.sm_coverage_utilization) : Json())
                       .Set("est_occupancy_busy_ns", d.has_occupancy ? Json(d.est_occupancy_busy_ns) : Json())
                       .Set("est_occupancy_utilization",
                            d.has_occupancy ? Json(d.est_occupancy_utilization) : Json())
                       .Set("utilization_samples", Json::Object()
                                                       .Set("period_ns", d.sample_period_ns)
                                                       .Set("values", std::move(samples))));
    }
    root.Set("devices", std::move(devices));
    root.Set("kernel_configs", KernelConfigsJson(a.kernel_configs));
    root.Set("idle_ns", a.steady_idle_ns);

    Json causes = Json::Array();
    for (const CauseShare& c : a.causes)
      causes.Push(Json::Object()
                      .Set("cause", CauseName(c.cause))
                      .Set("idle_ns", c.idle_ns)
                      .Set("share", c.share)
                      .Set("intervals", c.intervals)
                      .Set("description", CauseDescription(c.cause)));
    root.Set("causes", std::move(causes));
    Json states = Json::Object();
    for (int i = 0; i < kNumHostStates; ++i)
      states.Set(HostStateName(static_cast<HostState>(i)), a.host_work_states[i]);
    root.Set("host_work_states", std::move(states));
    root.Set("host_work_exact_ns", a.host_work_exact_ns);
    Json state_stacks = Json::Object();
    for (int i = 0; i < kNumHostStates; ++i) {
      Json list = Json::Array();
      for (const StackShare& s : a.host_state_stacks[i]) {
        Json frames = Json::Array();
        for (const FrameInfo& f : s.frames) frames.Push(FrameJson(f));
        list.Push(Json::Object().Set("frames", std::move(frames)).Set("idle_ns", s.idle_ns).Set("share", s.share));
      }
      state_stacks.Set(HostStateName(static_cast<HostState>(i)), std::move(list));
    }
    root.Set("host_state_stacks", std::move(state_stacks));

    const IntervalSummary& in = a.intervals;
    Json hist = Json::Array();
    for (const HistogramBucket& b : in.histogram)
      hist.Push(Json::Object()
                    .Set("label", b.label)
                    .Set("min_ns", b.min_ns)
                    .Set("max_ns", b.max_ns ? Json(b.max_ns) : Json())
                    .Set("count", b.count)
                    .Set("idle_ns", b.idle_ns));
    Json sync_sites = Json::Array(), resume_sites = Json::Array(), longest = Json::Array();
    for (const Site& s : in.after_sync_sites) sync_sites.Push(SiteJson(s));
    for (const Site& s : in.resume_sites) resume_sites.Push(SiteJson(s));
    for (const IntervalExample& e : in.longest)
      longest.Push(Json::Object()
                       .Set("device", e.device)
                       .Set("start_ns", e.start_ns)
                       .Set("end_ns", e.end_ns)
                       .Set("offset_ns", e.offset_ns)
                       .Set("duration_ns", e.end_ns - e.start_ns)
                       .Set("cause", CauseName(e.cause))
                       .Set("by_cause", ByCause(e.by_cause))
                       .Set("evidence", e.evidence)
                       .Set("resume", Json::Object().Set("api", e.resume_api).Set("frame", FrameJson(e.resume_frame)))
                       .Set("preceding", Json::Object().Set("api", e.preceding_api).Set("frame", FrameJson(e.preceding_frame)))
                       .Set("after_sync", e.after_sync));
    root.Set("intervals", Json::Object()
                              .Set("count", in.count)
                              .Set("idle_ns", in.idle_ns)
                              .Set("rules", Json::Object()
                                                .Set("queued_before", in.queued_before)
                                                .Set("host_late", in.host_late)
                                                .Set("no_host_call", in.no_host_call)
                                                .Set("with_stream_wait", in.with_stream_wait))
                              .Set("histogram", std::move(hist))
                              .Set("after_sync", Json::Object()
                                                     .Set("idle_ns", in.after_sync_idle_ns)
                                                     .Set("count", in.after_sync_count)
                                                     .Set("sites", std::move(sync_sites)))
                              .Set("resume_sites", std::move(resume_sites))
                              .Set("longest", std::move(longest)));

    Json stacks = Json::Array();
    for (const StackShare& s : a.top_stacks) {
      Json frames = Json::Array();
      for (const FrameInfo& f : s.frames) frames.Push(FrameJson(f));
      stacks.Push(Json::Object()
                      .Set("frames", std::move(frames))
                      .Set("idle_ns", s.idle_ns)
                      .Set("share", s.share)
                      .Set("cause", CauseName(s.cause))
                      .Set("by_cause", ByCause(s.by_cause)));
    }
    root.Set("top_stacks", std::move(stacks));
    root.Set("stack_tree", TreeJson(a.stack_tree, o, 0));

    const CopySummary& c = a.copies;
    Json dirs = Json::Array();
    for (const CopyStats& s : c.directions)
      dirs.Push(Json::Object()
                    .Set("direction", CopyDirectionName(s.direction))
                    .Set("count", s.count)
                    .Set("bytes", s.bytes)
                    .Set("time_ns", s.time_ns)
                    .Set("bandwidth", s.bandwidth)
                    .Set("pageable_bytes", s.pageable_bytes)
                    .Set("pageable_time_ns", s.pageable_time_ns)
                    .Set("pinned_bytes", s.pinned_bytes)
                    .Set("pinned_time_ns", s.pinned_time_ns)
                    .Set("pageable_call_ns", s.pageable_call_ns)
                    .Set("link_share", c.link_peak_bandwidth > 0 ? Json(s.bandwidth / c.link_peak_bandwidth) : Json()));
    root.Set("copies", Json::Object()
                           .Set("bytes", c.bytes)
                           .Set("pageable_bytes", c.pageable_bytes)
                           .Set("pageable_share", c.pageable_share)
                           .Set("pageable_staging_ns", c.pageable_staging_ns)
                           .Set("est_pinning_gain_ns", c.est_pinning_gain_ns)
                           .Set("gain_model", c.gain_model)
                           .Set("link_peak_bandwidth", c.link_peak_bandwidth > 0 ? Json(c.link_peak_bandwidth) : Json())
                           .Set("directions", std::move(dirs)));

    const MemorySummary& m = a.memory;
    root.Set("memory", Json::Object()
                           .Set("peak_bytes", m.peak_bytes)
                           .Set("peak_usage_bytes", m.peak_usage_bytes)
                           .Set("total_memory", m.total_memory ? Json(m.total_memory) : Json())
                           .Set("peak_share", m.total_memory ? Json(m.peak_share) : Json())
                           .Set("allocations", m.allocations)
                           .Set("frees", m.frees)
                           .Set("host_allocations", m.host_allocations)
                           .Set("oom_errors", m.oom_errors)
                           .Set("explanation", m.explanation));

    if (a.input_workers.present) root.Set("input_workers", InputWorkersJson(a.input_workers));
    if (a.ranks.present) root.Set("ranks", RanksJson(a.ranks));

    // Present only when graph launches replayed kernels (JSON.md "graphs").
    if (a.graphs.kernels > 0) {
      Json sites = Json::Array();
      for (const GraphCaptureSite& s : a.graphs.capture_sites) {
        Json callers = Json::Array();
        for (const FrameInfo& f : s.callers) callers.Push(FrameJson(f));
        sites.Push(Json::Object()
                       .Set("api", s.api)
                       .Set("frame", FrameJson(s.frame))
                       .Set("callers", std::move(callers))
                       .Set("device_ns", s.device_ns)
                       .Set("kernels", s.kernels)
                       .Set("nodes", s.nodes)
                       .Set("share", s.share));
      }
      root.Set("graphs", Json::Object()
                             .Set("kernels", a.graphs.kernels)
                             .Set("device_ns", a.graphs.device_ns)
                             .Set("unresolved_kernels", a.graphs.unresolved_kernels)
                             .Set("unresolved_ns", a.graphs.unresolved_ns)
                             .Set("capture_sites", std::move(sites)));
    }

    // Present only when the traces carry NVTX ranges (JSON.md "nvtx_ranges").
    if (!a.nvtx_ranges.empty()) {
      Json ranges = Json::Array();
      for (const NvtxRangeStats& r : a.nvtx_ranges)
        ranges.Push(Json::Object()
                        .Set("domain", r.domain)
                        .Set("name", r.name)
                        .Set("count", r.count)
                        .Set("threads", r.threads)
                        .Set("wall_ns", r.wall_ns)
                        .Set("busy_ns", r.busy_ns)
                        .Set("idle_ns", r.idle_ns)
                        .Set("idle_share", r.idle_share));
      root.Set("nvtx_ranges", std::move(ranges));
    }

    Json recs = Json::Array();
    for (const Recommendation& r : a.recommendations) {
      Json rec = Json::Object()
                     .Set("kind", r.kind)
                     .Set("text", r.text)
                     .Set("idle_share", r.idle_share)
                     .Set("est_gain_ns", r.est_gain_ns);
      if (r.prediction.present) {
        Json p = Json::Object()
                     .Set("wall_ns_before", a.replay.measured_wall_ns)
                     .Set("wall_ns", r.prediction.wall_ns)
                     .Set("utilization_before", a.replay.measured_utilization)
                     .Set("utilization", r.prediction.utilization);
        if (r.prediction.step_ns > 0)
          p.Set("step_ns_before", a.replay.measured_step_ns).Set("step_ns", r.prediction.step_ns);
        if (r.prediction.bound_wall_ns > 0)
          p.Set("workers", r.prediction.workers)
              .Set("bound_wall_ns", r.prediction.bound_wall_ns)
              .Set("bound_utilization", r.prediction.bound_utilization)
              .Set("producers_unseen", r.prediction.producers_unseen);
        rec.Set("prediction", std::move(p));
      }
      recs.Push(std::move(rec));
    }
    root.Set("recommendations", std::move(recs));
    if (a.replay.ran)
      root.Set("replay", Json::Object()
                             .Set("ok", a.replay.ok)
                             .Set("measured_wall_ns", a.replay.measured_wall_ns)
                             .Set("replayed_wall_ns", a.replay.replayed_wall_ns)
                             .Set("wall_error", a.replay.wall_error)
                             .Set("busy_error", a.replay.busy_error)
                             .Set("tolerance", a.replay.tolerance)
                             .Set("measured_utilization", a.replay.measured_utilization)
                             .Set("replayed_utilization", a.replay.replayed_utilization)
                             .Set("joined_steps", a.replay.joined_steps)
                             .Set("measured_step_ns", a.replay.measured_step_ns)
                             .Set("replayed_step_ns", a.replay.replayed_step_ns)
                             .Set("step_marks", a.replay.step_marks)
                             .Set("reason", a.replay.reason));
    Json notes = Json::Array();
    for (const std::string& n : a.notes) notes.Push(n);
    root.Set("notes", std::move(notes));
    return root.Dump(2) + "\n";
  }
};

}  // namespace

const ReportFormat& JsonReportFormat() {
  static const JsonFormat* const kFormat = new JsonFormat();
  return *kFormat;
}

}  // namespace gs::analyzer
