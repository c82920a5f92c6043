#include "analyzer/ranks/multi_rank.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/json/json_value.h"
#include "analyzer/report/report.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/summary/summary_file.h"
#include "analyzer/testing/trace_files.h"
#include "gtest/gtest.h"
#include "proto/testing/trace_builder.h"

namespace gs::analyzer {
namespace {

constexpr TimeNs kMs = 1000000;

// `n` ranks of `steps` steps: every collective takes 1 ms of work; rank `late` starts each one
// `late_ms` after the others (so theirs last that much longer), with that much host-bound idle.
std::vector<RankSummary> Job(int n, int steps, int late, TimeNs late_ms) {
  std::vector<RankSummary> ranks(n);
  for (int r = 0; r < n; ++r) {
    RankSummary& s = ranks[r];
    s.rank = r;
    s.pid = 100 + r;
    s.host_name = "node";
    s.boot_id = "boot-a";
    s.wall_ns = steps * 30 * kMs;
    s.steady_wall_ns = s.wall_ns;
    s.compute_busy_ns = steps * 5 * kMs;
    for (int k = 0; k < steps; ++k) {
      TimeNs base = k * 30 * kMs;
      TimeNs start = base + 10 * kMs + (r == late ? late_ms * kMs : 0);
      TimeNs end = base + 10 * kMs + late_ms * kMs + kMs;
      RankStep step{start, end, r == late ? late_ms * kMs : 0, r == late ? late_ms * kMs : 0};
      s.steps.push_back(step);
    }
    if (r == late) {
      s.idle_by_cause[static_cast<int>(Cause::kHostWork)] = steps * late_ms * kMs;
      s.stacks.push_back({{"load_batch_slowly (w.cu:10)", "main (w.cu:40)"},
                          steps * late_ms * kMs, steps * late_ms * kMs, Cause::kHostWork});
    }
  }
  return ranks;
}

TEST(MultiRankTest, StragglerIsTheRankThatArrivesLastAndDelaysTheOthers) {
  RanksSection r = AnalyzeRanks(Job(4, 6, 2, 20));
  ASSERT_TRUE(r.present);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.steps_compared, 6u);
  ASSERT_TRUE(r.straggler.found) << r.notes.size();
  EXPECT_EQ(r.straggler.rank, 2);
  EXPECT_EQ(r.straggler.last_at_steps, 6u);
  EXPECT_EQ(r.straggler.delay_caused_ns, 6 * 20 * kMs);
  EXPECT_DOUBLE_EQ(r.straggler.delay_share, 1.0);
  EXPECT_EQ(r.straggler.host_bound_idle_ns, 6 * 20 * kMs);
  ASSERT_FALSE(r.straggler.stacks.empty());
  EXPECT_EQ(r.straggler.stacks[0].frames[0], "load_batch_slowly (w.cu:10)");
  EXPECT_EQ(r.rows[0].collective_wait_ns, 6 * 20 * kMs);
  EXPECT_EQ(r.rows[2].collective_wait_ns, 0);
  EXPECT_EQ(r.clocks.residual_error_ns, 0);
  EXPECT_FALSE(r.clocks.realtime_unmeasured);
  EXPECT_EQ(r.clocks.collective_end_spread_ns, 0);
}

TEST(MultiRankTest, ARankWhoseCaptureBeganACollectiveLaterIsPairedByItsAlignedEnds) {
  // Rank 0 captured steps 0..5; rank 1's capture (a window opened later) holds steps 1..5 only.
  std::vector<RankSummary> job = Job(2, 6, 1, 20);
  job[1].steps.erase(job[1].steps.begin());
  RanksSection r = AnalyzeRanks(job);
  EXPECT_EQ(r.rows[0].first_step, 1u);
  EXPECT_EQ(r.rows[1].first_step, 0u);
  EXPECT_EQ(r.rows[0].input, 0u);
  EXPECT_EQ(r.rows[1].input, 1u);
  EXPECT_EQ(r.steps_compared, 5u);
  EXPECT_EQ(r.clocks.collective_end_spread_ns, 0);
  EXPECT_EQ(r.step_ns, 30 * kMs);
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.rank, 1);
  EXPECT_EQ(r.straggler.last_at_steps, 5u);  // every pair lines up: rank 1 is late at each
  EXPECT_NE(std::find_if(r.notes.begin(), r.notes.end(),
                         [](const std::string& n) { return n.find("captures began at different collectives") != std::string::npos; }),
            r.notes.end());

  // Clocks that say nothing (no wall clock on a rank): the index pairs stand.
  job[1].clock = RankClock::kNone;
  r = AnalyzeRanks(job);
  EXPECT_EQ(r.rows[0].first_step, 0u);
  EXPECT_EQ(r.steps_compared, 5u);
}

TEST(MultiRankTest, BalancedRanksHaveNoStraggler) {
  RanksSection r = AnalyzeRanks(Job(4, 6, 1, 0));
  ASSERT_TRUE(r.present);
  EXPECT_FALSE(r.straggler.found);
  EXPECT_EQ(r.total_delay_ns, 0);
  ASSERT_FALSE(r.notes.empty());
}

TEST(MultiRankTest, LatenessSpreadOverRanksNamesNoSingleStraggler) {
  std::vector<RankSummary> job = Job(4, 6, 0, 20);
  // Rank 0 is late at steps 0-2, rank 3 at steps 3-5: half the delay each.
  for (int k = 3; k < 6; ++k) {
    std::swap(job[0].steps[k].collective_start_ns, job[3].steps[k].collective_start_ns);
  }
  RanksSection r = AnalyzeRanks(job);
  EXPECT_FALSE(r.straggler.found);
  EXPECT_EQ(r.rows[0].last_at_steps, 3u);
  EXPECT_EQ(r.rows[3].last_at_steps, 3u);
}

TEST(MultiRankTest, ClocksOfOtherBootsAreAlignedByRealtimePairs) {
  std::vector<RankSummary> job = Job(2, 3, 1, 10);
  job[0].clock_monotonic_ns = 1000;
  job[0].clock_realtime_ns = 1000000;
  job[0].clock_uncertainty_ns = 50;
  job[1].boot_id = "boot-b";
  job[1].clock_monotonic_ns = 5000;
  job[1].clock_realtime_ns = 1000000;  // its monotonic is 4000 ahead of rank 0's
  job[1].clock_uncertainty_ns = 70;
  for (RankStep& s : job[1].steps) {
    s.collective_start_ns += 4000;
    s.collective_end_ns += 4000;
  }
  RanksSection r = AnalyzeRanks(job);
  EXPECT_EQ(r.rows[1].clock_offset_ns, -4000);
  EXPECT_EQ(r.clocks.residual_error_ns, 120);
  EXPECT_TRUE(r.clocks.realtime_unmeasured);
  EXPECT_EQ(r.clocks.boots, 2u);
  EXPECT_EQ(r.clocks.collective_end_spread_ns, 0);
  EXPECT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.rank, 1);
}

// PyTorch profiler traces have no header snapshot: ranks with baseTimeNanoseconds are aligned by
// it (the wall time of their time 0), and the report says so; epoch timestamps need no offset;
// ranks with neither are not aligned, and the method says that too.
TEST(MultiRankTest, KinetoRanksAreAlignedByBaseTimeNanoseconds) {
  std::vector<RankSummary> job = Job(2, 3, 1, 10);
  for (RankSummary& s : job) {
    s.boot_id.clear();
    s.world_size = 8;
    s.clock = RankClock::kBaseTime;
  }
  job[0].clock_realtime_ns = 1'700'000'000'000'000'000;
  job[1].clock_realtime_ns = 1'700'000'000'000'004'000;  // its time 0 is 4 µs later
  for (RankStep& s : job[1].steps) {
    s.collective_start_ns -= 4000;
    s.collective_end_ns -= 4000;
  }
  RanksSection r = AnalyzeRanks(job);
  EXPECT_EQ(r.rows[0].clock_offset_ns, 0);
  EXPECT_EQ(r.rows[1].clock_offset_ns, 4000);
  EXPECT_EQ(r.clocks.collective_end_spread_ns, 0);
  EXPECT_EQ(r.clocks.method, "wall clocks aligned by each rank's baseTimeNanoseconds (NTP agreement unmeasured)");
  EXPECT_EQ(r.clocks.method.find("CLOCK_REALTIME"), std::string::npos);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(), "world size 8 (as the traces say): 2 of its ranks are here"),
            r.notes.end());

  job[1].clock = RankClock::kEpoch;  // times are wall time already
  job[1].clock_realtime_ns = 0;
  r = AnalyzeRanks(job);
  EXPECT_EQ(r.rows[1].clock_offset_ns, -1'700'000'000'000'000'000);
  EXPECT_NE(r.clocks.method.find("epoch timestamps as written, no baseTimeNanoseconds (1 of 2 ranks)"),
            std::string::npos)
      << r.clocks.method;

  job[1].clock = RankClock::kNone;
  r = AnalyzeRanks(job);
  EXPECT_EQ(r.rows[1].clock_offset_ns, 0);
  EXPECT_NE(r.clocks.method.find("not aligned: times as written"), std::string::npos) << r.clocks.method;
  EXPECT_FALSE(r.clocks.realtime_unmeasured);
}

// How full the kernels kept each rank's devices, over its wall (summed over its devices, as
// GPU-Util); unknown for a rank whose trace gave no launch configurations.
TEST(MultiRankTest, RowsSayHowFullEachRanksKernelsKeptItsDevices) {
  std::vector<RankSummary> job = Job(3, 2, 1, 0);  // walls of 60 ms
  job[0].sm_coverage_busy_ns = 15 * kMs;
  job[0].est_occupancy_busy_ns = 6 * kMs;
  job[1].sm_coverage_busy_ns = 30 * kMs;  // sized, but no SM limits: no occupancy
  RanksSection r = AnalyzeRanks(job);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].sm_coverage_utilization, 0.25);
  EXPECT_EQ(r.rows[0].est_occupancy_utilization, 0.1);
  EXPECT_EQ(r.rows[1].sm_coverage_utilization, 0.5);
  EXPECT_FALSE(r.rows[1].est_occupancy_utilization.has_value());
  EXPECT_FALSE(r.rows[2].sm_coverage_utilization.has_value());
  RankSummary no_wall;
  no_wall.sm_coverage_busy_ns = 0;
  EXPECT_FALSE(no_wall.SmCoverageUtilization().has_value());
}

TEST(MultiRankTest, OneTraceWithoutRankIsNotAJob) {
  std::vector<RankSummary> one(1);
  EXPECT_FALSE(AnalyzeRanks(one).present);
}

TEST(MultiRankTest, CaptureWindowsOfOneProcessAreNotAJob) {
  std::vector<RankSummary> windows(3);
  for (size_t i = 0; i < windows.size(); ++i) {
    RankSummary& w = windows[i];
    w.capture_window = static_cast<uint32_t>(i + 1);
    w.pid = 4242;
    w.rank = 0;
    w.host_name = "node1";
    w.boot_id = "b1";
    w.wall_ns = 1000;
  }
  EXPECT_TRUE(OneProcess(windows));
  EXPECT_FALSE(AnalyzeRanks(windows).present);
  // Another process on the same host (a rank, or the same pid after a reboot) makes it a job.
  for (auto other : {+[](RankSummary* r) { r->rank = 1; }, +[](RankSummary* r) { r->pid = 4243; },
                     +[](RankSummary* r) { r->boot_id = "b2"; }, +[](RankSummary* r) { r->host_name = "node2"; }}) {
    std::vector<RankSummary> job = windows;
    other(&job.back());
    EXPECT_FALSE(OneProcess(job));
    const RanksSection r = AnalyzeRanks(job);
    EXPECT_TRUE(r.present);
    EXPECT_EQ(r.rows.size(), 3u);
  }
  EXPECT_FALSE(OneProcess({}));
  // Whole-process traces with one identity (a synthetic job, a trace given twice) stay ranks.
  std::vector<RankSummary> whole = windows;
  whole[1].capture_window = 0;
  EXPECT_FALSE(OneProcess(whole));
  EXPECT_TRUE(AnalyzeRanks(whole).present);
}

TEST(MultiRankTest, CollectiveKernelsAreRecognisedByNcclNames) {
  EXPECT_TRUE(IsCollectiveKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(IsCollectiveKernelName("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  EXPECT_FALSE(IsCollectiveKernelName("_Z13forward_layerPfS_S_i"));
  EXPECT_FALSE(IsCollectiveKernelName("my_nccl_like_kernel"));
}

TEST(SummaryFileTest, EncodeDecodeRoundTripsEveryField) {
  RankSummary s = Job(4, 3, 2, 5)[2];
  s.source = "/tmp/x.gstrace";
  s.host_id = "hid";
  s.job_id = "job7";
  s.world_size = 4;
  s.trace_id = 0xfeedULL;
  s.capture_window = 3;
  s.clock_monotonic_ns = 11;
  s.clock_realtime_ns = 22;
  s.clock_uncertainty_ns = 33;
  s.devices = 1;
  s.steady_idle_ns = 44;
  s.collective_ns = 55;
  s.idle_intervals = 3;
  s.idle_by_cause[static_cast<int>(Cause::kAllocator)] = 66;
  absl::StatusOr<RankSummary> d = DecodeRankSummary(EncodeRankSummary(s), "mem");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->source, s.source);
  EXPECT_EQ(d->rank, s.rank);
  EXPECT_EQ(d->world_size, s.world_size);
  EXPECT_EQ(d->capture_window, 3u);
  EXPECT_EQ(d->trace_id, s.trace_id);
  EXPECT_EQ(d->clock_realtime_ns, 22u);
  EXPECT_EQ(d->clock, RankClock::kHeader);
  s.clock = RankClock::kBaseTime;
  EXPECT_EQ(DecodeRankSummary(EncodeRankSummary(s), "mem")->clock, RankClock::kBaseTime);
  EXPECT_EQ(d->idle_by_cause, s.idle_by_cause);
  ASSERT_EQ(d->steps.size(), s.steps.size());
  EXPECT_EQ(d->steps[1].collective_end_ns, s.steps[1].collective_end_ns);
  EXPECT_EQ(d->steps[1].host_bound_idle_ns, s.steps[1].host_bound_idle_ns);
  ASSERT_EQ(d->stacks.size(), 1u);
  EXPECT_EQ(d->stacks[0].frames, s.stacks[0].frames);
  EXPECT_EQ(d->stacks[0].cause, Cause::kHostWork);
  // Merging decoded summaries gives the same verdict as the originals.
  EXPECT_EQ(AnalyzeRanks({*d}).rows[0].host_bound_idle_ns, AnalyzeRanks({s}).rows[0].host_bound_idle_ns);
  // Fill figures: absent stays absent (not 0), present keeps its value.
  EXPECT_FALSE(d->sm_coverage_busy_ns.has_value());
  EXPECT_FALSE(d->est_occupancy_busy_ns.has_value());
  s.sm_coverage_busy_ns = 77;
  d = DecodeRankSummary(EncodeRankSummary(s), "mem");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sm_coverage_busy_ns, 77);
  EXPECT_FALSE(d->est_occupancy_busy_ns.has_value());
  s.est_occupancy_busy_ns = 0;
  EXPECT_EQ(DecodeRankSummary(EncodeRankSummary(s), "mem")->est_occupancy_busy_ns, 0);
}

// The ranks section of a job's traces (the report's pass) and of their summary files (`gsanalyze
// summarize` each, then a report of the summaries) is the same, fill figures included. Each rank
// is testing::WriteSizedTrace (trace_files.h): its one device was covered 10,075,758 ns (10 × (1 ms
// / 132 + 1 ms)) and occupied at most 5,009,470 ns (10 × (1 ms / 1056 + 0.5 ms)) of a 29.5 ms wall.
TEST(SummaryFileTest, FillFiguresFromSummariesEqualThoseFromTraces) {
  std::vector<std::string> paths;
  for (int rank : {0, 1}) {
    paths.push_back(absl::StrCat(::testing::TempDir(), "/multirank_fill_", getpid(), "_r", rank, ".gstrace"));
    ASSERT_EQ(testing::WriteSizedTrace(paths.back(), 10, rank), "");
  }
  RankSummaryObserver observer;
  AnalyzeHooks hooks;
  hooks.observers = {&observer};
  absl::StatusOr<Analysis> analysis = AnalyzeTraces(paths, AnalysisOptions(), hooks);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  std::vector<RankSummary> decoded;
  for (const std::string& p : paths) {
    absl::StatusOr<RankSummary> s = SummarizeTrace(p);
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<RankSummary> d = DecodeRankSummary(EncodeRankSummary(*s), p);
    ASSERT_TRUE(d.ok()) << d.status();
    decoded.push_back(*d);
    std::remove(p.c_str());
  }
  const RanksSection from_traces = AnalyzeRanks(observer.summaries()), from_summaries = AnalyzeRanks(decoded);
  ASSERT_EQ(from_traces.rows.size(), 2u);
  for (const RanksSection* r : {&from_traces, &from_summaries}) {
    for (const RankRow& row : r->rows) {
      EXPECT_EQ(row.wall_ns, 29'500'000);
      ASSERT_TRUE(row.sm_coverage_utilization.has_value()) << row.label;
      EXPECT_DOUBLE_EQ(*row.sm_coverage_utilization, 10'075'758.0 / 29'500'000);
      ASSERT_TRUE(row.est_occupancy_utilization.has_value()) << row.label;
      EXPECT_DOUBLE_EQ(*row.est_occupancy_utilization, 5'009'470.0 / 29'500'000);
    }
  }
  // The JSON report's ranks section, as `report` prints it either way.
  auto ranks_json = [&](const RanksSection& r) {
    Analysis a = *analysis;
    a.ranks = r;
    absl::StatusOr<Json> j = Json::Parse(JsonReportFormat().Render(a, ReportOptions()));
    EXPECT_TRUE(j.ok());
    return j.ok() ? (*j)["ranks"] : Json();
  };
  const Json traces_json = ranks_json(from_traces);
  EXPECT_EQ(ranks_json(from_summaries).Dump(), traces_json.Dump());
  EXPECT_NEAR(traces_json["rows"].items().at(1)["sm_coverage_utilization"].as_double(), 0.341551, 1e-6);
  EXPECT_NEAR(traces_json["rows"].items().at(1)["est_occupancy_utilization"].as_double(), 0.169813, 1e-6);
}

// Steps are charged as the trace is read (summarize_trace.h, "Steps as the trace is read"): a gap
// whose next collective has not arrived yet is pending, and a collective that completes before
// an overlapping one that started earlier (another communicator's stream) arrives first. One
// device, times in ms, each record a chunk of its own, written in completion order:
//   kernels A [0,1) X [4,4.5) Y [4.6,4.7); collectives C2 [6,7) (stream 2), then C1 [5,8)
//   (stream 1); kernels B [10,11) E [13,13.5) F [14.6,14.7); collective C3 [15,16); kernel D
//   [20,21).
// and, to make the analysis release its sort window early (it releases in batches of thousands
// of records), 4,096 short kernels on device 1 in [4.7,5.89) ms before C2 and 8,192 in
// [14.6,14.68) ms before C3. Steps by start: C1 takes the idle before 5 (3 + 0.1 + 0.3 ms); C2's
// window (C1's end, 6] is empty; C3 takes (7, 15]: 2 + 2 + 1.1 + 0.3 ms; the idle after C3 is in
// no step. With a sort window of 1.5 ms the analysis classifies [1,4) before C2 or C1 has arrived
// (pending, then C2's, then moved to C1) and [8,10) and [11,13) before C3 (pending, then C3's);
// with the default 2 s every gap comes at the end, when every collective is known. Both give
// those steps.
TEST(SummaryFileTest, StepsChargedAsTheTraceIsReadAreThoseOfAllItsGaps) {
  namespace tr = gpustall::trace;
  const std::string path = absl::StrCat(::testing::TempDir(), "/summary_steps_", getpid(), ".gstrace");
  {
    tr::TraceHeader h;
    h.set_host_name("testhost");
    h.set_pid(4242);
    h.mutable_capture()->set_mode(tr::CAPTURE_MODE_CUPTI);
    h.mutable_capture()->set_mode_text("cupti");
    h.add_devices()->set_index(0);
    h.add_devices()->set_index(1);
    gs::trace::testing::TraceBuilder::Options options;
    options.records_per_chunk = 1;
    std::string error;
    auto b = gs::trace::testing::TraceBuilder::Create(path, h, options, &error);
    ASSERT_NE(b, nullptr) << error;
    const uint32_t kernel = b->InternString("compute_kernel");
    const uint32_t nccl = b->InternString("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    constexpr uint64_t kT0 = 1'000'000'000, kUs = 1000;
    uint32_t correlation = 0;
    auto add_ns = [&](uint64_t start_ns, uint64_t end_ns, bool collective, uint32_t stream, uint32_t device) {
      gs::trace::GpuActivityRecord a;
      a.start_ns = kT0 + start_ns;
      a.end_ns = kT0 + end_ns;
      a.device = device;
      a.correlation_id = ++correlation;
      a.kind = collective ? tr::ACTIVITY_KIND_COLLECTIVE : tr::ACTIVITY_KIND_KERNEL;
      a.source = tr::ACTIVITY_SOURCE_CUPTI;
      a.stream = stream;
      a.name = collective ? nccl : kernel;
      b->AddActivity(a);
    };
    auto add = [&](uint64_t start_us, uint64_t end_us, bool collective, uint32_t stream) {
      add_ns(start_us * kUs, end_us * kUs, collective, stream, 0);
    };
    auto fill_device1 = [&](uint64_t from_us, int count, uint64_t every_ns) {
      for (int i = 0; i < count; ++i) {
        add_ns(from_us * kUs + i * every_ns, from_us * kUs + i * every_ns + every_ns / 2, false, 9, 1);
      }
    };
    add(0, 1000, false, 7);         // A
    add(4000, 4500, false, 7);      // X
    add(4600, 4700, false, 7);      // Y
    fill_device1(4700, 4096, 290);  // to 5.89 ms
    add(6000, 7000, true, 2);       // C2
    add(5000, 8000, true, 1);       // C1
    add(10000, 11000, false, 7);    // B
    add(13000, 13500, false, 7);    // E
    add(14600, 14700, false, 7);    // F
    fill_device1(14600, 8192, 10);  // to 14.68 ms
    add(15000, 16000, true, 1);     // C3
    add(20000, 21000, false, 7);    // D
    ASSERT_TRUE(b->Finish());
  }
  for (TimeNs window : {TimeNs{2'000'000'000}, TimeNs{1'500'000}}) {
    AnalysisOptions options;
    options.sort_window_ns = window;
    absl::StatusOr<RankSummary> s = SummarizeTrace(path, options);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_EQ(s->steps.size(), 3u) << "sort window " << window;
    constexpr TimeNs kT0 = 1'000'000'000, kUs = 1000;
    EXPECT_EQ(s->steps[0].collective_start_ns, kT0 + 5000 * kUs);
    EXPECT_EQ(s->steps[1].collective_start_ns, kT0 + 6000 * kUs);
    EXPECT_EQ(s->steps[2].collective_start_ns, kT0 + 15000 * kUs);
    EXPECT_EQ(s->steps[0].idle_ns, 3400 * kUs) << "sort window " << window;
    EXPECT_EQ(s->steps[1].idle_ns, 0) << "sort window " << window;
    EXPECT_EQ(s->steps[2].idle_ns, 5400 * kUs) << "sort window " << window;
  }
  std::remove(path.c_str());
}

TEST(SummaryFileTest, NotASummaryIsAnErrorNamingIt) {
  absl::StatusOr<RankSummary> d = DecodeRankSummary("\x89GSTRACE....", "t.gstrace");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("t.gstrace"), std::string::npos);
  std::string damaged(kSummaryMagic, sizeof(kSummaryMagic));
  damaged += "\xff\xff\xff";
  EXPECT_FALSE(DecodeRankSummary(damaged, "d").ok());
}

}  // namespace
}  // namespace gs::analyzer
