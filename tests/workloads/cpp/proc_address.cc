// proc_address.cc — a training loop whose model step runs inside a library that reaches the
// driver only through cuGetProcAddress (gemm_library.h), the way cuBLAS and cuDNN do: the host
// prepares each batch in prepare_batch() (CPU work, default 12 ms) and uploads it from there
// through two pinned staging buffers (gsw::PinnedStaging); then gemm_library_forward() launches
// three kernels (1, 2 and 1 ms) through the cuLaunchKernel pointer the driver handed out.
//
// Expected verdict: GPU utilisation ~ 4/12 ~ 33%; the idle time is host CPU work in
// prepare_batch(); the library's launches are seen (CUPTI's driver callbacks) although no cu*
// symbol is ever called by name.
// Run: LD_LIBRARY_PATH=<build>/simgpu/lib workload_proc_address
//          --cubin <build>/tests/workloads/compiled_model_kernels.cubin [--steps N] [--load-ms MS]
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "gemm_library.h"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS("triton_poi_fused_add_relu_0=1ms,triton_red_fused_sum_1=2ms,triton_per_fused_mul_2=1ms")

GSW_PLANTED float prepare_batch(float* batch, size_t floats, double load_ms, gsw::PinnedStaging& staging, long step,
                                float* device_input, cudaStream_t stream) {
  const float checksum = gsw::CpuWork(batch, floats, load_ms);
  staging.Upload(step, batch, device_input, stream);
  return checksum;
}

int main(int argc, char** argv) {
  long steps = 60, batch_kib = 1024;
  double load_ms = 12.0;
  std::string cubin;
  gsw::Flags flags("workload_proc_address",
                   "A training loop whose step runs in a library that launches through cuGetProcAddress "
                   "pointers, starved by host-side batch preparation (prepare_batch).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("load-ms", &load_ms, "host CPU time to prepare one batch in prepare_batch()");
  flags.Add("batch-kib", &batch_kib, "batch size in KiB (copied H2D from pinned memory)");
  flags.Add("cubin", &cubin, "the library's module (compiled_model_kernels.cubin)");
  flags.Parse(argc, argv);

  GSW_CHECK(cudaFree(nullptr));  // the runtime's primary context, current for the library too
  if (gemm_library_init(cubin.c_str()) != 0) return 1;
  const size_t floats = static_cast<size_t>(batch_kib) * 1024 / sizeof(float);
  const size_t bytes = floats * sizeof(float);
  float* device[3];
  for (float*& d : device) GSW_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), bytes));
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  std::vector<float> batch(floats, 0.0f);
  gsw::PinnedStaging staging(bytes);

  const uint64_t start = gsw::NowNs();
  uint64_t load_ns = 0;
  float checksum = 0.0f;
  for (long step = 0; step < steps; ++step) {
    staging.WaitForSlot(step);
    const uint64_t t0 = gsw::NowNs();
    checksum += prepare_batch(batch.data(), floats, load_ms, staging, step, device[0], stream);
    load_ns += gsw::NowNs() - t0;
    if (gemm_library_forward(stream, reinterpret_cast<uintptr_t>(device[0]), reinterpret_cast<uintptr_t>(device[1]),
                             reinterpret_cast<uintptr_t>(device[2]), static_cast<int>(floats)) != 0)
      return 1;
  }
  GSW_CHECK(cudaStreamSynchronize(stream));
  const uint64_t end = gsw::NowNs();

  for (float* d : device) GSW_CHECK(cudaFree(d));
  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("proc_address")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("prepare_batch_ms", static_cast<double>(load_ns) / 1e6)
      .Add("gpu_ms_per_step", 4.0)
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
