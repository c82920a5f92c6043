// cubin.h — reading the kernel names out of a module image given to cuModuleLoadData.
//
// A cubin (nvcc -cubin, or what Triton's ptxas step produces) is an ELF64 file (EM_CUDA, 190).
// Its kernels are the STT_FUNC symbols of global (or weak) binding in .symtab whose section is
// .text.<symbol name>; device functions that are not kernels are local (or have no .text.<name>
// section of their own). A fatbinary (magic 0xBA55ED50, what nvcc embeds in host objects) holds
// cubins for several architectures; its ELF entries are read the same way.
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
