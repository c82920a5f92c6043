// raw_memory.h — loads from interpreter memory that the agent does not own.
//
// Every pointer read out of a Python object is checked for plausibility before it is followed
// (user-space, aligned where the field is a pointer), so that the usual damage — NULL, a small
// integer, a torn half-written word — ends the walk without a fault. What slips through (a
// plausible pointer to unmapped memory) is caught by the FaultScope around the walk.
//
// These reads race with the interpreter by design: a thread state or frame may be freed or
// rewritten while it is read (the sampler reads blocked threads from its own thread, and the
// interpreter frees thread states at exit), and what is read is validated, never trusted. So they
// are not instrumented by AddressSanitizer or ThreadSanitizer, which would report exactly the
// race the design accepts (GS_RACY_READ). Everything else in the agent stays instrumented.
#ifndef GPUSTALL_AGENT_PYTHON_RAW_MEMORY_H_
#define GPUSTALL_AGENT_PYTHON_RAW_MEMORY_H_

#include <cstdint>
#include <cstring>

namespace gs {

// Canonical x86-64/aarch64 user-space address, 8-byte aligned (every PyObject* and frame is).
inline bool PlausibleObject(uintptr_t p) {
  return p >= 4096 && p < (uintptr_t{1} << 47) && (p & 7) == 0;
}

// Same, for pointers into byte arrays (instruction pointers are 2-byte aligned).
inline bool PlausibleAddress(uintptr_t p) { return p >= 4096 && p < (uintptr_t{1} << 47); }

#define GS_RACY_READ __attribute__((no_sanitize_address, no_sanitize("thread")))

template <typename T>
GS_RACY_READ inline T LoadAt(uintptr_t base, int offset) {
  T value;
  // A fixed-size builtin copy compiles to plain loads (no memcpy call a sanitizer intercepts).
  __builtin_memcpy(&value, reinterpret_cast<const void*>(base + static_cast<intptr_t>(offset)),
                   sizeof value);
  return value;
}

// `n` bytes of interpreter memory (names, paths, line tables) into the agent's own buffer. Byte
// by byte through volatile loads, so the compiler cannot turn the loop into a memcpy call (which
// a sanitizer intercepts); it runs once per code object, when it is first seen.
GS_RACY_READ inline void CopyFrom(void* dst, uintptr_t src, size_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  const volatile unsigned char* in = reinterpret_cast<const volatile unsigned char*>(src);
  for (size_t i = 0; i < n; ++i) out[i] = in[i];
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_RAW_MEMORY_H_
