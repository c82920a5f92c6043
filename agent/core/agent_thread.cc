// agent_thread.cc
#include "agent/core/agent_thread.h"

namespace gs {
namespace agent_thread_internal {
__attribute__((tls_model("initial-exec"))) thread_local bool t_is_agent_thread = false;
}  // namespace agent_thread_internal
}  // namespace gs
