// gs_nvtx_bench — cost of an NVTX push/pop pair on the application thread with the agent
// injected (the functions NVTX's table slots point at), against the floor of an empty call
// through a function pointer (what NVTX costs with no tool attached).
//
//   build/agent/nvtx/gs_nvtx_bench --benchmark_min_time=0.5
//
// Each iteration is kBatch push/pop pairs (timed), then a drain of the thread's ring with the
// timer paused, as the writer thread would, so nothing is dropped ("dropped" must be 0).
// `per_pair` is the figure to read.
#include <benchmark/benchmark.h>

#include <string>

#include "agent/nvtx/nvtx_collector.h"

namespace gs::nvtx {
namespace {

constexpr int kBatch = 256;  // pairs per drain: ~18 KiB of ring, well within kRingBytes

class DiscardBuilder final : public ChunkBuilder {
 public:
  gpustall::trace::Chunk* chunk() override { return &chunk_; }
  uint32_t InternString(const std::string& value) override { return value.empty() ? 0 : 1; }
  uint32_t InternStack(const StackView&) override { return 0; }
  void CountRecords(size_t) override {}
  void Reset() { chunk_.Clear(); }

 private:
  gpustall::trace::Chunk chunk_;
};

__attribute__((noinline)) int EmptyPush(const char* m) {
  benchmark::DoNotOptimize(m);
  return 0;
}
int (*volatile g_empty)(const char*) = &EmptyPush;

void BM_NoToolFloor(benchmark::State& state) {
  for (auto _ : state)
    for (int i = 0; i < kBatch; ++i) {
      benchmark::DoNotOptimize(g_empty("forward"));
      benchmark::DoNotOptimize(g_empty(nullptr));
    }
  state.counters["per_pair"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_NoToolFloor);

void BM_PushPop(benchmark::State& state) {
  NvtxCollector& c = NvtxCollector::Instance();
  if (!c.EnsureStarted()) {
    state.SkipWithError("collector did not start");
    return;
  }
  RangeAttributes a;
  a.name = "forward";
  a.name_len = 7;
  DiscardBuilder builder;
  const uint64_t dropped_before = c.counters().Dropped();
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      benchmark::DoNotOptimize(c.Push(a));
      benchmark::DoNotOptimize(c.Pop(nullptr));
    }
    state.PauseTiming();
    c.DrainInto(&builder);
    builder.Reset();
    state.ResumeTiming();
  }
  state.counters["per_pair"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["dropped"] = static_cast<double>(c.counters().Dropped() - dropped_before);
}
BENCHMARK(BM_PushPop);

}  // namespace
}  // namespace gs::nvtx

BENCHMARK_MAIN();
