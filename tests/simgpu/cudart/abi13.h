// abi13.h — the runtime functions whose signature or struct CUDA 13.0 changed from 12.x and that
// simgpu implements: cudaGetDeviceProperties (cudaDeviceProp), cudaPointerGetAttributes
// (cudaPointerAttributes grew from 24 to 88 bytes) and cudaStreamGetCaptureInfo (12.x's _v3).
// libcudart.so.13 exports 13.0's under their names. The CUDA 12 flavour (SIMGPU_CUDART_MAJOR=12,
// libcudart.so.12) compiles the same definitions as sg13_<name>, hidden, and exports 12.x's
// functions of those names from cuda12_abi.cc, which call them.
#ifndef GPUSTALL_TESTS_SIMGPU_CUDART_ABI13_H_
#define GPUSTALL_TESTS_SIMGPU_CUDART_ABI13_H_

#if defined(SIMGPU_CUDART_MAJOR) && SIMGPU_CUDART_MAJOR == 12
// Two levels: the name is expanded first (cudaStreamGetCaptureInfo is renamed to its _ptsz
// variant in api_streamed_ptds.cc), then prefixed.
#define SG_ABI13(name) SG_ABI13_PREFIXED(name)
#define SG_ABI13_PREFIXED(name) sg13_##name
#else
#define SG_ABI13(name) name
#endif

#endif  // GPUSTALL_TESTS_SIMGPU_CUDART_ABI13_H_
