// api_name.h — how the writer learns the names of API ids (shim table indices, CUPTI cbids).
#ifndef GPUSTALL_AGENT_WRITER_API_NAME_H_
#define GPUSTALL_AGENT_WRITER_API_NAME_H_

#include <cstdint>

#include "agent/record/events.h"

namespace gs {

// Returns the name of API `api_id` from `source` ("cudaMemcpyAsync"), or nullptr if unknown.
// Called on the writer thread, once per distinct (source, api_id) per trace; must not call CUDA.
// The string must stay valid for the call only (it is copied).
using ApiNameFunction = const char* (*)(ApiSource source, uint16_t api_id);

}  // namespace gs

#endif  // GPUSTALL_AGENT_WRITER_API_NAME_H_
