// analyze_bench — analysis throughput vs. merely reading the same trace, side by side in one run.
//
//   gs_analyzer_bench [--events N] [--trace PATH] [--keep] [--reuse] [--repeat N] [--sort-window-ms MS] [--jobs N]
//                     [--host-detail] [--report]
//
// Writes a synthetic trace of at least N events (default 50 million: a launch loop with async
// copies, 8 events per step, see analyzer/testing/trace_files.h) with TraceBuilder, then: (1)
// reads it once to warm the page cache, (2) reads every record with the reader on one thread
// (decode only), (3) runs the full analysis (AnalyzeTraces, --jobs threads, default 1) on it;
// (2) and (3) alternate --repeat times (default 3) and the fastest of each counts. Prints events/s of (2) and (3) by
// wall and CPU time (and by the analysis thread's own CPU time), their ratio, and the peak
// resident memory. --host-detail: the trace also holds a recorded host wait in every step's host
// work and a sample every fourth step (trace_files.h). --report: the analysis pass also has the
// observer `gsanalyze report` always registers (the per-rank summary,
// analyzer/summary/summarize_trace.h), so that pass's time and memory are the report's. Targets: analysis >= 50 M events/s on one core
// and near-linear with --jobs (issue 19; the first targets were 20 M events/s and within 3x of the
// plain read; where it stands: BENCHMARKS.md). Not run by ctest (it takes a minute and ~1 GB of disk).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>

#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/reader/trace_reader.h"
#include "analyzer/summary/summarize_trace.h"
#include "analyzer/testing/trace_files.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

// CPU time of the calling thread only: with --jobs > 1 the decode threads' time is left out, so
// this is the analysis thread's share, what bounds the wall time once every thread has a core.
double ThreadCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

long MaxRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// Reads every record; returns the count (or -1 on error).
long long ReadOnly(const std::string& path) {
  auto reader = gs::reader::TraceReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
    return -1;
  }
  gs::reader::ChunkEvents ev;
  long long n = 0;
  while (true) {
    auto more = (*reader)->Next(&ev);
    if (!more.ok() || !*more) break;
    n += static_cast<long long>(ev.num_records());
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 50'000'000;
  std::string path = "/tmp/gs_analyzer_bench.gstrace";
  bool keep = false;
  bool reuse = false;  // --reuse: analyse an existing --trace instead of writing one
  bool host_detail = false, report = false;
  int repeat = 3;      // each pass runs this often; the fastest run counts (shared machines)
  gs::analyzer::AnalysisOptions options;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--events") && i + 1 < argc) events = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--trace") && i + 1 < argc) path = argv[++i];
    else if (!std::strcmp(argv[i], "--keep")) keep = true;
    else if (!std::strcmp(argv[i], "--reuse")) reuse = true;
    else if (!std::strcmp(argv[i], "--host-detail")) host_detail = true;
    else if (!std::strcmp(argv[i], "--report")) report = true;
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) options.jobs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--sort-window-ms") && i + 1 < argc)
      options.sort_window_ns = std::strtoll(argv[++i], nullptr, 10) * 1'000'000;
    else {
      std::fprintf(stderr, "usage: %s [--events N] [--trace PATH] [--keep] [--reuse] [--repeat N] [--sort-window-ms MS] [--jobs N] [--host-detail] [--report]\n", argv[0]);
      return 2;
    }
  }

  auto t = std::chrono::steady_clock::now();
  uint64_t written = 0;
  std::string err = reuse && access(path.c_str(), R_OK) == 0
                        ? std::string()
                        : gs::analyzer::testing::WriteLargeTrace(path, events, &written, host_detail);
  if (!err.empty()) {
    std::fprintf(stderr, "writing %s: %s\n", path.c_str(), err.c_str());
    return 1;
  }
  std::printf("trace: %s, %llu events, written in %.1f s\n", path.c_str(),
              static_cast<unsigned long long>(written), Seconds(t));

  ReadOnly(path);  // warm the page cache so both timed passes read from memory

  double read_s = 1e300, read_cpu = 1e300, an_s = 1e300, an_cpu = 1e300, an_thread_cpu = 1e300;
  long long read = 0;
  absl::StatusOr<gs::analyzer::Analysis> analysis;
  for (int r = 0; r < repeat; ++r) {
    double cpu0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    read = ReadOnly(path);
    read_s = std::min(read_s, Seconds(t0));
    read_cpu = std::min(read_cpu, CpuSeconds() - cpu0);
    if (read < 0) return 1;

    cpu0 = CpuSeconds();
    const double thread0 = ThreadCpuSeconds();
    t0 = std::chrono::steady_clock::now();
    gs::analyzer::RankSummaryObserver summaries;
    gs::analyzer::AnalyzeHooks hooks;
    if (report) hooks.observers = {&summaries};
    analysis = gs::analyzer::AnalyzeTraces({path}, options, hooks);
    an_s = std::min(an_s, Seconds(t0));
    an_cpu = std::min(an_cpu, CpuSeconds() - cpu0);
    an_thread_cpu = std::min(an_thread_cpu, ThreadCpuSeconds() - thread0);
    if (!analysis.ok()) {
      std::fprintf(stderr, "%s\n", std::string(analysis.status().message()).c_str());
      return 1;
    }
  }
  long rss_read = 0;  // (see below: one process does both passes)
  long rss_an = MaxRssMiB();
  (void)rss_read;
  std::printf("best of %d runs per pass; analysis with --jobs %d%s\n", repeat, options.jobs,
              report ? ", with the report's per-rank summary" : "");
  std::printf("%-22s %12s %8s %8s %16s %16s\n", "pass", "events", "wall s", "cpu s", "M events/s wall", "M events/s cpu");
  std::printf("%-22s %12lld %8.2f %8.2f %16.1f %16.1f\n", "read only (decode)", read, read_s, read_cpu,
              read / read_s / 1e6, read / read_cpu / 1e6);
  std::printf("%-22s %12llu %8.2f %8.2f %16.1f %16.1f\n", "full analysis",
              static_cast<unsigned long long>(analysis->events), an_s, an_cpu, analysis->events / an_s / 1e6,
              analysis->events / an_cpu / 1e6);
  std::printf("analysis thread alone: %.2f cpu s, %.1f M events/s\n", an_thread_cpu,
              analysis->events / an_thread_cpu / 1e6);
  std::printf("analysis / read: %.2fx wall, %.2fx cpu   (target: >= 50 M events/s on one core)\n", an_s / read_s,
              an_cpu / read_cpu);
  std::printf("peak RSS of the process: %ld MiB\n", rss_an);
  std::printf("result: %llu idle gaps, steady-state GPU-Util %.1f%%\n",
              static_cast<unsigned long long>(analysis->intervals.count), 100 * analysis->SteadyUtilization());
  if (!keep) unlink(path.c_str());
  return 0;
}
