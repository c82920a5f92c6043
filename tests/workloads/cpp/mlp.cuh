// mlp.cuh — the toy model most workloads train: `layers` elementwise layers over a batch of
// `width` floats, with its weights, activations and gradients resident on the device.
//
// One training step (EnqueueStep) is 2*layers + 3 kernels on one stream, in this order:
//   normalize_batch, forward_layer x layers, loss_reduce   (EnqueueForward)
//   backward_layer x layers                                (EnqueueBackward)
//   sgd_update                                             (EnqueueOptimizer)
// GSW_MLP_SIMULATED_DURATIONS gives their simgpu durations; with them a step takes
//   0.2 + 0.4*layers + 0.1 + 0.6*layers + 0.7 ms = (1.0 + layers) ms of device time.
// pageable_copies, well_fed and nvtx_ranges scale these (their GSW_SIMULATED_KERNEL_DURATIONS).
//
// Thread safety: an Mlp is used by one thread. Lifetime: owns its device memory.
#ifndef GPUSTALL_TESTS_WORKLOADS_CPP_MLP_CUH_
#define GPUSTALL_TESTS_WORKLOADS_CPP_MLP_CUH_

#include <cuda_runtime.h>

#include "model_kernels.cuh"
#include "workload.h"

#define GSW_MLP_SIMULATED_DURATIONS                                              \
  "normalize_batch=200us,forward_layer=400us,loss_reduce=100us,backward_layer=600us," \
  "sgd_update=700us"

namespace gsw {

inline double MlpStepMs(int layers) { return 1.0 + layers; }
inline int MlpKernelsPerStep(int layers) { return 2 * layers + 3; }

class Mlp {
 public:
  Mlp(int layers, int width) : layers_(layers), width_(width) {
    size_t bytes = static_cast<size_t>(width) * sizeof(float);
    GSW_CHECK(cudaMalloc(&acts_, bytes * (layers + 1)));
    GSW_CHECK(cudaMalloc(&weights_, bytes * layers));
    GSW_CHECK(cudaMalloc(&grads_, bytes * layers));
    GSW_CHECK(cudaMalloc(&loss_, sizeof(float)));
    GSW_CHECK(cudaMemset(weights_, 0, bytes * layers));
    GSW_CHECK(cudaMemset(grads_, 0, bytes * layers));
    GSW_CHECK(cudaMemset(loss_, 0, sizeof(float)));
  }
  ~Mlp() {
    cudaFree(acts_);
    cudaFree(weights_);
    cudaFree(grads_);
    cudaFree(loss_);
  }
  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  // Where a step's input batch (width floats) must be copied before EnqueueStep.
  float* input() const { return acts_; }
  size_t input_bytes() const { return static_cast<size_t>(width_) * sizeof(float); }
  float* loss() const { return loss_; }

  // Enqueues one training step reading `input` (default: input()) on `stream`: the three phases
  // below, back to back.
  void EnqueueStep(cudaStream_t stream, const float* input = nullptr) const {
    EnqueueForward(stream, input);
    EnqueueBackward(stream, input);
    EnqueueOptimizer(stream);
  }

  // normalize_batch, forward_layer x layers, loss_reduce.
  void EnqueueForward(cudaStream_t stream, const float* input = nullptr) const {
    const dim3 grid = GridFor(width_);
    float* x = Input(input);
    normalize_batch<<<grid, kBlock, 0, stream>>>(x, width_);
    const float* in = x;
    for (int l = 0; l < layers_; ++l) {
      forward_layer<<<grid, kBlock, 0, stream>>>(in, W(l), Act(l + 1), width_);
      in = Act(l + 1);
    }
    loss_reduce<<<grid, kBlock, 0, stream>>>(Act(layers_), loss_, width_);
    GSW_CHECK(cudaGetLastError());
  }

  // backward_layer x layers (last layer first).
  void EnqueueBackward(cudaStream_t stream, const float* input = nullptr) const {
    const dim3 grid = GridFor(width_);
    for (int l = layers_ - 1; l >= 0; --l) {
      const float* layer_in = l == 0 ? Input(input) : Act(l);
      backward_layer<<<grid, kBlock, 0, stream>>>(layer_in, Act(l + 1), Act(layers_), G(l), width_);
    }
    GSW_CHECK(cudaGetLastError());
  }

  // sgd_update over all weights.
  void EnqueueOptimizer(cudaStream_t stream) const {
    sgd_update<<<GridFor(width_), kBlock, 0, stream>>>(weights_, grads_, 0.01f, width_ * layers_);
    GSW_CHECK(cudaGetLastError());
  }

 private:
  float* Input(const float* input) const { return const_cast<float*>(input ? input : acts_); }
  float* Act(int i) const { return acts_ + static_cast<size_t>(i) * width_; }
  float* W(int i) const { return weights_ + static_cast<size_t>(i) * width_; }
  float* G(int i) const { return grads_ + static_cast<size_t>(i) * width_; }

  int layers_, width_;
  float* acts_ = nullptr;
  float* weights_ = nullptr;
  float* grads_ = nullptr;
  float* loss_ = nullptr;
};

}  // namespace gsw

#endif  // GPUSTALL_TESTS_WORKLOADS_CPP_MLP_CUH_
