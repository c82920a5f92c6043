/* simgpu.h — extensions of the simulated CUDA device, for test programs (C, C++, Python ctypes).
 *
 * These symbols live in simgpu's libcudart.so.13 (so `ctypes.CDLL("libcudart.so.13")` finds them)
 * and exist in no real CUDA runtime: a program that calls them runs only on simgpu. Programs meant
 * to run on a real GPU too use real __global__ kernels, whose durations come from the model
 * described in tests/simgpu/README.md.
 *
 * Thread safety: every function may be called from any thread at any time.
 */
#ifndef GPUSTALL_TESTS_SIMGPU_SIMGPU_H_
#define GPUSTALL_TESTS_SIMGPU_SIMGPU_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns a kernel handle usable as the `func` argument of cudaLaunchKernel (and its _ptsz
 * variant). Each launch of it occupies its stream for exactly `duration_ns` of device time.
 * `name` is copied; the same (name, duration) pair returns the same handle. Never NULL. */
const void* simgpuKernel(const char* name, uint64_t duration_ns);

/* Declares what the cubin of `kernel` would say it needs of an SM: `registers_per_thread` (1-255)
 * and `static_shared_bytes` (its __shared__ arrays, at most 48 KiB), for a kernel that has no
 * cubin simgpu can read: a handle from simgpuKernel/simgpuCollective, or a host function
 * registered without a real fatbinary. Later launches report them (CUPTI's registersPerThread and
 * staticSharedMemory, cudaFuncGetAttributes' numRegs and sharedSizeBytes) and the static shared
 * memory counts against the launch's 48 KiB (README.md, "Kernel resources"). Undeclared, a
 * kernel without a readable cubin has 32 registers per thread and no static shared memory.
 * Returns 0, or -1 for an unknown kernel or an out-of-range value. */
int simgpuKernelResources(const void* kernel, int registers_per_thread, size_t static_shared_bytes);

/* A collective (an all-reduce across processes): the k-th launch in every process of `group`
 * completes only when all SIMGPU_WORLD ranks (rank from RANK or SLURM_PROCID) have started their
 * k-th launch, then takes duration_ns; it occupies its stream while it waits. Tools see a kernel
 * named like NCCL's ("ncclDevKernel_AllReduce_Sum_f32_RING_LL"). A rank that never arrives fails
 * it after SIMGPU_COLLECTIVE_TIMEOUT (sticky cudaErrorLaunchTimeout). README.md, "Collectives". */
const void* simgpuCollective(const char* group, uint64_t duration_ns);

/* Copy bandwidth in bytes per second for one direction (a cudaMemcpyKind value:
 * 1 = host->device, 2 = device->host, 3 = device->device) and host memory kind
 * (pinned != 0: page-locked; 0: pageable; ignored for device->device).
 * Returns 0 on success, -1 for a bad argument. */
int simgpuSetCopyBandwidth(int memcpy_kind, int pinned, double bytes_per_second);

/* Device memory capacity in bytes for every simulated device; allocations past it fail with
 * cudaErrorMemoryAllocation. Returns 0, or -1 if `bytes` is below what is allocated now. */
int simgpuSetMemoryCapacity(size_t bytes);

/* The clock every simgpu timestamp (truth file, device timeline) is on: CLOCK_MONOTONIC, ns. */
uint64_t simgpuNowNs(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif
#endif  /* GPUSTALL_TESTS_SIMGPU_SIMGPU_H_ */
