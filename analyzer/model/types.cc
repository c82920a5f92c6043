#include "analyzer/model/types.h"

namespace gs::analyzer {

CopyDirection DirectionFromCudaMemcpyKind(uint32_t kind) {
  switch (kind) {  // cudaMemcpyHostToHost=0, HostToDevice=1, DeviceToHost=2, DeviceToDevice=3
    case 0: return CopyDirection::kHostToHost;
    case 1: return CopyDirection::kHostToDevice;
    case 2: return CopyDirection::kDeviceToHost;
    case 3: return CopyDirection::kDeviceToDevice;
    default: return CopyDirection::kUnknown;
  }
}

CopyDirection DirectionFromCuptiMemcpyKind(uint32_t kind) {
  switch (kind) {  // CUPTI_ACTIVITY_MEMCPY_KIND_*: 1 HTOD, 2 DTOH, 3 HTOA, 4 ATOH, 5 ATOA,
                   // 6 ATOD, 7 DTOA, 8 DTOD, 9 HTOH, 10 PTOP
    case 1: case 3: return CopyDirection::kHostToDevice;
    case 2: case 4: return CopyDirection::kDeviceToHost;
    case 5: case 6: case 7: case 8: return CopyDirection::kDeviceToDevice;
    case 9: return CopyDirection::kHostToHost;
    case 10: return CopyDirection::kPeerToPeer;
    default: return CopyDirection::kUnknown;
  }
}

const char* CopyDirectionName(CopyDirection d) {
  switch (d) {
    case CopyDirection::kHostToDevice: return "H2D";
    case CopyDirection::kDeviceToHost: return "D2H";
    case CopyDirection::kDeviceToDevice: return "D2D";
    case CopyDirection::kHostToHost: return "H2H";
    case CopyDirection::kPeerToPeer: return "P2P";
    default: return "unknown";
  }
}

}  // namespace gs::analyzer
