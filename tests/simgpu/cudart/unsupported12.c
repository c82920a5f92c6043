/* unsupported12.c — unsupported.c for the CUDA 12 flavour (libcudart.so.12): every other entry point
 * of the real libcudart.so.12 (unsupported12_api.inc), each returning cudaErrorNotSupported. */
#include "cudart/unsupported_stub.h"

#define SG_UNSUPPORTED(name) \
  __attribute__((visibility("default"))) int name(void) { return sgUnsupported(#name); }
#include "cudart/unsupported12_api.inc"
#undef SG_UNSUPPORTED
