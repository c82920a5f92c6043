// gs_writer_bench — the writer thread's CPU per record: TraceWriter::Drain and FlushChunk.
//
//   build/agent/writer/gs_writer_bench --benchmark_repetitions=5 --benchmark_min_time=1
//
// What a launch-bound loop hands the writer (tests/workloads/launch_bound.cc): per launch one API
// call (cudaLaunchKernel from one of four call sites, a 24-frame stack that the recorder reuses) and
// one kernel activity (one of four names and launch configurations, back to back on one stream).
// Each iteration has another thread record kBatch launches with the timer paused (the application's
// side, on another core), then
// drains them into the pending chunk, timed; every kDrainsPerFlush-th iteration also encodes,
// compresses and writes the chunk to a temporary file, timed, as the writer thread does (a drain
// every 10 ms, a flush every 100 ms or 65,536 records). `per_launch` is the figure to read: the
// writer's CPU time for one launch's two records. Whole-process shares are in
// tests/bench/run_agent_share; this isolates the writer from the machine's noise.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/record/ring_pool.h"
#include "agent/record/ring_recorder.h"
#include "agent/stacks/stack_capture.h"
#include "agent/writer/trace_writer.h"
#include "proto/format.h"

namespace gs {
namespace {

constexpr int kBatch = 1024;          // launches per drain (~10 ms of a launch-bound loop)
constexpr int kDrainsPerFlush = 10;   // the default GS_FLUSH_MS of 100 ms
constexpr int kSites = 4;             // the loop's kernel stubs
const char* const kKernelNames[kSites] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, float*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>()",
    "ampere_sgemm_128x64_tn", "void at::native::unrolled_elementwise_kernel<at::native::copy_>()"};

const char* ApiNames(ApiSource, uint16_t id) { return id == 3 ? "cudaLaunchKernel" : nullptr; }

class WriterRig {
 public:
  WriterRig() {
    pool_.Init(16u << 20, 4u << 20);
    std::string note;
    stacks_.Init(StackMode::kUnwind, &note);
    recorder_ = std::make_unique<RingRecorder>(&pool_, &stacks_, 64, 1u << 16);
    path_ = "/tmp/gs_writer_bench_" + std::to_string(getpid()) + ".gstrace";
    std::string error;
    std::unique_ptr<TraceFile> file = CreateTraceFile(path_, &error);
    if (file == nullptr) return;
    writer_ = std::make_unique<TraceWriter>(recorder_.get(), std::move(file), &ApiNames, 16u << 20);
    gpustall::trace::TraceHeader header;
    header.set_schema_version(trace::kSchemaVersion);
    header.set_pid(getpid());
    header.mutable_capture()->set_stack_method("libunwind");
    if (!writer_->Start(header)) writer_.reset();
  }
  ~WriterRig() {
    if (writer_ != nullptr) writer_->Finish(gpustall::trace::END_REASON_EXIT, "");
    std::remove(path_.c_str());
  }
  bool ok() const { return writer_ != nullptr && !writer_->failed(); }
  RingRecorder& recorder() { return *recorder_; }
  TraceWriter& writer() { return *writer_; }

 private:
  RingPool pool_;
  StackCapturer stacks_;
  std::unique_ptr<RingRecorder> recorder_;
  std::unique_ptr<TraceWriter> writer_;
  std::string path_;
};

uint64_t g_now = 1000000;

// One launch as the wrapper and CUPTI would record it: its call from `site`'s call site, and its
// kernel 2 µs later on the device.
__attribute__((noinline)) void Launch(RingRecorder& recorder, int site, uint32_t correlation) {
  ApiCallEvent call{};
  call.enter_ns = g_now;
  call.exit_ns = g_now + 2500;
  call.stream = 0x7f0000001000;
  call.correlation_id = correlation;
  call.api_id = 3;
  call.source = ApiSource::kInterposer;
  call.api_class = ApiClass::kLaunch;
  const CallSite here{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                      reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())};
  recorder.RecordApiCallFrom(call, true, 1, here);
  GpuActivityEvent kernel{};
  kernel.start_ns = g_now + 4000;
  kernel.end_ns = g_now + 6000 + 500 * static_cast<uint64_t>(site);
  kernel.correlation_id = correlation;
  kernel.stream_id = 7;
  kernel.context_id = 1;
  kernel.kind = ActivityKind::kKernel;
  kernel.source = ActivitySource::kCupti;
  kernel.launch_flags = kLaunchConfigKnown | kLaunchResourcesKnown;
  kernel.grid[0] = 1024u << site;
  kernel.grid[1] = kernel.grid[2] = 1;
  kernel.block[0] = 256;
  kernel.block[1] = kernel.block[2] = 1;
  kernel.registers_per_thread = 32 + 8 * static_cast<uint32_t>(site);
  kernel.name = kKernelNames[site];
  recorder.RecordGpuActivity(kernel);
  g_now += 4300;
}

// Each site its own call (a different return address into this function), as four kernel stubs.
__attribute__((noinline)) void Step(RingRecorder& recorder, uint32_t* correlation) {
  Launch(recorder, 0, ++*correlation);
  Launch(recorder, 1, ++*correlation);
  Launch(recorder, 2, ++*correlation);
  Launch(recorder, 3, ++*correlation);
}

// The loop `depth` frames below the benchmark, for a stack as deep as a training script's.
__attribute__((noinline)) void AtDepth(int depth, RingRecorder& recorder, uint32_t* correlation) {
  if (depth == 0) {
    for (int i = 0; i < kBatch / kSites; ++i) Step(recorder, correlation);
  } else {
    AtDepth(depth - 1, recorder, correlation);
  }
  __asm__ volatile("" ::: "memory");
}

// The application's thread: records a batch each time it is asked, as the launching thread of a
// real process does on another core (the writer then reads records another core wrote).
class Producer {
 public:
  explicit Producer(RingRecorder* recorder) : recorder_(recorder), thread_([this] { Run(); }) {}
  ~Producer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void RecordBatch() {
    std::unique_lock<std::mutex> lock(mu_);
    ++asked_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return done_ == asked_; });
  }

 private:
  void Run() {
    uint32_t correlation = 0;
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || done_ != asked_; });
      if (stop_) return;
      lock.unlock();
      AtDepth(20, *recorder_, &correlation);
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }
  RingRecorder* recorder_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t asked_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

void BM_WriterLaunchLoop(benchmark::State& state) {
  WriterRig rig;
  if (!rig.ok()) {
    state.SkipWithError("cannot create the trace file");
    return;
  }
  Producer producer(&rig.recorder());
  uint64_t drains = 0;
  for (auto _ : state) {
    state.PauseTiming();
    producer.RecordBatch();
    state.ResumeTiming();
    benchmark::DoNotOptimize(rig.writer().Drain());
    if (++drains % kDrainsPerFlush == 0 || rig.writer().chunk_full()) rig.writer().FlushChunk();
  }
  if (!rig.ok()) state.SkipWithError("the writer failed");
  state.counters["per_launch"] =
      benchmark::Counter(kBatch, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["stack_repeats"] = static_cast<double>(rig.writer().stack_repeats());
}
BENCHMARK(BM_WriterLaunchLoop);

}  // namespace
}  // namespace gs

BENCHMARK_MAIN();
