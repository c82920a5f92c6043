// cubin.h — reading the kernels out of a module image: their names, and what each needs of an SM
// (registers per thread, static shared memory), as the real driver learns them from the image.
// Used by cuModuleLoadData (libcuda.so.1) and by __cudaRegisterFatBinary (libcudart), which
// receives the fatbinary nvcc embeds in the host program.
//
// Kernels. A cubin (nvcc -cubin, or what Triton's ptxas step produces) is an ELF64 file (EM_CUDA,
// 190). Its kernels are the STT_FUNC symbols of global (or weak) binding in .symtab whose section
// is .text.<symbol name>; device functions that are not kernels are local (or have no .text.<name>
// section of their own). A fatbinary (magic 0xBA55ED50, what nvcc embeds in host objects) holds
// cubins for several architectures; its ELF entries are read the same way.
// Source: the CUDA 13 toolkit's own output — `readelf -sW` of `nvcc -cubin -arch=sm_90
// tests/driver_kernels.cu` shows the kernels as GLOBAL FUNC symbols in .text._Z5scalePffi /
// .text.triton_add (st_other 0x10), the __noinline__ device function as a LOCAL FUNC inside its
// caller's section; ELF e_machine 190 (EM_CUDA). The fatbinary layout is read off `nvcc -fatbin`
// output (xxd): a 16-byte header (magic u32, version u16, header size u16, payload size u64), then
// entries (kind u16: 2 = ELF, 1 = PTX; version u16; entry-header size u32 (64); payload size u64;
// ...; at entry offset 28 the architecture as a u32, 90 for sm_90 (`nvcc -fatbin -gencode
// arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90` gives one entry with 80 and one
// with 90); at 40 flags: 0x11 on the ELF entries, 0x8011 on the PTX entry, whose payload CUDA 13
// compressed (it starts with zstd's magic 28 b5 2f fd)) each followed by its payload.
// When a fatbinary holds several cubins, the sm_90 one is read (simgpu's devices are compute
// capability 9.0, and the real driver picks the cubin for the device's architecture); else the
// first readable one (the real driver would JIT-compile the PTX for sm_90 then: its register count
// may differ). Compressed entries are not read.
//
// Registers per thread: attribute EIATTR_REGCOUNT (0x2f) of the cubin's `.nv.info` section. The
// section (type SHT_LOPROC, 0x70000000) is a sequence of 4-byte-aligned entries: format u8,
// attribute u8, then for format 0x04 (a sized value) a u16 size and `size` bytes of value; formats
// 0x02 and 0x03 carry their (at most 2-byte) value in the u16 itself and have no more bytes (0x01,
// not seen, is read alike); any other format byte means the section is garbled.
// EIATTR_REGCOUNT is format 0x04, size 8: the kernel's symbol index (u32, into .symtab), then its
// register count (u32).
// Source: `nvcc -cubin -arch=sm_90 -Xptxas -v` (CUDA 13.0, V13.0.88) on four probe kernels and
// `readelf -x .nv.info`: the section held exactly one entry `04 2f 08 00 <sym u32> <count u32>`
// per kernel, and for each the count equalled ptxas's "Used N registers" (64 for a kernel with
// 48 live floats under __launch_bounds__(64), 12, 12 and 4), the symbol index naming that kernel
// in `readelf -sW`; the other entries were 0x11 and 0x12 (per-kernel frame and stack sizes, 0).
// The same held for -arch=sm_75 and sm_80 cubins. (sm_75/sm_80 cubins also carry the count in
// the top byte of .text.<kernel>'s sh_info; sm_90 ones do not, so it is not used.)
//
// Static shared memory: the size of the kernel's NOBITS section `.nv.shared.<kernel>`; none means
// none. For sm_90 and later, ptxas counts the driver's 1 KiB per-block reservation (the CUDA C
// Programming Guide's "1 KB reserved per block", cudaDevAttrReservedSharedMemoryPerBlock) into
// that section and marks such a cubin with a section `.nv.shared.reserved.0`; the reservation is
// not the kernel's own (ptxas -v does not count it), so it is taken off. Not checked on a GPU:
// whether NVIDIA's driver, for such a cubin, reports the 1 KiB in
// CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES and CUPTI's staticSharedMemory; simgpu reports ptxas's
// figure.
// Source: CUDA 13.0's ptxas -v against `readelf -SW`: sm_75/80/86/89 cubins (no
// .nv.shared.reserved.0): section size = ptxas's "bytes smem" (4000 for `__shared__ float
// buf[1000]`); sm_90/90a/100/120 cubins (with .nv.shared.reserved.0): 1024 more (5024; 1048 for
// 24 bytes smem; 50176 for 49152; 1024 for a kernel ptxas reported no smem for). Kernels that use
// no shared memory at all may have no section.
#ifndef GPUSTALL_TESTS_SIMGPU_CUDA_CUBIN_H_
#define GPUSTALL_TESTS_SIMGPU_CUDA_CUBIN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace simgpu {

enum class ImageStatus { kOk, kInvalidImage, kNotSupported };

// One kernel of an image.
struct CubinKernel {
  std::string name;               // the symbol name (mangled for C++ kernels)
  int registers_per_thread = -1;  // EIATTR_REGCOUNT; -1 when the image does not say (or garbled)
  uint32_t static_shared_bytes = 0;
};

// Reads the kernels of `image`: a cubin, or a fatbinary holding one. The size of an ELF image is
// taken from its headers (the driver API passes no size), that of a fatbinary from its header;
// `max_size` bounds every read (SIZE_MAX when unknown). A malformed image is kInvalidImage, one
// simgpu cannot read (PTX, compressed) kNotSupported; a garbled .nv.info only leaves registers
// unknown.
ImageStatus ReadModuleKernels(const void* image, size_t max_size,
                              std::vector<CubinKernel>* kernels);

// The same on an ELF image of known size (tests).
ImageStatus ReadElfKernels(const unsigned char* data, size_t size,
                           std::vector<CubinKernel>* kernels);

// The fatbinary behind nvcc's registration wrapper (fatbinary_section.h's __fatBinC_Wrapper_t:
// magic 0x466243B1, version, data = the fatbinary), as __cudaRegisterFatBinary receives it; NULL
// when `wrapper` is not one (simgpu's tests register kernels with a dummy).
const void* FatbinaryOfWrapper(const void* wrapper);

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_CUDA_CUBIN_H_
