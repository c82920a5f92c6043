// layout_probe.cc — compiled once per CUPTI header set (CMakeLists.txt: the CUDA 12 wheels'
// headers, then the toolkit's), with GS_LAYOUT_PROBE naming the function: the offset of every
// field the agent reads (activity_layouts.h) and the size of its read layout, in these headers.
// Nothing else from CUDA is in this file, so one binary can hold a probe per header set.
#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "agent/cupti/activity_layouts.h"
#include "agent/cupti/layout/layout_row.h"

extern "C" const gs::LayoutRow* GS_LAYOUT_PROBE(size_t* count, uint32_t* api_version) {
#define GS_ROW(READ, NEW, FIELD) {#READ, #FIELD, offsetof(READ, FIELD), sizeof(READ)},
  static const gs::LayoutRow kRows[] = {GS_CUPTI_READ_FIELDS(GS_ROW)};
#undef GS_ROW
  *count = sizeof(kRows) / sizeof(kRows[0]);
  *api_version = CUPTI_API_VERSION;
  return kRows;
}
