// cupti_stack_reuse_test.cc — calls that reach the agent only through CUPTI's runtime callback
// (Python's ctypes calls the runtime past the shim's wrappers) reuse their stack like a wrapper's
// (ring_recorder.h, "Stack reuse"): simgpu's runtime and CUPTI in process, the agent's real ring
// recorder and libunwind. Its own process: CUPTI has one subscriber.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/cupti/simgpu_cupti_rig.h"
#include "agent/record/reused_stacks.h"
#include "simgpu.h"

namespace gs {
namespace {

// The ring's launch stacks as a reader sees them: reused ones resolved through `reused`, which
// lives as long as the ring's owner (reused_stacks.h).
std::vector<std::vector<uint64_t>> DrainStacks(RingPool& pool, ReusedStacks* reused) {
  std::vector<std::vector<uint64_t>> stacks;
  pool.ring(0).ring.Drain([&](const RingRecordHeader& h) {
    ApiCallView v = RingRecorder::View(h);
    reused->Resolve(&v);
    if (v.event->api_class == ApiClass::kLaunch) stacks.emplace_back(v.pcs, v.pcs + v.pc_count);
  });
  return stacks;
}

// One place that launches; two callers of it at the same stack depth.
__attribute__((noinline)) void Launch(const void* kernel, cudaStream_t stream) {
  dim3 one{1, 1, 1};
  ASSERT_EQ(cudaLaunchKernel(kernel, one, one, nullptr, 0, stream), cudaSuccess);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void LaunchFromA(const void* kernel, cudaStream_t stream) {
  Launch(kernel, stream);
  __asm__ volatile("" ::: "memory");
}
volatile int g_not_folded = 0;
__attribute__((noinline)) void LaunchFromB(const void* kernel, cudaStream_t stream) {
  g_not_folded = 1;  // not identical to LaunchFromA: the compiler must not fold the two
  Launch(kernel, stream);
  __asm__ volatile("" ::: "memory");
}

TEST(CuptiStackReuseTest, CallbackLoopUnwindsOncePerCallerAndKeepsExactStacks) {
  SimgpuCuptiRig rig;
  ASSERT_EQ(rig.Start(), "");
  RingPool& pool = rig.pool;

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const void* kernel = simgpuKernel("reuse_test_kernel", 1000);
  ThreadRing& ring = pool.ring(0);  // this thread's first recorded call took ring 0
  ReusedStacks reused;
  DrainStacks(pool, &reused);

  // 100 launches from one caller: one unwind, 99 reuses, 100 stacks identical to the unwound one.
  const uint64_t unwinds = ring.stack_unwinds, reuses = ring.stack_reuses;
  for (volatile int i = 0; i < 100; i = i + 1) LaunchFromA(kernel, stream);
  EXPECT_EQ(ring.stack_unwinds - unwinds, 1u);
  EXPECT_EQ(ring.stack_reuses - reuses, 99u);
  std::vector<std::vector<uint64_t>> a = DrainStacks(pool, &reused);
  ASSERT_EQ(a.size(), 100u);
  for (const auto& s : a) EXPECT_EQ(s, a[0]);

  // The same dispatcher frame at the same stack pointer, another caller above: the slot check
  // catches it and unwinds afresh; then that caller's loop reuses its own.
  for (int i = 0; i < 3; ++i) LaunchFromB(kernel, stream);
  EXPECT_EQ(ring.stack_unwinds - unwinds, 2u);
  EXPECT_EQ(ring.stack_reuses - reuses, 101u);
  std::vector<std::vector<uint64_t>> b = DrainStacks(pool, &reused);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[1], b[0]);
  EXPECT_EQ(b[2], b[0]);
  ASSERT_EQ(b[0].size(), a[0].size());
  EXPECT_EQ(b[0][0], a[0][0]);  // the same site
  EXPECT_NE(b[0], a[0]);        // returns into LaunchFromB, not LaunchFromA

  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  rig.source->Stop();
}

}  // namespace
}  // namespace gs
