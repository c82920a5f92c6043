// kernel_model_test.cc — durations of nvcc-registered kernels: SIMGPU_KERNEL_NS by default,
// SIMGPU_KERNEL_DURATIONS by mangled, demangled or plain name. ctest runs it with
//   SIMGPU_KERNEL_NS=3ms
//   SIMGPU_KERNEL_DURATIONS=_Z6scalePfi=11ms,ns::blur(float*)=13ms,reduce<int, 4>=17ms
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "simgpu.h"
#include "tests/fake_nvcc.h"

namespace {

void ScaleStub() {}
void BlurStub() {}
void ReduceStub() {}
void OtherStub() {}

double ModelledMs(const void* stub) {
  cudaEvent_t a, b;
  EXPECT_EQ(cudaEventCreate(&a), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&b), cudaSuccess);
  // Behind a blocker both the event and the kernel start when the stream frees up, whatever the
  // host's speed: the elapsed time is exactly the kernel's modelled duration.
  EXPECT_EQ(cudaLaunchKernel(simgpuKernel("blocker", 30000000), dim3(1), dim3(1), nullptr, 0,
                             nullptr),
            cudaSuccess);
  EXPECT_EQ(cudaEventRecord(a, nullptr), cudaSuccess);
  EXPECT_EQ(simgpu_test::TripleChevron(stub, dim3(4), dim3(64), nullptr), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(b, nullptr), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(b), cudaSuccess);
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  return ms;
}

TEST(SimgpuKernelModel, EnvironmentOverridesByNameAndDefault) {
  simgpu_test::RegisterKernel(reinterpret_cast<const void*>(&ScaleStub), "_Z6scalePfi");
  simgpu_test::RegisterKernel(reinterpret_cast<const void*>(&BlurStub), "_ZN2ns4blurEPf");
  simgpu_test::RegisterKernel(reinterpret_cast<const void*>(&ReduceStub),
                              "_Z6reduceIiLi4EEvPT_");
  simgpu_test::RegisterKernel(reinterpret_cast<const void*>(&OtherStub), "_Z5otherv");
  EXPECT_NEAR(ModelledMs(reinterpret_cast<const void*>(&ScaleStub)), 11, 0.001) << "mangled";
  EXPECT_NEAR(ModelledMs(reinterpret_cast<const void*>(&BlurStub)), 13, 0.001) << "demangled";
  EXPECT_NEAR(ModelledMs(reinterpret_cast<const void*>(&ReduceStub)), 17, 0.001)
      << "demangled name without return type and parameters, comma inside";
  EXPECT_NEAR(ModelledMs(reinterpret_cast<const void*>(&OtherStub)), 3, 0.001) << "default";
  const char* name = nullptr;
  ASSERT_EQ(cudaFuncGetName(&name, reinterpret_cast<const void*>(&BlurStub)), cudaSuccess);
  EXPECT_STREQ(name, "_ZN2ns4blurEPf") << "kernels are named by their mangled name";
}

}  // namespace
