// collective_ranks — one rank of a data-parallel training job: each step loads a batch, runs the
// model's forward and backward passes, all-reduces the gradients with the other ranks, applies the
// optimizer and reads the loss back (a per-step host synchronisation, as `loss.item()` is).
// Run it as N processes with RANK (or SLURM_PROCID) and SIMGPU_WORLD=N set, e.g. through gsrun.
//
// The all-reduce is simgpuCollective() (tests/simgpu/simgpu.h): on simgpu it completes only when
// every rank's all-reduce of that step has started, like an NCCL kernel, and is named like one
// (ncclDevKernel_AllReduce_...). It is looked up at run time (dlsym), so the program links against
// the real libcudart like the other workloads; it runs only on simgpu.
//
// Planted (--slow-rank R): rank R's input pipeline, load_batch_slowly(), does --slow-load-ms of
// host CPU work per step instead of --load-ms in prepare_batch(). Expected verdict: rank R is the
// straggler; the other ranks' devices wait in the all-reduce for it every step, for about
// slow-load-ms - load-ms; its own idle time is host work in load_batch_slowly(), whose upload
// (submitted from inside it) ends each of its idle gaps.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include "mlp.cuh"
#include "workload.h"

GSW_SIMULATED_KERNEL_DURATIONS(GSW_MLP_SIMULATED_DURATIONS)

namespace {

using CollectiveFn = const void* (*)(const char* group, uint64_t duration_ns);

int RankFromEnvironment() {
  for (const char* var : {"RANK", "SLURM_PROCID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;
}

}  // namespace

// The healthy input pipeline: a little host work, then the upload of the batch.
GSW_PLANTED float prepare_batch(float* pinned_batch, size_t floats, double load_ms,
                                float* device_batch, cudaStream_t stream) {
  const float checksum = gsw::CpuWork(pinned_batch, floats, load_ms);
  GSW_CHECK(cudaMemcpyAsync(device_batch, pinned_batch, floats * sizeof(float),
                            cudaMemcpyHostToDevice, stream));
  return checksum;
}

// PLANTED (on --slow-rank only): a slow input pipeline — decoding/augmentation on the training
// thread that takes longer than the step's GPU work. It enqueues the batch's upload itself, so
// the copy call that ends the rank's idle gap is made from this function's frame.
GSW_PLANTED float load_batch_slowly(float* pinned_batch, size_t floats, double load_ms,
                                    float* device_batch, cudaStream_t stream) {
  const float checksum = gsw::CpuWork(pinned_batch, floats, load_ms);
  GSW_CHECK(cudaMemcpyAsync(device_batch, pinned_batch, floats * sizeof(float),
                            cudaMemcpyHostToDevice, stream));
  return checksum;
}

int main(int argc, char** argv) {
  long steps = 30, layers = 4, batch_kib = 1024, slow_rank = -1, allreduce_us = 500;
  double load_ms = 1.0, slow_load_ms = 20.0;
  gsw::Flags flags("workload_collective_ranks",
                   "One rank of a data-parallel job with an all-reduce per step (simgpu only).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("layers", &layers, "model layers; one step is (layers+1) ms of device time");
  flags.Add("batch-kib", &batch_kib, "batch size in KiB (copied H2D from pinned memory)");
  flags.Add("load-ms", &load_ms, "host CPU time of prepare_batch() per step");
  flags.Add("slow-rank", &slow_rank, "rank whose input pipeline is load_batch_slowly() (-1: none)");
  flags.Add("slow-load-ms", &slow_load_ms, "host CPU time of load_batch_slowly() per step");
  flags.Add("allreduce-us", &allreduce_us, "device time of the all-reduce once all ranks are in");
  // Flags takes non-negative values only: "--slow-rank none" is spelled as a rank past the world.
  flags.Parse(argc, argv);

  auto collective = reinterpret_cast<CollectiveFn>(dlsym(RTLD_DEFAULT, "simgpuCollective"));
  if (collective == nullptr) {
    std::fprintf(stderr, "workload_collective_ranks: needs simgpu's libcudart.so.13 "
                         "(simgpuCollective not found)\n");
    return 2;
  }
  const int rank = RankFromEnvironment();
  const bool slow = rank == slow_rank;
  const int width = static_cast<int>(batch_kib * 1024 / sizeof(float));
  gsw::Mlp model(static_cast<int>(layers), width);
  const void* allreduce = collective("data_parallel", static_cast<uint64_t>(allreduce_us) * 1000);
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  float* pinned = nullptr;
  float* loss = nullptr;
  GSW_CHECK(cudaMallocHost(&pinned, model.input_bytes()));
  GSW_CHECK(cudaMallocHost(&loss, sizeof(float)));
  std::memset(pinned, 0, model.input_bytes());

  const uint64_t start = gsw::NowNs();
  float checksum = 0.0f;
  for (long step = 0; step < steps; ++step) {
    checksum += slow ? load_batch_slowly(pinned, static_cast<size_t>(width), slow_load_ms,
                                         model.input(), stream)
                     : prepare_batch(pinned, static_cast<size_t>(width), load_ms, model.input(),
                                     stream);
    model.EnqueueForward(stream);
    model.EnqueueBackward(stream);
    GSW_CHECK(cudaLaunchKernel(allreduce, dim3(1), dim3(128), nullptr, 0, stream));
    model.EnqueueOptimizer(stream);
    GSW_CHECK(cudaMemcpyAsync(loss, model.loss(), sizeof(float), cudaMemcpyDeviceToHost, stream));
    GSW_CHECK(cudaStreamSynchronize(stream));  // loss.item()
    checksum += *loss;
  }
  const uint64_t end = gsw::NowNs();

  GSW_CHECK(cudaFreeHost(pinned));
  GSW_CHECK(cudaFreeHost(loss));
  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("collective_ranks")
      .Add("rank", static_cast<long>(rank))
      .Add("steps", steps)
      .Add("slow", static_cast<long>(slow))
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
