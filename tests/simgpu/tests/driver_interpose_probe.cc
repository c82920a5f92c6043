// driver_interpose_probe.cc — the trap of issue "driver-API launches": a program (or an
// LD_PRELOADed tool) that defines cuLaunchKernel interposes the calls made by name, but not the
// entry point a library fetched with cuGetProcAddress — the driver hands out its own function,
// as NVIDIA's does (libcuda.so.1 binds its own symbols, -Bsymbolic-functions).
// Exit 0: a call by name reached the interposer, the fetched pointer did not.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>

namespace {
int g_interposed_calls = 0;
using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void**, void**);
}  // namespace

extern "C" CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shm,
                                   CUstream s, void** args, void** extra) {
  ++g_interposed_calls;
  auto next = reinterpret_cast<LaunchFn>(dlsym(RTLD_NEXT, "cuLaunchKernel"));
  return next ? next(f, gx, gy, gz, bx, by, bz, shm, s, args, extra) : CUDA_ERROR_UNKNOWN;
}

int main() {
  if (cuInit(0) != CUDA_SUCCESS) return 2;
  void* fetched = nullptr;
  CUdriverProcAddressQueryResult status;
  if (cuGetProcAddress("cuLaunchKernel", &fetched, CUDA_VERSION, 0, &status) != CUDA_SUCCESS) {
    return 2;
  }
  // Without a context both calls fail (CUDA_ERROR_INVALID_CONTEXT): only who gets them matters.
  cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  int by_name = g_interposed_calls;
  reinterpret_cast<LaunchFn>(fetched)(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  int through_pointer = g_interposed_calls - by_name;
  std::printf("by name: %d interposed call(s); through cuGetProcAddress: %d\n", by_name,
              through_pointer);
  return by_name == 1 && through_pointer == 0 ? 0 : 1;
}
