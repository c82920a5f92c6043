// raw_memory.h — loads from interpreter memory that the agent does not own.
//
// Every pointer read out of a Python object is checked for plausibility before it is followed
// (user-space, aligned where the field is a pointer), so that the usual damage — NULL, a small
// integer, a torn half-written word — ends the walk without a fault. What slips through (a
// plausible pointer to unmapped memory) is caught by the FaultScope around the walk.
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

template <typename T>
inline T LoadAt(uintptr_t base, int offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(base + static_cast<intptr_t>(offset)),
              sizeof value);
  return value;
}

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_RAW_MEMORY_H_
