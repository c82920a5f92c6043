/* unsupported.c — every other entry point of the real libcudart.so.13, so that any program
 * linked against the real runtime loads: each returns cudaErrorNotSupported (801), sets the
 * calling thread's last error, and says once on stderr which call simgpu does not model.
 * The list (unsupported_api.inc) is the real library's exports minus what simgpu implements.
 * Arguments are ignored; on x86-64 a function returning int may be called with any arguments. */
#include "cudart/unsupported_stub.h"

#define SG_UNSUPPORTED(name) \
  __attribute__((visibility("default"))) int name(void) { return sgUnsupported(#name); }
#include "cudart/unsupported_api.inc"
#undef SG_UNSUPPORTED
