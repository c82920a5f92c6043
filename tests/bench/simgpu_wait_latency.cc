// simgpu_wait_latency — how long after the device's end of the work a blocking call returns, on
// simgpu (tests/simgpu/driver/timeline.cc, "Host waits"). Each round: a 1 MiB pinned copy and a
// cudaStreamSynchronize, then a 32 KiB pageable cudaMemcpyAsync (which returns once its copy has
// completed). Prints one line per call, "sync|pageable START_NS RETURN_NS", on the clock simgpu's
// truth log uses (CLOCK_MONOTONIC); run_simgpu_wait_latency pairs them with the truth log's ends.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

unsigned long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 300;
  const size_t pinned_bytes = 1 << 20, pageable_bytes = 32 << 10;
  void* pinned = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&pinned, pinned_bytes) != cudaSuccess || cudaMalloc(&device, pinned_bytes) != cudaSuccess) {
    std::fprintf(stderr, "simgpu_wait_latency: allocation failed\n");
    return 1;
  }
  std::vector<char> pageable(pageable_bytes, 1);
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int i = 0; i < rounds; ++i) {
    unsigned long long start = NowNs();
    cudaMemcpyAsync(device, pinned, pinned_bytes, cudaMemcpyHostToDevice, s);
    cudaStreamSynchronize(s);
    std::printf("sync %llu %llu\n", start, NowNs());
    start = NowNs();
    cudaMemcpyAsync(device, pageable.data(), pageable_bytes, cudaMemcpyHostToDevice, s);
    std::printf("pageable %llu %llu\n", start, NowNs());
  }
  cudaStreamDestroy(s);
  cudaFree(device);
  cudaFreeHost(pinned);
  return 0;
}
