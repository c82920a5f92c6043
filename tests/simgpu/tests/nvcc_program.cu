// nvcc_program.cu — an ordinary CUDA program (real __global__ kernels, <<<>>>, nvcc's own host
// stubs), built with `nvcc --cudart=shared` against the real toolkit; truth_test.cc runs it
// unchanged with LD_LIBRARY_PATH pointing at simgpu. Exit status 0 = every call succeeded and
// the bytes made the round trip.
#include <cstdio>
#include <vector>

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

// 1000 floats of static shared memory (4000 bytes), launched with 512 bytes of dynamic shared
// memory: simgpu reads the first from the sm_90 cubin of the fatbinary nvcc registered.
__global__ void tile(float* x, int n) {
  __shared__ float buf[1000];
  extern __shared__ float extra[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.f;
  extra[threadIdx.x % 128] = buf[threadIdx.x];
  __syncthreads();
  if (i < n) x[i] = buf[(threadIdx.x + 1) % 1000] + extra[(threadIdx.x + 3) % 128];
}

__constant__ float coeff[4];
__device__ int counter;

template <typename T>
__global__ void shift(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}

#define CHECK(call)                                                       \
  do {                                                                    \
    cudaError_t e = (call);                                               \
    if (e != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));     \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main() {
  const int n = 1 << 16;
  std::vector<float> host(n, 1.5f), back(n, 0.f);
  float* dev;
  int* idev;
  cudaStream_t s;
  CHECK(cudaMalloc(&dev, n * sizeof(float)));
  CHECK(cudaMalloc(&idev, n * sizeof(int)));
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMemcpyAsync(dev, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
  for (int i = 0; i < 3; ++i) scale<<<n / 256, 256, 0, s>>>(dev, 2.f, n);
  shift<int><<<n / 256, 256>>>(idev, n);
  tile<<<n / 256, 256, 512, s>>>(dev, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(back.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaDeviceSynchronize());
  if (back[n - 1] != 1.5f) return 2;  // simgpu runs no device code: the bytes are the input's
  const float c[4] = {1, 2, 3, 4};
  float c2[4] = {};
  int count = 0;
  CHECK(cudaMemcpyToSymbol(coeff, c, sizeof c));
  CHECK(cudaMemcpyFromSymbol(c2, coeff, sizeof c2));
  CHECK(cudaMemcpyFromSymbol(&count, counter, sizeof count));
  if (c2[3] != 4.f) return 3;
  if (count != 0) return 4;  // simgpu zero-fills device variables (it loads no image's data)
  CHECK(cudaFree(dev));
  CHECK(cudaFree(idev));
  return 0;
}
