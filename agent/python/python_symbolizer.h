// python_symbolizer.h — captured Python frames to (file, function, line), off the hot path.
//
// Thread safety: NOT thread safe; one instance per consuming thread (the writer thread). It
// only reads the code table (published slots never change), so it may run concurrently with
// captures on other threads.
#ifndef GPUSTALL_AGENT_PYTHON_PYTHON_SYMBOLIZER_H_
#define GPUSTALL_AGENT_PYTHON_PYTHON_SYMBOLIZER_H_

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "agent/python/code_table.h"
#include "agent/python/python_stacks.h"

namespace gs {

struct PythonSymbol {
  std::string_view filename;  // views into the code table: valid for the process lifetime
  std::string_view function;  // qualified name on 3.11+, plain name before
  int line = -1;              // -1: CPython has no line for this instruction
  int firstlineno = 0;
};

class PythonSymbolizer {
 public:
  // `table` must outlive the symbolizer.
  explicit PythonSymbolizer(const PythonCodeTable& table) : table_(table) {}

  // False if the frame's code object was not stored (code_id 0: table full or unreadable) or
  // the id is unknown; `out` then holds "<unknown>" names and line -1.
  bool Symbolize(PythonFrameRef frame, PythonSymbol* out);

 private:
  // (code id, addrq) -> line: module-level tables can be long, and hot loops repeat offsets.
  static constexpr size_t kMaxCachedLines = 1 << 20;

  const PythonCodeTable& table_;
  // std, not absl: Debian's static Abseil cannot go into libgsagent.so (agent/CMakeLists.txt).
  std::unordered_map<uint64_t, int32_t> line_cache_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_PYTHON_SYMBOLIZER_H_
