// intercept_cost — host cost of one intercepted CUDA call, for BENCHMARKS.md.
//
// Runs a cheap call (cudaStreamQuery on an idle stream, or with `driver` the driver's cuStreamQuery,
// which the agent records from CUPTI's driver callback: simgpu answers either without device work)
// N times at a chosen stack depth and prints ns per call. With `graph`, the call is a
// cudaGraphLaunch of a captured one-kernel graph (a 1 us kernel: the device keeps up between
// bursts). With `other`, cudaStreamIsCapturing: a runtime call outside the agent's table, which
// CUPTI's runtime domain reports and the agent only counts (shorter than GS_OTHER_CALLS_MIN_US).
//
//   intercept_cost [ITERATIONS] [DEPTH] [REPEATS] [runtime|driver|graph|other] tests/bench/run_intercept_bench
// runs this binary with and without LD_PRELOAD=libgsagent.so, interleaved, in one go, so that the
// difference is the agent's cost and machine noise hits both sides alike.
//
// Calls come in timed bursts of 256 with an untimed 12 ms pause between them: the agent's writer
// drains the rings every 10 ms, and a tight loop of millions of calls per second would overflow
// the calling thread's ring and measure the drop path (a full ring records nothing) instead of
// the recording path. Real programs do not issue CUDA calls at 3 million per second.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "simgpu.h"

namespace {

enum class Call { kRuntime, kDriver, kGraph, kOther };

// Recurses `depth` frames before running the loop, so a stack capture has that many frames to walk.
__attribute__((noinline)) double TimedLoop(int depth, cudaStream_t stream, Call what, cudaGraphExec_t graph,
                                           long iterations) {
  if (depth > 0) {
    double r = TimedLoop(depth - 1, stream, what, graph, iterations);
    asm volatile("" ::: "memory");  // keep the recursion: no tail call
    return r;
  }
  constexpr long kBurst = 256;
  const timespec pause = {0, 12'000'000};
  double total_ns = 0;
  long done = 0;
  while (done < iterations) {
    const long n = std::min(kBurst, iterations - done);
    auto t0 = std::chrono::steady_clock::now();
    if (what == Call::kDriver) {
      for (long i = 0; i < n; ++i) {
        if (cuStreamQuery(stream) != CUDA_SUCCESS) std::abort();
      }
    } else if (what == Call::kGraph) {
      for (long i = 0; i < n; ++i) {
        if (cudaGraphLaunch(graph, stream) != cudaSuccess) std::abort();
      }
    } else if (what == Call::kOther) {
      for (long i = 0; i < n; ++i) {
        cudaStreamCaptureStatus status;
        if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) std::abort();
      }
    } else {
      for (long i = 0; i < n; ++i) {
        if (cudaStreamQuery(stream) != cudaSuccess) std::abort();
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    total_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    done += n;
    nanosleep(&pause, nullptr);
  }
  return total_ns / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 25600;
  int depth = argc > 2 ? std::atoi(argv[2]) : 0;
  int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const Call what = argc > 4 && std::strcmp(argv[4], "driver") == 0  ? Call::kDriver
                    : argc > 4 && std::strcmp(argv[4], "graph") == 0 ? Call::kGraph
                    : argc > 4 && std::strcmp(argv[4], "other") == 0 ? Call::kOther
                                                                     : Call::kRuntime;
  cudaStream_t stream;
  cudaGraphExec_t graph = nullptr;
  if (what == Call::kDriver) {
    // A JIT launcher's set-up: the primary context made current, a stream of its own.
    CUdevice device;
    CUcontext context;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS || cuCtxSetCurrent(context) != CUDA_SUCCESS ||
        cuStreamCreate(&stream, 0) != CUDA_SUCCESS) {
      std::fprintf(stderr, "intercept_cost: driver set-up failed\n");
      return 1;
    }
  } else if (cudaStreamCreate(&stream) != cudaSuccess) {
    std::fprintf(stderr, "intercept_cost: cudaStreamCreate failed\n");
    return 1;
  }
  if (what == Call::kGraph) {
    cudaGraph_t captured;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess ||
        cudaLaunchKernel(simgpuKernel("graph_node", 1000), dim3(1), dim3(32), nullptr, 0, stream) != cudaSuccess ||
        cudaStreamEndCapture(stream, &captured) != cudaSuccess ||
        cudaGraphInstantiate(&graph, captured, 0) != cudaSuccess) {
      std::fprintf(stderr, "intercept_cost: graph capture failed\n");
      return 1;
    }
  }
  TimedLoop(depth, stream, what, graph, iterations / 10);  // warm up: resolve symbols, fill caches
  std::vector<double> runs;
  for (int r = 0; r < repeats; ++r) runs.push_back(TimedLoop(depth, stream, what, graph, iterations));
  std::sort(runs.begin(), runs.end());
  std::printf("%.1f\n", runs[runs.size() / 2]);  // median ns per call
  if (what == Call::kDriver) {
    cuStreamDestroy(stream);
  } else {
    cudaStreamDestroy(stream);
  }
  return 0;
}
