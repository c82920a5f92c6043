// nvtx_ranges — data_starved's loop annotated with NVTX ranges (nvtx3, header-only: no-ops unless
// a tool is injected through NVTX_INJECTION64_PATH or CUPTI), with every phase synchronised so
// that each range has a clear share of device idle time:
//
//   "step"          the whole step, containing:
//     "data"        load_batch(): 8 ms of host CPU work (--load-ms); the device is idle throughout
//     "forward"     H2D copy, normalize_batch, forward_layer x 4, loss_reduce, stream sync (4.4 ms)
//     "backward"    backward_layer x 4, stream sync (4.8 ms)
//     "optimizer"   sgd_update, stream sync (1.4 ms)
// (mlp.cuh's model with every kernel twice as long, so that phases are long against the
// millisecond a loaded machine may take to wake a thread up after a synchronisation).
//
// --ranges-out FILE appends one JSON object per range instance (name, start_ns, end_ns on
// CLOCK_MONOTONIC, tid, depth), taken right at push and pop: the ground truth against which a
// test compares a profiler's idle time per range (the device side comes from SIMGPU_TRUTH).
//
// Expected verdict: utilisation ~ 10.6 / 18.6 ~ 57%; idle per range: data ~100%, forward/
// backward/optimizer a few % (launch and synchronisation latency), step ~43%. Planted:
// load_batch() in the "data" range.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "mlp.cuh"
#include "workload.h"

// mlp.cuh's durations x2.
GSW_SIMULATED_KERNEL_DURATIONS("normalize_batch=400us,forward_layer=800us,loss_reduce=200us,"
                               "backward_layer=1200us,sgd_update=1400us")
constexpr double kModelScale = 2.0;

namespace {

// Pushes an NVTX range and remembers its host-side interval for --ranges-out.
class RangeLog {
 public:
  struct Range {
    const char* name;
    uint64_t start_ns, end_ns;
    int depth;
  };

  void Push(const char* name) {
    nvtxRangePushA(name);
    open_.push_back({name, gsw::NowNs(), 0, static_cast<int>(open_.size())});
  }
  void Pop() {
    Range r = open_.back();
    r.end_ns = gsw::NowNs();
    nvtxRangePop();
    open_.pop_back();
    done_.push_back(r);
  }
  void Write(const std::string& path) const {
    FILE* f = std::fopen(path.c_str(), "a");
    if (!f) {
      std::fprintf(stderr, "workload_nvtx_ranges: cannot write %s\n", path.c_str());
      std::exit(1);
    }
    const long tid = syscall(SYS_gettid);
    for (const Range& r : done_) {
      std::fprintf(f,
                   "{\"name\":\"%s\",\"start_ns\":%llu,\"end_ns\":%llu,\"tid\":%ld,\"depth\":%d}\n",
                   r.name, static_cast<unsigned long long>(r.start_ns),
                   static_cast<unsigned long long>(r.end_ns), tid, r.depth);
    }
    std::fclose(f);
  }

 private:
  std::vector<Range> open_, done_;
};

}  // namespace

// PLANTED: the data pipeline runs on the training thread, inside the "data" range.
GSW_PLANTED float load_batch(float* pinned_batch, size_t floats, double load_ms) {
  return gsw::CpuWork(pinned_batch, floats, load_ms);
}

int main(int argc, char** argv) {
  long steps = 25;
  double load_ms = 8.0;
  const int layers = 4;
  gsw::Flags flags("workload_nvtx_ranges",
                   "data_starved's loop with NVTX ranges step/data/forward/backward/optimizer. "
                   "--ranges-out FILE records the ranges (JSON lines).");
  flags.Add("steps", &steps, "training steps");
  flags.Add("load-ms", &load_ms, "host CPU time to prepare one batch in load_batch()");
  // --ranges-out takes a path, which Flags does not parse: peel it off first.
  std::string ranges_out;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranges-out" && i + 1 < argc) {
      ranges_out = argv[++i];
    } else if (a.rfind("--ranges-out=", 0) == 0) {
      ranges_out = a.substr(13);
    } else {
      rest.push_back(argv[i]);
    }
  }
  flags.Parse(static_cast<int>(rest.size()), rest.data());

  const int width = 1 << 20;  // a 4 MiB batch
  gsw::Mlp model(layers, width);
  cudaStream_t stream;
  GSW_CHECK(cudaStreamCreate(&stream));
  float* pinned;
  GSW_CHECK(cudaMallocHost(&pinned, model.input_bytes()));
  std::memset(pinned, 0, model.input_bytes());
  GSW_CHECK(cudaDeviceSynchronize());

  RangeLog ranges;
  const uint64_t start = gsw::NowNs();
  float checksum = 0.0f;
  for (long step = 0; step < steps; ++step) {
    ranges.Push("step");
    ranges.Push("data");
    checksum += load_batch(pinned, static_cast<size_t>(width), load_ms);
    ranges.Pop();

    ranges.Push("forward");
    GSW_CHECK(cudaMemcpyAsync(model.input(), pinned, model.input_bytes(), cudaMemcpyHostToDevice,
                              stream));
    model.EnqueueForward(stream);
    GSW_CHECK(cudaStreamSynchronize(stream));
    ranges.Pop();

    ranges.Push("backward");
    model.EnqueueBackward(stream);
    GSW_CHECK(cudaStreamSynchronize(stream));
    ranges.Pop();

    ranges.Push("optimizer");
    model.EnqueueOptimizer(stream);
    GSW_CHECK(cudaStreamSynchronize(stream));
    ranges.Pop();
    ranges.Pop();  // step
  }
  const uint64_t end = gsw::NowNs();
  GSW_CHECK(cudaGetLastError());

  if (!ranges_out.empty()) ranges.Write(ranges_out);
  GSW_CHECK(cudaFreeHost(pinned));
  GSW_CHECK(cudaStreamDestroy(stream));
  gsw::Summary("nvtx_ranges")
      .Add("steps", steps)
      .Add("wall_ms", gsw::MsBetween(start, end))
      .Add("gpu_ms_per_step", kModelScale * gsw::MlpStepMs(layers))
      .Add("kernels", steps * gsw::MlpKernelsPerStep(layers))
      .Add("checksum", static_cast<double>(checksum))
      .Print();
  return 0;
}
