// layout_row.h — one row of a layout probe (layout_probe.cc): a field the agent reads, where one
// CUPTI header set puts it.
#ifndef GPUSTALL_AGENT_CUPTI_LAYOUT_LAYOUT_ROW_H_
#define GPUSTALL_AGENT_CUPTI_LAYOUT_LAYOUT_ROW_H_

#include <cstddef>

namespace gs {

struct LayoutRow {
  const char* layout;  // the read layout (CUpti_ActivityKernel9, ...)
  const char* field;
  size_t offset;
  size_t layout_size;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_CUPTI_LAYOUT_LAYOUT_ROW_H_
