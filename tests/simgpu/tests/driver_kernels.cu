// driver_kernels.cu — compiled with `nvcc -cubin` into the module that the driver-API tests load
// with cuModuleLoadData, the way a JIT launcher (Triton) loads its compiled kernels.
//   triton_add     extern "C" (unmangled), as Triton names its kernels
//   scale          an ordinary C++ kernel (mangled _Z5scalePffi)
//   helper         a __device__ function: in the cubin, but not a kernel
extern "C" __global__ void triton_add(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

__device__ __noinline__ float helper(float v, float a) { return v * a + 1.0f; }

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = helper(x[i], a);
}
