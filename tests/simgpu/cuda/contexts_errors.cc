// contexts_errors.cc — context handles and error names for simgpu's libcuda.so.1.
#include "cuda/driver_exports.h"

namespace simgpu {
namespace {

struct CuErrorEntry {
  int code;
  const char* name;
};
#include "cu_error_names.inc"

}  // namespace

int DeviceOfContext(CUcontext ctx) {
  for (int d = 0; d < DeviceCount(); ++d) {
    if (ContextHandle(d) == static_cast<void*>(ctx)) return d;
  }
  return -1;
}

const char* CuErrorName(CUresult e) {
  for (const CuErrorEntry& entry : kCuErrorNames) {
    if (entry.code == static_cast<int>(e)) return entry.name;
  }
  return nullptr;
}

}  // namespace simgpu
