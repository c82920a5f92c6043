// options.h — every threshold the analysis uses, with the reason for its default.
//
// One struct, passed by const reference everywhere; tests change fields to exercise rules.
#ifndef GPUSTALL_ANALYZER_OPTIONS_OPTIONS_H_
#define GPUSTALL_ANALYZER_OPTIONS_OPTIONS_H_

#include <cstddef>
#include <cstdint>

#include "analyzer/model/types.h"

namespace gs::analyzer {

struct AnalysisOptions {
  // Work that was queued before the device went idle and starts at most this late is "launch
  // latency" (the device's own queue-to-start time); later than this it waited for something on
  // the device (an event, another stream): "device wait". Real GPUs start queued work 2-10 µs
  // after the previous one ends; 20 µs is the top of HTA's documented 5-20 µs launch cost, so a
  // longer delay is not explained by the launch path alone. (HTA's 30 ns cannot be met by any
  // real device, so its "kernel wait" bucket is nearly always empty.)
  TimeNs launch_latency_max_ns = 20'000;

  // Host time between two enqueue calls (launch, async copy/memset, event record) that is at most
  // this long is counted as launch overhead, not host work: it is the framework's dispatch path
  // between back-to-back launches (PyTorch's per-op dispatch is 5-20 µs), i.e. a thread that
  // cannot launch fast enough to keep ahead of short kernels. Longer stretches are real host work.
  TimeNs back_to_back_max_ns = 20'000;

  // A gap is "after sync" when the submitting thread was inside (or had left at most this long
  // before) a synchronising call as the device went idle. Covers clock mapping error.
  TimeNs after_sync_tolerance_ns = 50'000;

  // nvidia-smi's GPU-Util sample period as `watch nvidia-smi` shows it: 1/6 s.
  TimeNs utilization_sample_ns = 1'000'000'000 / 6;

  // Activities are sorted by start inside this window of trace time (records arrive per CUPTI
  // buffer, with streams interleaved by completion). Bigger windows tolerate more disorder and
  // hold more activities in memory.
  TimeNs sort_window_ns = 2'000'000'000;

  // Outstanding host calls remembered by correlation id (a ring: an entry is forgotten when a
  // call 2^19 calls later takes its slot). Must exceed the calls in flight between a call and
  // the arrival of its activity record.
  uint32_t correlation_slots_log2 = 19;

  // Bound on remembered calls per thread while its device stays busy or idle; beyond it the
  // oldest are forgotten and counted (LossCounters::folded_host_calls).
  size_t max_history_per_thread = 1 << 20;

  // Threads for one pass. 1: everything on the calling thread. N > 1: several traces are read up
  // to N at once, each analysed on a thread of its own and merged in input order (unless an
  // observer cannot be forked, analysis/trace_observer.h); threads left over, or all N - 1 for a
  // single trace, check and decode a trace's frames ahead of its analysis (at most 2 per trace,
  // analysis/analyze_traces.cc; ReaderOptions::decode_threads, analyzer/reader/trace_reader.h).
  // A trace's analysis itself stays on one thread, in file order, so the result is the same for
  // every N.
  int jobs = 1;
  // Bound on the memory of traces read at once (jobs > 1): a trace's analysis holds ~70 MiB of its
  // own (the host history's correlation ring, the sort window) and what grows with its events:
  // the what-if replay's records up to their cap (analyzer/whatif/replay_observer.h) and
  // `export --tables`' rows until the trace ends (summary/summarize_trace.h). So the next trace
  // starts only while the traces in flight, counted at kTraceMemoryPerFileByte times their file
  // size, stay within this; one trace always runs. 0: half of the memory the kernel says is
  // available (/proc/meminfo MemAvailable), or no bound where that cannot be read.
  uint64_t trace_memory_budget = 0;

  // Report sizes.
  size_t top_stacks = 10;
  size_t longest_intervals = 10;
  size_t top_sites = 10;
  size_t top_kernel_configs = 10;  // kernel_configs[] (export --tables keeps them all)

  // A device whose steady-state idle is below this share gets no recommendation ("healthy").
  double healthy_idle_share = 0.05;
  // A cause needs at least this share of idle time to back a recommendation.
  double recommend_min_share = 0.10;
  // Memory is "near full" at this share of the device's total memory.
  double memory_near_full = 0.85;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_OPTIONS_OPTIONS_H_
