// cuda_device.h — what the CUDA driver says about a device: its name, memory and the SM limits
// the analyzer's occupancy figures need (analyzer/occupancy/occupancy.h), incl. the opt-in and
// reserved shared memory that CUPTI's device record lacks.
//
// Asked from the writer thread, once per device and trace, of the libcuda.so.1 the process has
// mapped already (RTLD_NOLOAD: a process that never loaded the driver has no kernels to describe)
// and through dlsym on that library's own handle, so the agent's questions never reach an
// interposer. The driver API's device functions and CUdevice_attribute values are the same in
// CUDA 12 and 13 (append-only enum), unlike the runtime's cudaGetDeviceProperties, whose struct
// changed (agent/cupti/NOTES.md §9).
//
// Thread safety: safe from any thread (the driver's functions are). Allocation: dlopen's, once.
#ifndef GPUSTALL_AGENT_CAPTURE_CUDA_DEVICE_H_
#define GPUSTALL_AGENT_CAPTURE_CUDA_DEVICE_H_

#include <cstdint>

namespace gs {

// 0 where the driver did not answer.
struct CudaDeviceDescription {
  char name[256] = {};
  uint64_t total_memory = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int warp_size = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  int max_blocks_per_sm = 0;
  int shared_per_block = 0;         // the default per-block limit
  int shared_per_block_optin = 0;
  int shared_per_sm = 0;
  int reserved_shared_per_block = 0;
  bool has_reserved_shared = false;  // the driver answered (drivers before CUDA 11.0 do not)
};

// False when no driver is mapped or it does not know `ordinal`.
bool DescribeCudaDevice(uint32_t ordinal, CudaDeviceDescription* out);

}  // namespace gs

#endif  // GPUSTALL_AGENT_CAPTURE_CUDA_DEVICE_H_
