// resource_kernels.cu — kernels whose registers and static shared memory differ, compiled by the
// build with `nvcc -cubin -arch=sm_90 -Xptxas -v` (and into a two-architecture fatbinary) for the
// cubin reader's test, which compares what it reads with what ptxas said (ptxas_log.h).
// With CUDA 13.0 (V13.0.88) ptxas said ("Used N registers, ..., M bytes smem"):
//   kernel          sm_90                    sm_80
//   _Z5heavyPfPKf   64 registers             64 registers
//   _Z5tiledPfPKf   12 registers, 4000 smem  12 registers, 4000 smem
//   _Z7scratchPd    14 registers, 32 smem    12 registers, 32 smem
//   plain           10 registers             8 registers
// (`readelf -SW` of the sm_90 cubin: .nv.shared.<kernel> of 0x400, 0x13a0, 0x420 and 0x400
// bytes, each 1024 more than ptxas's figure: cuda/cubin.h.)

// 48 values live at once: ptxas gives it every register __launch_bounds__(64) allows it.
__global__ void __launch_bounds__(64) heavy(float* out, const float* in) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = in[threadIdx.x * 48 + j];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + k + 1) % 48] + in[k];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j] * (j + 1);
  out[threadIdx.x] = s;
}

// 1000 floats of static shared memory: 4000 bytes.
__global__ void tiled(float* out, const float* in) {
  __shared__ float buf[1000];
  buf[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = buf[(threadIdx.x + 1) % 1000];
}

// 3 doubles: 24 bytes.
__global__ void scratch(double* out) {
  __shared__ double d[3];
  d[threadIdx.x % 3] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = d[(threadIdx.x + 1) % 3];
}

// Only dynamic shared memory (the launch's), none of its own; unmangled, as Triton's kernels are.
extern "C" __global__ void plain(float* out, int n) {
  extern __shared__ float dyn[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < n) dyn[threadIdx.x] = i;
  __syncthreads();
  if (i < n) out[i] = dyn[threadIdx.x ^ 1];
}
