// window_path.cc
#include "agent/control/window_path.h"

namespace gs {
namespace control {

std::string WindowTracePath(const std::string& trace_path, int window) {
  const std::string tag = ".window-" + std::to_string(window);
  const size_t slash = trace_path.rfind('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = trace_path.rfind('.');
  // A dot that starts the name (".hidden") is not an extension.
  if (dot == std::string::npos || dot <= name_start) return trace_path + tag;
  return trace_path.substr(0, dot) + tag + trace_path.substr(dot);
}

}  // namespace control
}  // namespace gs
