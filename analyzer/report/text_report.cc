// text_report.cc — the terminal report: data loss first, then per device utilisation (with the
// nvidia-smi-style sparkline), causes, stacks, sites, copies, memory, recommendations. Every line
// fits `width` columns (long prose is wrapped, stacks are cut).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analyzer/classify/site_frame.h"
#include "analyzer/units/units.h"
#include "analyzer/report/report.h"

namespace gs::analyzer {

namespace {

// gsanalyze report --what-if (analyzer/whatif/predictions.h): what a fix buys, as replayed.
std::string PredictionLine(const ReplaySummary& replay, const Prediction& p) {
  std::string line = absl::StrCat("What-if (replayed): run ", FormatDuration(replay.measured_wall_ns), " -> ",
                                  FormatDuration(p.wall_ns));
  if (p.step_ns > 0)
    absl::StrAppend(&line, ", step ", FormatDuration(replay.measured_step_ns), " -> ", FormatDuration(p.step_ns));
  absl::StrAppend(&line, ", GPU-Util ", FormatPercent(replay.measured_utilization), " -> ",
                  FormatPercent(p.utilization));
  if (p.workers > 0) {
    absl::StrAppend(&line, " with ", p.workers, p.workers == 1 ? " input worker" : " input workers",
                    " (input preparation free: ", FormatDuration(p.bound_wall_ns), ", ",
                    FormatPercent(p.bound_utilization), ")");
  } else if (p.bound_wall_ns > 0 && p.producers_unseen) {
    absl::StrAppend(&line, " with input preparation free (the batches come from a queue whose producers the "
                           "trace does not show: how many more it takes is not predicted)");
  } else if (p.bound_wall_ns > 0) {
    absl::StrAppend(&line, " with input preparation free (no more workers fit the host's cores: "
                           "cheaper batches are the way)");
  }
  return line;
}

std::string ReplayCheckLine(const ReplaySummary& r) {
  if (!r.ok && r.replayed_wall_ns == 0) return absl::StrCat("Replay check: no prediction is shown: ", r.reason, ".");
  const std::string figures = absl::StrFormat(
      "the traces' dependencies%s replay to %s (measured %s, %+.1f%%), device busy %+.1f%%",
      r.joined_steps ? absl::StrCat(", the ranks joined at ", r.joined_steps, " steps,") : "",
      FormatDuration(r.replayed_wall_ns), FormatDuration(r.measured_wall_ns), 100 * r.wall_error, 100 * r.busy_error);
  const std::string steps =
      r.measured_step_ns > 0 && !r.step_marks.empty()
          ? absl::StrCat(" (steps marked by ", r.step_marks, ": ", FormatDuration(r.replayed_step_ns),
                         " a step, measured ", FormatDuration(r.measured_step_ns), ")")
          : std::string();
  if (r.ok)
    return absl::StrCat("Replay check: ", figures, steps, ": within ", FormatPercent(r.tolerance),
                        ", so each recommendation shows what it would buy.");
  return absl::StrCat("Replay check: ", figures, steps, "; no prediction is shown: ", r.reason, ".");
}

// The straggler brought to the other ranks' median host-bound idle (analyzer/whatif/step_join.h).
std::string StragglerPredictionLine(const StragglerVerdict& v) {
  const StragglerPrediction& p = v.prediction;
  if (!p.ok) return absl::StrCat("What-if: no prediction for the straggler: ", p.reason, ".");
  const std::string check = absl::StrFormat(
      "the ranks joined at their collectives replay a step to %s (measured %s; %+.1f%% from a rank's own steps)",
      FormatDuration(p.replayed_step_ns), FormatDuration(p.measured_step_ns), 100 * p.step_error);
  return absl::StrCat("What-if (ranks joined at their collectives): ", v.label,
                      " with the other ranks' median host-bound idle: step ", FormatDuration(p.measured_step_ns), " -> ",
                      FormatDuration(p.predicted_step_ns), ", run ", FormatDuration(p.measured_wall_ns), " -> ",
                      FormatDuration(p.predicted_wall_ns), ", GPU-Util ", FormatPercent(p.measured_utilization),
                      " -> ", FormatPercent(p.predicted_utilization), " (", p.steps, " steps; ", check,
                      ": within ", FormatPercent(p.tolerance), ").");
}

// Columns a UTF-8 string takes (every code point counts one: the report uses no wide glyphs).
size_t Columns(absl::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Cuts to `width` columns, ending with "…" when cut.
std::string Cut(absl::string_view s, size_t width) {
  if (Columns(s) <= width) return std::string(s);
  if (width == 0) return "";
  std::string out;
  size_t cols = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = s[i];
    if ((c & 0xC0) != 0x80) {
      if (cols + 1 >= width) break;
      ++cols;
    }
    out.push_back(static_cast<char>(c));
  }
  return out + "…";
}

// Right-/left-aligns to `cols` columns (printf pads bytes, and "µ" is two of them).
std::string R(const std::string& s, size_t cols) {
  size_t c = Columns(s);
  return c >= cols ? s : std::string(cols - c, ' ') + s;
}
std::string L(const std::string& s, size_t cols) {
  size_t c = Columns(s);
  return c >= cols ? s : s + std::string(cols - c, ' ');
}

// ANSI styles for whole lines (applied after a line has been cut to the width, so that escape
// sequences never count as columns). Only with ReportOptions::color.
constexpr const char* kBold = "\033[1m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kCyan = "\033[36m";
constexpr const char* kReset = "\033[0m";

// Green from 80% GPU-Util, yellow from 50%, red below: how worried to be at a glance.
const char* UtilizationStyle(double utilization) {
  return utilization >= 0.8 ? kGreen : utilization >= 0.5 ? kYellow : kRed;
}

class Writer {
 public:
  explicit Writer(int width, bool color = false) : width_(std::max(40, width)), color_(color) {}
  size_t width() const { return static_cast<size_t>(width_); }
  void Line(absl::string_view s = "", const char* style = nullptr) {
    if (color_ && style != nullptr && !s.empty()) {
      absl::StrAppend(&out_, style, Cut(s, width()), kReset, "\n");
    } else {
      absl::StrAppend(&out_, Cut(s, width()), "\n");
    }
  }
  // Wraps prose at word boundaries; continuation lines get `indent` spaces.
  void Wrap(const std::string& first_prefix, const std::string& text, size_t indent, const char* style = nullptr) {
    std::string line(first_prefix);
    size_t cols = Columns(line);
    bool empty = true;
    for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
      size_t w = Columns(word);
      if (!empty && cols + 1 + w > width()) {
        Line(line, style);
        line = std::string(indent, ' ');
        cols = indent;
        empty = true;
      }
      if (!empty) {
        line += ' ';
        ++cols;
      }
      absl::StrAppend(&line, word);
      cols += w;
      empty = false;
    }
    Line(line, style);
  }
  void Section(absl::string_view title, const char* style = kBold) {
    Line();
    Line(title, style);
  }
  std::string Take() { return std::move(out_); }

 private:
  int width_;
  bool color_;
  std::string out_;
};

// Which CUDA the trace's process used, for its trace line: " (CUDA 12 CUPTI 24, libcudart.so.12)";
// "" when the trace does not say (older traces, imported ones).
std::string CudaVersions(const TraceInfo& t) {
  std::string parts;
  if (t.cupti_cuda_major != 0) {
    parts = absl::StrCat("CUDA ", t.cupti_cuda_major, " CUPTI ", t.cupti_version);
  }
  if (!t.cuda_runtime.empty()) absl::StrAppend(&parts, parts.empty() ? "" : ", ", t.cuda_runtime);
  return parts.empty() ? "" : absl::StrCat(" (", parts, ")");
}

std::string FrameText(const FrameInfo& f) {
  std::string s = f.function;
  if (!f.file.empty()) {
    std::string file = f.file;
    size_t slash = file.rfind('/');
    if (slash != std::string::npos) file = file.substr(slash + 1);
    absl::StrAppend(&s, " (", file, f.line ? absl::StrCat(":", f.line) : "", ")");
  }
  return s;
}

// "leaf ← caller ← ... ← root", starting at the first frame outside the runtime.
std::string StackText(const std::vector<FrameInfo>& frames) {
  FrameInfo site = SiteFrame(frames);
  std::vector<std::string> parts;
  bool started = false;
  for (const FrameInfo& f : frames) {
    if (!started && !(f == site)) continue;
    started = true;
    parts.push_back(FrameText(f));
  }
  return absl::StrJoin(parts, " ← ");
}

std::string Bar(double share, int cols) {
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  double units = std::clamp(share, 0.0, 1.0) * cols * 8;
  int full = static_cast<int>(units) / 8, rest = static_cast<int>(units) % 8;
  std::string s;
  for (int i = 0; i < full; ++i) s += "█";
  s += kEighths[rest];
  return s;
}

// Averages `values` into `cols` columns and draws one block per column.
std::string Sparkline(const std::vector<double>& values, size_t cols) {
  static const char* kLevels[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || cols == 0) return "";
  cols = std::min(cols, values.size());
  std::string s;
  for (size_t c = 0; c < cols; ++c) {
    size_t lo = c * values.size() / cols, hi = std::max(lo + 1, (c + 1) * values.size() / cols);
    double sum = 0;
    for (size_t i = lo; i < hi; ++i) sum += values[i];
    double v = sum / (hi - lo);
    int level = v <= 0 ? 0 : std::clamp(1 + static_cast<int>(v * 8 - 1e-9), 1, 8);
    s += kLevels[level];
  }
  return s;
}

void DataLoss(const Analysis& a, Writer* w) {
  const LossCounters& l = a.losses;
  std::vector<std::string> parts;
  auto add = [&](uint64_t n, const char* what) {
    if (n) parts.push_back(absl::StrCat(n, " ", what));
  };
  add(l.ring_dropped, "API calls dropped (agent ring full)");
  add(l.cupti_dropped, "GPU activities dropped by CUPTI");
  add(l.other_dropped, "other records dropped");
  add(l.samples_dropped, "samples dropped");
  add(l.activities_without_time, "activities without timestamps");
  add(l.corrupt_frames, "damaged frames/batches skipped");
  add(l.missing_chunks, "chunks missing");
  if (l.truncated_bytes) parts.push_back(absl::StrCat(FormatBytes(l.truncated_bytes), " cut off the end"));
  add(l.late_activities, "activities arrived after the sort window");
  add(l.unmatched_activities, "gaps ended by work without a host call");
  add(l.folded_host_calls, "host calls beyond the history bound");
  if (parts.empty()) {
    w->Line("Data loss: none", kGreen);
  } else {
    w->Wrap("Data loss: ", absl::StrJoin(parts, "; "), 2, kRed);
  }
  for (const std::string& warning : a.warnings) w->Wrap("warning: ", warning, 2, kYellow);
}

// A trace with profiler steps: the device over its complete steps (HTA's window) beside the
// first-to-last figures, then per step.
void StepWindowLines(const DeviceSummary& d, Writer* w) {
  const StepWindow& s = d.step_window;
  if (s.steps == 0) return;
  auto figures = [](const StepFigures& f) {
    return absl::StrCat("idle ", FormatDuration(f.idle_ns), ", busy ", FormatDuration(f.busy_ns), " of ",
                        FormatDuration(f.wall_ns), ", GPU-Util ", FormatPercent(f.utilization));
  };
  w->Wrap("  ", absl::StrCat(StepWindowName(s), ": ", figures(s.figures), " (", kFirstToLastWindow, ": idle ",
                             FormatDuration(d.steady_idle_ns), ", GPU-Util ", FormatPercent(d.steady_utilization),
                             "; ProfilerStep#", s.incomplete_step, " left out, incomplete)"),
          6);
  constexpr size_t kMaxRows = 8;
  for (size_t i = 0; i < s.per_step.size() && i < kMaxRows; ++i)
    w->Line(absl::StrCat("    ProfilerStep#", s.per_step[i].step, ": ", figures(s.per_step[i].figures)));
  if (s.per_step.size() > kMaxRows)
    w->Line(absl::StrCat("    ... ", s.per_step.size() - kMaxRows, " more steps in --json (devices[].complete_steps)"));
}

void Devices(const Analysis& a, Writer* w) {
  for (const DeviceSummary& d : a.devices) {
    w->Section(absl::StrCat(d.label, " — GPU-Util ", FormatPercent(d.utilization), " over ",
                            FormatDuration(d.wall_ns), " (steady state ", FormatPercent(d.steady_utilization), ")"),
               UtilizationStyle(d.steady_utilization));
    w->Line(absl::StrCat("  busy ", FormatPercent(d.busy_fraction), " = compute ",
                         FormatPercent(d.wall_ns ? double(d.compute_busy_ns) / d.wall_ns : 0), " + copy-only; copy engines busy ",
                         FormatPercent(d.wall_ns ? double(d.copy_busy_ns) / d.wall_ns : 0), "; ", d.kernels,
                         " kernels, ", d.copies, " copies, ", d.memsets, " memsets"));
    if (d.has_fill) {
      // GPU-Util counts a device busy while one kernel runs, whatever it fills (timeline/fill_timeline.h).
      w->Line(absl::StrCat("  filled: SM coverage ", FormatPercent(d.sm_coverage_utilization),
                           d.has_occupancy ? absl::StrCat(" · est. occupancy ≤ ", FormatPercent(d.est_occupancy_utilization))
                                           : std::string(),
                           " (GPU-Util ", FormatPercent(d.utilization),
                           d.fill_kernels < d.kernels ? absl::StrCat("; ", d.fill_kernels, " of ", d.kernels, " kernels sized")
                                                      : std::string(),
                           ")"));
    }
    std::string prefix = "  GPU-Util every 1/6 s |";
    std::string suffix = absl::StrCat("| steady avg ", FormatPercent(d.steady_utilization));
    size_t room = w->width() > Columns(prefix) + Columns(suffix) ? w->width() - Columns(prefix) - Columns(suffix) : 0;
    w->Line(absl::StrCat(prefix, Sparkline(d.utilization_samples, room), suffix));
    w->Line(absl::StrCat("  idle ", FormatDuration(d.idle_ns), ": start-up ", FormatDuration(d.leading_idle_ns),
                         " · steady state ", FormatDuration(d.steady_idle_ns), " in ", d.idle_intervals,
                         " gaps · tear-down ", FormatDuration(d.trailing_idle_ns)));
    StepWindowLines(d, w);
  }
}

// The launch configurations that left the most of the device empty while they ran.
void UnderfilledKernels(const Analysis& a, Writer* w) {
  constexpr size_t kRows = 5;
  if (a.kernel_configs.empty() || a.kernel_configs.front().underfilled_ns <= 0) return;
  w->Section("Under-filled kernels (busy, but few SMs given work: duration × (1 − SM coverage))");
  for (size_t i = 0; i < a.kernel_configs.size() && i < kRows; ++i) {
    const KernelConfigStats& k = a.kernel_configs[i];
    if (k.underfilled_ns <= 0) break;
    const LaunchConfig& c = k.config;
    const std::string full = k.DisplayName();
    std::string name = full.size() > 48 ? full.substr(0, 47) + "…" : full;
    std::string shape = absl::StrCat("grid ", c.grid[0], "x", c.grid[1], "x", c.grid[2], " block ", c.block[0], "x",
                                     c.block[1], "x", c.block[2]);
    std::string fill = absl::StrCat("coverage ", FormatPercent(k.fill.wave_coverage), " of ", k.sm_count, " SMs");
    if (k.occupancy_known)
      absl::StrAppend(&fill, ", ", k.occupancy.active_blocks, " blocks/SM (", k.occupancy.limiters & kLimitRegisters ? "registers"
                      : k.occupancy.limiters & kLimitSharedMemory ? "shared memory" : k.occupancy.limiters & kLimitWarps ? "warps"
                      : "block slots", "), ", k.fill.waves, k.fill.waves == 1 ? " wave" : " waves");
    w->Line(absl::StrFormat("  %2d. %s %6d× %s", static_cast<int>(i + 1), R(FormatDuration(k.underfilled_ns), 9),
                            static_cast<int64_t>(k.count), name));
    w->Line(absl::StrCat("        ", shape, " · ", fill));
    if (!k.stacks.empty() && !k.stacks.front().frames.empty())
      w->Line(absl::StrCat("        launched from ", StackText(k.stacks.front().frames)));
  }
}

void Causes(const Analysis& a, Writer* w) {
  w->Section(absl::StrCat("Why the GPU was idle (steady state, ", FormatDuration(a.steady_idle_ns), " in ",
                          a.intervals.count, " gaps; shares sum to 100%)"));
  if (a.steady_idle_ns == 0) {
    w->Line("  no idle time between the first and the last GPU work");
    return;
  }
  int bar = std::max(5, static_cast<int>(w->width()) - 60);
  w->Line(absl::StrCat("  ", L("cause", 16), " ", R("share", 6), " ", R("idle", 9), "  ", L("", bar + 1), "gaps where largest"));
  for (const CauseShare& c : a.causes) {
    if (c.idle_ns == 0) continue;
    std::string b = Bar(c.share, bar);
    b += std::string(static_cast<size_t>(bar) + 1 - Columns(b), ' ');
    w->Line(absl::StrFormat("  %-16s %6s %s  %s%d", CauseTitle(c.cause), FormatPercent(c.share),
                            R(FormatDuration(c.idle_ns), 9), b, c.intervals));
  }
  TimeNs host = a.causes[static_cast<int>(Cause::kHostWork)].idle_ns;
  TimeNs sampled = 0;
  for (int i = 1; i < kNumHostStates; ++i) sampled += a.host_work_states[i];
  if (host > 0 && sampled > 0) {
    std::vector<std::string> parts;
    for (int i = 0; i < kNumHostStates; ++i)
      if (a.host_work_states[i] > 0)
        parts.push_back(absl::StrCat(HostStateName(static_cast<HostState>(i)), " ",
                                     FormatPercent(double(a.host_work_states[i]) / host)));
    // How much of that is measured, not sampled: only traces with recorded waits have any.
    const bool waits = a.host_work_exact_ns > 0;
    w->Wrap(waits ? "  host work by thread state (waits and samples): " : "  host work by thread state (samples): ",
            absl::StrJoin(parts, ", "), 4);
    if (waits) {
      const TimeNs unsampled = a.host_work_states[static_cast<int>(HostState::kUnsampled)];
      w->Wrap("  host work measured: ",
              absl::StrCat("exact (recorded waits) ", FormatPercent(double(a.host_work_exact_ns) / host),
                           ", sampled ", FormatPercent(double(sampled - a.host_work_exact_ns) / host),
                           ", unsampled ", FormatPercent(double(unsampled) / host)),
              4);
    }
    // The stacks under each state (its top few), so that "waiting on I/O" names the read.
    for (int i = 1; i < kNumHostStates; ++i) {
      for (const StackShare& s : a.host_state_stacks[i])
        w->Line(absl::StrFormat("    %-9s %6s %s  %s", HostStateName(static_cast<HostState>(i)),
                                FormatPercent(double(s.idle_ns) / host), R(FormatDuration(s.idle_ns), 9),
                                StackText(s.frames)));
    }
  }
  const IntervalSummary& in = a.intervals;
  w->Wrap("  decided by: ", absl::StrCat(in.host_late, " gaps submitted late by the host, ", in.queued_before,
                                         " with work queued before the device went idle (", in.with_stream_wait,
                                         " after a cudaStreamWaitEvent), ", in.no_host_call,
                                         " with no host call for the work"), 4);
}

void TreeLines(const StackTreeNode& n, const ReportOptions& o, size_t depth, Writer* w) {
  if (depth > 0) {
    std::string indent(2 * (depth - 1), ' ');
    w->Line(absl::StrCat(absl::StrFormat("  %6s ", FormatPercent(n.share)), indent, "└ ", FrameText(n.frame)));
  }
  if (depth >= o.tree_depth) return;
  size_t folded = 0;
  for (const StackTreeNode& c : n.children) {
    if (c.share >= o.tree_min_share) TreeLines(c, o, depth + 1, w);
    else ++folded;
  }
  if (folded) w->Line(absl::StrCat("         ", std::string(2 * depth, ' '), "(", folded, " smaller callees)"));
}

void Stacks(const Analysis& a, const ReportOptions& o, Writer* w) {
  if (a.top_stacks.empty()) return;
  w->Section("Top stacks by idle time (leaf ← caller)");
  int i = 0;
  for (const StackShare& s : a.top_stacks) {
    std::string head = absl::StrFormat("  %2d. %6s %s %-15s ", ++i, FormatPercent(s.share), R(FormatDuration(s.idle_ns), 9),
                                       CauseTitle(s.cause));
    w->Line(head + StackText(s.frames));
  }
  w->Section("Idle time by caller → callee (inclusive)");
  TreeLines(a.stack_tree, o, 0, w);
}

void Sites(const Analysis& a, const ReportOptions& o, Writer* w) {
  const IntervalSummary& in = a.intervals;
  if (!in.resume_sites.empty()) {
    w->Section("Resume sites (the call whose work ended the gap)");
    for (const Site& s : in.resume_sites)
      w->Line(absl::StrFormat("  %6s %s %6d× %s%s", FormatPercent(s.share), R(FormatDuration(s.idle_ns), 9), s.count, s.api,
                              s.frame.function.empty() ? "" : absl::StrCat(" in ", FrameText(s.frame))));
  }
  if (in.after_sync_count > 0) {
    w->Section(absl::StrCat("After sync: ", FormatDuration(in.after_sync_idle_ns), " (",
                            FormatPercent(a.steady_idle_ns ? double(in.after_sync_idle_ns) / a.steady_idle_ns : 0),
                            " of idle) in ", in.after_sync_count, " gaps began as a synchronisation returned"));
    for (const Site& s : in.after_sync_sites) {
      std::string where = s.frame.function.empty() ? "" : absl::StrCat(" in ", FrameText(s.frame));
      // Two callers are enough to see past a thin wrapper (the full list is in the JSON).
      for (size_t i = 0; i < s.callers.size() && i < 2; ++i) absl::StrAppend(&where, " ← ", s.callers[i].function);
      w->Line(absl::StrFormat("  %6s %s %6d× after sync at %s%s", FormatPercent(s.share), R(FormatDuration(s.idle_ns), 9),
                              s.count, s.api, where));
    }
  }
  if (in.count > 0) {
    w->Section("Idle gap lengths");
    for (const HistogramBucket& b : in.histogram) {
      if (b.count == 0) continue;
      w->Line(absl::StrFormat("  %s %8d gaps %s", L(b.label, 11), b.count, R(FormatDuration(b.idle_ns), 9)));
    }
  }
  if (!in.longest.empty()) {
    w->Section("Longest idle gaps");
    size_t shown = 0;
    for (const IntervalExample& e : in.longest) {
      if (shown++ == o.longest_intervals) break;
      w->Wrap(absl::StrFormat("  %s at +%s on %s: %s%s — ", R(FormatDuration(e.end_ns - e.start_ns), 9), FormatDuration(e.offset_ns),
                              e.device, CauseTitle(e.cause), e.after_sync ? " (after sync)" : ""),
              absl::StrCat(e.evidence, e.resume_frame.function.empty() ? "" : absl::StrCat(" [resumed in ", FrameText(e.resume_frame), "]")),
              6);
    }
  }
}

void Copies(const Analysis& a, Writer* w) {
  const CopySummary& c = a.copies;
  if (c.directions.empty()) return;
  w->Section("Copies");
  for (const CopyStats& s : c.directions) {
    std::string peak = c.link_peak_bandwidth > 0 ? absl::StrCat(" (", FormatPercent(s.bandwidth / c.link_peak_bandwidth), " of link)") : "";
    w->Line(absl::StrFormat("  %-4s %8d× %10s in %s  %10s%s  pageable %s", CopyDirectionName(s.direction), s.count,
                            FormatBytes(s.bytes), R(FormatDuration(s.time_ns), 9), FormatRate(s.bandwidth), peak,
                            FormatPercent(s.bytes ? double(s.pageable_bytes) / s.bytes : 0)));
  }
  if (c.pageable_bytes > 0) {
    w->Wrap("  ", absl::StrCat(FormatPercent(c.pageable_share), " of copied bytes are pageable; staging cost ",
                               FormatDuration(c.pageable_staging_ns), "; est. gain from pinning ",
                               FormatDuration(c.est_pinning_gain_ns), " (", c.gain_model, ")"), 4);
  }
}

void Memory(const Analysis& a, Writer* w) {
  const MemorySummary& m = a.memory;
  if (m.allocations == 0 && m.peak_usage_bytes == 0 && m.oom_errors == 0) return;
  w->Section("Memory");
  std::string total = m.total_memory ? absl::StrCat(" (", FormatPercent(m.peak_share), " of ", FormatBytes(m.total_memory), ")") : "";
  w->Wrap("  ", absl::StrCat("peak ", FormatBytes(std::max(m.peak_bytes, m.peak_usage_bytes)), total, "; ", m.allocations,
                             " allocations, ", m.frees, " frees, ", m.host_allocations, " host allocations, ", m.oom_errors,
                             " out-of-memory errors"), 4);
  if (!m.explanation.empty()) w->Wrap("  ", m.explanation, 2);
}

// The input workers and the host (only when the traces carry process records).
void InputWorkers(const Analysis& a, Writer* w) {
  const InputWorkersSummary& s = a.input_workers;
  if (!s.present) return;
  w->Section("Input workers and host");
  if (!s.evidence.empty()) w->Wrap("  ", s.evidence, 4);
  else w->Line("  no input worker processes were seen");
  size_t shown = 0;
  for (const WorkerEvidence& x : s.workers) {
    if (shown++ == 8) {
      w->Line(absl::StrCat("    … and ", s.workers.size() - 8, " more workers"));
      break;
    }
    w->Line(absl::StrCat("    pid ", x.pid, " (", x.comm, "): CPU-busy ", FormatPercent(x.cpu_busy), "; probes: running ",
                         FormatPercent(x.running), ", disk wait ", FormatPercent(x.disk_wait), ", sleeping ",
                         FormatPercent(x.sleeping), "; read ", FormatBytes(x.read_bytes), " over ",
                         FormatDuration(x.span_ns)));
  }
  const HostEvidence& h = s.host;
  if (h.online_cores > 0) {
    w->Wrap("  ", absl::StrCat("host: ", h.online_cores, " cores online, ", h.affinity_cores, " in the affinity mask, ",
                               FormatPercent(h.busy), " busy (", absl::StrFormat("%.1f", h.idle_cores), " cores idle on average), load ",
                               absl::StrFormat("%.2f", h.load_1m), "; the training process ", FormatPercent(s.main_cpu_busy),
                               " CPU-busy"), 4);
    w->Wrap("  ", absl::StrCat("collected every ", h.period_ms, " ms at a cost of ",
                               FormatPercent(h.span_ns > 0 ? static_cast<double>(h.collection_ns) / h.span_ns : 0),
                               " of one core on the agent's writer thread (",
                               FormatDuration(h.collections ? h.collection_ns / static_cast<TimeNs>(h.collections) : 0),
                               " per probe or record)", h.untracked ? absl::StrCat("; ", h.untracked, " descendants not tracked (over the limit)") : ""), 4);
  }
}

// CUDA graph replays by the code that captured them (accounting/graph_replays.h).
void GraphReplaySites(const Analysis& a, Writer* w) {
  const GraphReplays& g = a.graphs;
  if (g.kernels == 0) return;
  w->Section(absl::StrCat("CUDA graph replays: ", g.kernels, " kernels, ", FormatDuration(g.device_ns),
                          " on the device, by where they were captured"));
  for (const GraphCaptureSite& s : g.capture_sites) {
    // The site and two of its callers, as the after-sync sites: a capture goes through the
    // framework's launch wrapper, and the caller names the block that captured the kernels.
    std::string where = s.frame.function.empty() ? "" : absl::StrCat(" in ", FrameText(s.frame));
    for (size_t i = 0; i < s.callers.size() && i < 2; ++i) absl::StrAppend(&where, " ← ", s.callers[i].function);
    w->Line(absl::StrFormat("  %6s %s %6d× %s%s (%d nodes)", FormatPercent(s.share), R(FormatDuration(s.device_ns), 9),
                            s.kernels, s.api, where, s.nodes));
  }
  if (g.unresolved_kernels > 0)
    w->Line(absl::StrCat("  ", g.unresolved_kernels, " kernels (", FormatDuration(g.unresolved_ns),
                         ") not traced to their capture (captured before the trace began, or no graph node records)"));
}

// GPU idle/busy per NVTX range (accounting/nvtx_ranges.h has the definitions).
void NvtxRanges(const Analysis& a, Writer* w) {
  if (a.nvtx_ranges.empty()) return;
  w->Section("GPU idle per NVTX range (while open on its thread; nested ranges count in each)");
  w->Line(absl::StrCat("  ", L("range", 34), R("count", 8), R("time", 11), R("GPU idle", 10), R("busy", 11)));
  constexpr size_t kRows = 20;
  std::vector<std::string> summary;
  for (size_t i = 0; i < a.nvtx_ranges.size() && i < kRows; ++i) {
    const NvtxRangeStats& r = a.nvtx_ranges[i];
    const std::string label = r.domain.empty() ? r.name : absl::StrCat(r.domain, ": ", r.name);
    w->Line(absl::StrCat("  ", L(Cut(label, 33), 34), R(absl::StrCat(r.count), 8), R(FormatDuration(r.wall_ns), 11),
                         R(FormatPercent(r.idle_share), 10), R(FormatDuration(r.busy_ns), 11)));
    if (summary.size() < 6)
      summary.push_back(summary.empty() ? absl::StrCat(label, ": ", FormatPercent(r.idle_share), " of its ",
                                                       FormatDuration(r.wall_ns), " with the GPU idle")
                                        : absl::StrCat(label, ": ", FormatPercent(r.idle_share)));
  }
  if (a.nvtx_ranges.size() > kRows) w->Line(absl::StrCat("  … and ", a.nvtx_ranges.size() - kRows, " more ranges"));
  w->Wrap("  ", absl::StrJoin(summary, "; "), 4);
}

// Multi-rank jobs: a row per rank, then the straggler with its stacks (ranks/).
void Ranks(const Analysis& a, Writer* w) {
  const RanksSection& r = a.ranks;
  if (!r.present) return;
  w->Section(absl::StrCat("Ranks (", r.rows.size(), r.rows.size() == 1 ? " rank" : " ranks",
                          r.steps_compared ? absl::StrCat(", ", r.steps_compared, " collective steps compared") : "",
                          "; clocks: ", r.clocks.method, ", residual error ",
                          FormatDuration(r.clocks.residual_error_ns),
                          r.clocks.realtime_unmeasured ? " + NTP" : "", ")"));
  // How full the kernels kept each rank's devices, beside its GPU-Util, when a rank's trace says.
  const bool filled = std::any_of(r.rows.begin(), r.rows.end(),
                                  [](const RankRow& row) { return row.sm_coverage_utilization.has_value(); });
  auto fill = [filled](const std::optional<double>& v) {
    return filled ? absl::StrFormat(" %8s", v ? FormatPercent(*v) : "-") : std::string();
  };
  w->Line(absl::StrFormat("  %-26s %8s %8s%s%s %10s %-16s %10s %9s %6s", "rank", "GPU-Util", "steady",
                          filled ? absl::StrCat(" ", R("SM cov.", 8)) : "", filled ? absl::StrCat(" ", R("occ. ≤", 8)) : "",
                          "idle", "top cause", "host-bound", "coll.wait", "last"));
  for (const RankRow& row : r.rows) {
    w->Line(absl::StrFormat("  %-26s %8s %8s%s%s %10s %-16s %10s %9s %6s", Cut(row.label, 26),
                            FormatPercent(row.utilization), FormatPercent(row.steady_utilization),
                            fill(row.sm_coverage_utilization), fill(row.est_occupancy_utilization),
                            FormatDuration(row.steady_idle_ns),
                            row.steady_idle_ns ? CauseTitle(row.top_cause) : "-",
                            FormatDuration(row.host_bound_idle_ns),
                            FormatDuration(row.collective_wait_ns),
                            absl::StrCat(row.last_at_steps)));
  }
  const StragglerVerdict& v = r.straggler;
  if (v.found) {
    w->Wrap("  Straggler: ", v.evidence + ".", 4);
    size_t shown = 0;
    for (const RankStack& st : v.stacks) {
      if (shown++ == 3 || (st.step_host_bound_ns == 0 && shown > 1)) break;
      w->Wrap(absl::StrCat("    ", FormatDuration(st.step_host_bound_ns), " host-bound before its collectives  "),
              absl::StrJoin(st.frames.begin(), st.frames.begin() + std::min<size_t>(st.frames.size(), 4), " ← "), 8);
    }
    if (v.prediction.ran) w->Wrap("    ", StragglerPredictionLine(v), 6);
  }
  for (const std::string& n : r.notes) w->Wrap("  - ", n, 4);
}

class TextFormat final : public ReportFormat {
 public:
  std::string_view name() const override { return "text"; }
  std::string Render(const Analysis& a, const ReportOptions& o) const override {
    Writer w(o.width, o.color);
    DataLoss(a, &w);
    w.Line(absl::StrCat("gpustall: ", a.traces.size(), a.traces.size() == 1 ? " trace, " : " traces, ", a.devices.size(),
                        a.devices.size() == 1 ? " device, " : " devices, ", a.events, " records; GPU-Util ",
                        FormatPercent(a.Utilization()), " (steady state ", FormatPercent(a.SteadyUtilization()), ")"));
    size_t shown = 0;
    for (const TraceInfo& t : a.traces) {
      if (shown++ == 4) {
        w.Line(absl::StrCat("  … and ", a.traces.size() - 4, " more traces"));
        break;
      }
      w.Line(absl::StrCat("  ", t.path, ": ", t.Label(), t.capture_mode.empty() ? "" : ", capture ", t.capture_mode,
                          CudaVersions(t), t.losses.clean_end ? "" : ", no end record"));
    }
    if (a.devices.empty() && !a.ranks.present) w.Line("no GPU work in the trace");
    Ranks(a, &w);
    Devices(a, &w);
    UnderfilledKernels(a, &w);
    Causes(a, &w);
    NvtxRanges(a, &w);
    Stacks(a, o, &w);
    Sites(a, o, &w);
    GraphReplaySites(a, &w);
    Copies(a, &w);
    Memory(a, &w);
    InputWorkers(a, &w);
    w.Section("Recommendations");
    if (a.recommendations.empty()) w.Line("  none: nothing in this trace backs one");
    int i = 0;
    for (const Recommendation& r : a.recommendations) {
      w.Wrap(absl::StrFormat("  %d. ", ++i), r.text, 5, kCyan);
      if (r.prediction.present) w.Wrap("     ", PredictionLine(a.replay, r.prediction), 5);
    }
    if (a.replay.ran) w.Wrap("  ", ReplayCheckLine(a.replay), 2);
    if (!a.notes.empty()) {
      w.Section("Notes (where the trace has no evidence for a finer answer)");
      for (const std::string& n : a.notes) w.Wrap("  - ", n, 4);
    }
    return w.Take();
  }
};

}  // namespace

const ReportFormat& TextReportFormat() {
  static const TextFormat* const kFormat = new TextFormat();
  return *kFormat;
}

}  // namespace gs::analyzer
