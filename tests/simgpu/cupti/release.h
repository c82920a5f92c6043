// release.h — the CUPTI release simgpu's libcupti plays: its CUDA major (fixed when the library is
// built: libcupti.so.13, or libcupti.so.12 from the same sources) and its API version
// (SIMGPU_CUPTI_API_VERSION, read once), which decide what cuptiGetVersion returns and which
// record layout each kind is handed out in.
//
// The layouts per release (agent/cupti/NOTES.md §9, from each release's cupti_activity.h): every
// 12.x layout is a prefix of 13.0's struct for the kind, so a record is built in the 13.0 struct
// and handed out cut to its release's size. Bytes that the release leaves as padding and 13.0
// made a field (Memcpy6's and Memset4's isDeviceLaunched on 12.x) are filled with 0xA5, so a reader
// that strays past its release's fields reads garbage, not a plausible zero.
#ifndef GPUSTALL_TESTS_SIMGPU_CUPTI_RELEASE_H_
#define GPUSTALL_TESTS_SIMGPU_CUPTI_RELEASE_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace simgpu_cupti {

// 12 or 13 (SIMGPU_CUPTI_MAJOR at build time).
int CudaMajor();
// What cuptiGetVersion returns: SIMGPU_CUPTI_API_VERSION when it names a version of this major
// (18, 20, 21, 22, 23, 24, 26, 28 for 12; 130000 and up for 13), else the newest the headers or
// NVIDIA's last 12.x library know (130001, 28).
uint32_t ApiVersion();
// The size of the record this release hands out for `kind`, 0 for a kind it has none for.
size_t RecordSize(CUpti_ActivityKind kind);
// Fills the bytes of a record built in the 13.0 struct that this release has as padding.
void FillReleasePadding(void* record);

}  // namespace simgpu_cupti

#endif  // GPUSTALL_TESTS_SIMGPU_CUPTI_RELEASE_H_
