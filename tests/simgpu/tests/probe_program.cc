// probe_program.cc — a fixed, small CUDA program for the truth-log and injection tests
// (truth_test.cc runs it with SIMGPU_TRUTH / CUDA_INJECTION64_PATH and reads what it left).
//   cudaMalloc 1 MiB; pageable H2D 1 MiB; <<<>>> square (nvcc's path); pinned D2H async on a
//   stream + cudaStreamSynchronize; then a last kernel it never waits for before exiting.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "tests/fake_nvcc.h"

namespace {
void SquareStub() {}
void TailStub() {}
}  // namespace

int main() {
  simgpu_test::RegisterKernel(reinterpret_cast<const void*>(&SquareStub), "_Z6squarePfi");
  simgpu_test::RegisterKernel(reinterpret_cast<const void*>(&TailStub), "_Z4tailv");
  const size_t n = 1 << 20;
  void* dev = nullptr;
  void* pinned = nullptr;
  std::vector<char> pageable(n, 5);
  cudaStream_t s;
  if (cudaMalloc(&dev, n) != cudaSuccess) return 1;
  if (cudaMallocHost(&pinned, n) != cudaSuccess) return 2;
  if (cudaStreamCreate(&s) != cudaSuccess) return 3;
  if (cudaMemcpy(dev, pageable.data(), n, cudaMemcpyHostToDevice) != cudaSuccess) return 4;
  if (simgpu_test::TripleChevron(reinterpret_cast<const void*>(&SquareStub), dim3(8), dim3(128),
                                 nullptr) != cudaSuccess) {
    return 5;
  }
  if (cudaMemcpyAsync(pinned, dev, n, cudaMemcpyDeviceToHost, s) != cudaSuccess) return 6;
  if (cudaStreamSynchronize(s) != cudaSuccess) return 7;
  if (static_cast<char*>(pinned)[n - 1] != 5) return 8;  // the bytes made the round trip
  if (simgpu_test::TripleChevron(reinterpret_cast<const void*>(&TailStub), dim3(1), dim3(32), s) !=
      cudaSuccess) {
    return 9;
  }
  return 0;  // exits with `tail` still running on the device
}
