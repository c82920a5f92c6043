// cubin.h — reading the kernel names out of a module image given to cuModuleLoadData.
//
// A cubin (nvcc -cubin, or what Triton's ptxas step produces) is an ELF64 file (EM_CUDA, 190).
// Its kernels are the STT_FUNC symbols of global (or weak) binding in .symtab whose section is
// .text.<symbol name>; device functions that are not kernels are local (or have no .text.<name>
// section of their own). A fatbinary (magic 0xBA55ED50, what nvcc embeds in host objects) holds
// cubins for several architectures; its ELF entries are read the same way.
// Source: the CUDA 13 toolkit's own output — `readelf -sW` of `nvcc -cubin -arch=sm_90
// tests/driver_kernels.cu` shows the kernels as GLOBAL FUNC symbols in .text._Z5scalePffi /
// .text.triton_add (st_other 0x10), the __noinline__ device function as a LOCAL FUNC inside its
// caller's section; ELF e_machine 190 (EM_CUDA). The fatbinary layout is read off `nvcc -fatbin`
// output (xxd): a 16-byte header (magic u32, version u16, header size u16, payload size u64), then
// entries (kind u16: 2 = ELF, 1 = PTX; version u16; entry-header size u32 (64); payload size u64;
// ...) each followed by its payload.
#ifndef GPUSTALL_TESTS_SIMGPU_CUDA_CUBIN_H_
#define GPUSTALL_TESTS_SIMGPU_CUDA_CUBIN_H_

#include <cstddef>
#include <string>
#include <vector>

namespace simgpu {

enum class ImageStatus { kOk, kInvalidImage, kNotSupported };

// Reads the kernel names of `image`. The size of an ELF image is taken from its headers (the
// driver API passes no size); `max_size` bounds every read (SIZE_MAX when unknown).
ImageStatus ReadModuleKernels(const void* image, size_t max_size, std::vector<std::string>* names);

// The same on an ELF image of known size (tests).
ImageStatus ReadElfKernels(const unsigned char* data, size_t size, std::vector<std::string>* names);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_CUDA_CUBIN_H_
