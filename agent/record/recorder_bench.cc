// gs_agent_bench — cost of Recorder::RecordApiCall on the application thread.
//
//   build-agent/agent/gs_agent_bench --benchmark_min_time=0.5
//
// Cases: an empty virtual call (the floor), a record without a stack, and a record with a
// 30-frame native stack captured with libunwind (GS_STACKS=unwind) and with the frame-pointer
// walker (GS_STACKS=fp); the *NotPython variants attach an activated PythonStackReader, as the
// agent does in every process (this one is not CPython: the reader is off, and must cost
// nothing measurable). Each iteration records a batch of kBatch calls (timed), then drains the
// ring with the timer paused, as the writer thread would, so no record is dropped ("dropped"
// must be 0). `per_call` is the figure to read: CPU time per recorded call.
// BM_ActivityBufferAdd is the other producer, CUPTI's buffer thread: a launch loop's kernel
// records into the activity buffer (`per_record`: CPU per record, names found by CUPTI's pointer).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/record/ring_pool.h"
#include "agent/python/python_stacks.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_capture.h"

namespace gs {
namespace {

class NullRecorder final : public Recorder {
 public:
  bool enabled() const override { return true; }
  void RecordApiCall(const ApiCallEvent& event, bool, int) override { benchmark::DoNotOptimize(&event); }
  void RecordGpuActivity(const GpuActivityEvent&) override {}
  void AddDropped(uint64_t, uint64_t) override {}
  void SetCaptureMode(const char*, const char*) override {}
};

constexpr int kBatch = 256;

// A recorder with its pool; Drain() stands in for the writer thread.
class Rig {
 public:
  Rig(StackMode mode, int depth, PythonStackReader* python = nullptr) {
    pool_.Init(56u << 20);
    std::string note;
    stacks_.Init(mode, &note);
    recorder_ = std::make_unique<RingRecorder>(&pool_, &stacks_, depth, 1024, python);
  }
  RingRecorder* recorder() { return recorder_.get(); }
  void Drain() {
    for (size_t i = 0; i < pool_.ring_count(); ++i) {
      ThreadRing& r = pool_.ring(i);
      const int state = r.state.load(std::memory_order_acquire);
      if (state != ThreadRing::kOwned && state != ThreadRing::kExited) continue;
      r.ring.Drain([this](const RingRecordHeader& h) { last_count_ = h.count; });
    }
  }
  uint64_t dropped() {
    uint64_t d = pool_.no_ring_drops();
    for (size_t i = 0; i < pool_.ring_count(); ++i) d += pool_.ring(i).dropped.load();
    return d;
  }
  int last_count() const { return last_count_; }
  // The share of stacked calls that unwound (the rest reused their site's entry).
  double unwound_share() const {
    const RingPool::StackCounts c = pool_.stack_counts();
    return c.unwinds + c.reuses > 0 ? static_cast<double>(c.unwinds) / static_cast<double>(c.unwinds + c.reuses)
                                    : 0;
  }

 private:
  RingPool pool_;
  StackCapturer stacks_;
  std::unique_ptr<RingRecorder> recorder_;
  int last_count_ = 0;
};

ApiCallEvent Event() {
  ApiCallEvent e{};
  e.api_id = 3;
  e.source = ApiSource::kInterposer;
  e.api_class = ApiClass::kLaunch;
  return e;
}

// A wrapper's call from one call site (RecordApiCallFrom: its return address and stack pointer),
// as a launch loop's: the recorder reuses the site's stack after the first unwind.
__attribute__((noinline)) void RecordFromSite(RingRecorder* recorder, const ApiCallEvent& e) {
  recorder->RecordApiCallFrom(e, true, 1,
                              CallSite{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                                       reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())});
  __asm__ volatile("" ::: "memory");
}

// The same call `extra` frames deeper: another stack pointer at the same site, as a framework's
// launches reach one call site (CUPTI's callback) through call chains of many depths.
__attribute__((noinline)) void RecordFromDepth(int extra, RingRecorder* recorder, const ApiCallEvent& e) {
  if (extra == 0) {
    RecordFromSite(recorder, e);
  } else {
    RecordFromDepth(extra - 1, recorder, e);
  }
  __asm__ volatile("" ::: "memory");
}

// Two call chains of the same depth into one site: the same return address and stack pointer at
// the site, another caller below it (two operators whose paths to a launch have frames of the same
// sizes). The stores keep the compiler from folding the two into one function.
volatile int g_chain = 0;
__attribute__((noinline)) void ChainA(RingRecorder* recorder, const ApiCallEvent& e) {
  RecordFromDepth(1, recorder, e);
  g_chain = 1;
}
__attribute__((noinline)) void ChainB(RingRecorder* recorder, const ApiCallEvent& e) {
  RecordFromDepth(1, recorder, e);
  g_chain = 2;
}

void Loop(benchmark::State& state, Recorder* recorder, bool stack, Rig* rig, bool from_site = false,
          int sites = 1) {
  const ApiCallEvent e = Event();
  for (auto _ : state) {
    if (sites < 0) {  // two chains in turn
      for (int i = 0; i < kBatch; i += 2) {
        ChainA(rig->recorder(), e);
        ChainB(rig->recorder(), e);
      }
    } else if (sites > 1) {
      for (int i = 0; i < kBatch; ++i) RecordFromDepth(i % sites, rig->recorder(), e);
    } else if (from_site) {
      for (int i = 0; i < kBatch; ++i) RecordFromSite(rig->recorder(), e);
    } else {
      for (int i = 0; i < kBatch; ++i) recorder->RecordApiCall(e, stack, 0);
    }
    if (rig != nullptr) {
      state.PauseTiming();
      rig->Drain();
      state.ResumeTiming();
    }
  }
  state.counters["per_call"] =
      benchmark::Counter(kBatch, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Runs the loop `depth` frames deeper than the benchmark function, so stacks are that deep.
__attribute__((noinline)) void AtDepth(int depth, benchmark::State& state, Recorder* recorder, Rig* rig,
                                       bool from_site = false, int sites = 1) {
  if (depth == 0) {
    Loop(state, recorder, true, rig, from_site, sites);
  } else {
    AtDepth(depth - 1, state, recorder, rig, from_site, sites);
  }
  __asm__ volatile("" ::: "memory");
}

void BM_EmptyVirtualCall(benchmark::State& state) {
  NullRecorder null;
  Recorder* recorder = &null;
  benchmark::DoNotOptimize(recorder);
  Loop(state, recorder, false, nullptr);
}
BENCHMARK(BM_EmptyVirtualCall);

void BM_RecordNoStack(benchmark::State& state) {
  Rig rig(StackMode::kNone, 32);
  Loop(state, rig.recorder(), false, &rig);
  state.counters["dropped"] = static_cast<double>(rig.dropped());
}
BENCHMARK(BM_RecordNoStack);

void BM_RecordDisabled(benchmark::State& state) {
  Rig rig(StackMode::kUnwind, 32);
  rig.recorder()->SetEnabled(false);
  Loop(state, rig.recorder(), true, nullptr);
}
BENCHMARK(BM_RecordDisabled);

// Activated once, as the agent does; in this (non-Python) process it ends up kNotPython.
PythonStackReader* NotPythonReader() {
  static PythonStackReader reader;
  reader.Activate();
  return &reader;
}

void BM_RecordNoStackNotPython(benchmark::State& state) {
  Rig rig(StackMode::kNone, 32, NotPythonReader());
  Loop(state, rig.recorder(), true, &rig);
  state.counters["dropped"] = static_cast<double>(rig.dropped());
}
BENCHMARK(BM_RecordNoStackNotPython);

void RecordStack30(benchmark::State& state, StackMode mode, PythonStackReader* python = nullptr) {
  Rig rig(mode, 30, python);
  AtDepth(32, state, rig.recorder(), &rig);
  state.counters["frames"] = rig.last_count();
  state.counters["dropped"] = static_cast<double>(rig.dropped());
}
void BM_RecordStack30Unwind(benchmark::State& state) { RecordStack30(state, StackMode::kUnwind); }
void BM_RecordStack30FramePointer(benchmark::State& state) { RecordStack30(state, StackMode::kFramePointer); }
BENCHMARK(BM_RecordStack30Unwind);
BENCHMARK(BM_RecordStack30FramePointer);
void BM_RecordStack30UnwindNotPython(benchmark::State& state) {
  RecordStack30(state, StackMode::kUnwind, NotPythonReader());
}
void BM_RecordStack30FramePointerNotPython(benchmark::State& state) {
  RecordStack30(state, StackMode::kFramePointer, NotPythonReader());
}
BENCHMARK(BM_RecordStack30UnwindNotPython);
BENCHMARK(BM_RecordStack30FramePointerNotPython);

// The same 30 frames from one call site, reused (ring_recorder.h, "Stack reuse"): a launch loop's
// cost per call once its site is known.
void BM_RecordStack30Reused(benchmark::State& state) {
  Rig rig(StackMode::kUnwind, 30);
  AtDepth(32, state, rig.recorder(), &rig, /*from_site=*/true);
  state.counters["frames"] = rig.last_count();
  state.counters["dropped"] = static_cast<double>(rig.dropped());
}
BENCHMARK(BM_RecordStack30Reused);

// Calls from state.range(0) stack depths in turn (one site, as many stack pointers): a framework's
// step, whose launches reach CUPTI's callback through dozens of call chains, repeated every step.
void BM_RecordStack30ReusedSites(benchmark::State& state) {
  Rig rig(StackMode::kUnwind, 30);
  AtDepth(32, state, rig.recorder(), &rig, /*from_site=*/true, static_cast<int>(state.range(0)));
  state.counters["unwound"] = rig.unwound_share();
  state.counters["frames"] = rig.last_count();
  state.counters["dropped"] = static_cast<double>(rig.dropped());
}
BENCHMARK(BM_RecordStack30ReusedSites)->Arg(4)->Arg(8)->Arg(16)->Arg(48);

// Two call chains of one depth in turn into one site (same return address and stack pointer).
void BM_RecordStack30ReusedTwoChains(benchmark::State& state) {
  Rig rig(StackMode::kUnwind, 30);
  AtDepth(32, state, rig.recorder(), &rig, /*from_site=*/true, /*sites=*/-1);
  state.counters["unwound"] = rig.unwound_share();
  state.counters["frames"] = rig.last_count();
  state.counters["dropped"] = static_cast<double>(rig.dropped());
}
BENCHMARK(BM_RecordStack30ReusedTwoChains);

// CUPTI's buffer thread: a launch loop's kernel records (four kernels, CUPTI's name pointer per
// kernel) into the activity buffer, which the writer then takes, in runs of state.range(0) as
// CuptiSession::ConvertBuffer hands them over (1: one lock per record). `per_record`: CPU per record.
void BM_ActivityBufferAdd(benchmark::State& state) {
  static const char* const kNames[4] = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, float*)",
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>()",
      "ampere_sgemm_128x64_tn", "void at::native::unrolled_elementwise_kernel<at::native::copy_>()"};
  const int run = static_cast<int>(state.range(0));
  ActivityBuffer buffer;
  buffer.Init(kBatch);
  std::vector<PendingActivity> taken;
  std::vector<GpuActivityEvent> kernels(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    kernels[i].kind = ActivityKind::kKernel;
    kernels[i].correlation_id = static_cast<uint32_t>(i);
    kernels[i].name = kNames[i & 3];
  }
  for (auto _ : state) {
    for (int i = 0; i < kBatch; i += run) buffer.Add(&kernels[i], static_cast<size_t>(run));
    state.PauseTiming();
    buffer.TakeAll(&taken);
    state.ResumeTiming();
  }
  state.counters["per_record"] =
      benchmark::Counter(kBatch, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["dropped"] = static_cast<double>(buffer.dropped());
}
BENCHMARK(BM_ActivityBufferAdd)->Arg(1)->Arg(64);

}  // namespace
}  // namespace gs

BENCHMARK_MAIN();
