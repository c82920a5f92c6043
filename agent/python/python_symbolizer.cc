// python_symbolizer.cc — see python_symbolizer.h.
#include "agent/python/python_symbolizer.h"

#include "agent/python/line_table.h"

namespace gs {

bool PythonSymbolizer::Symbolize(PythonFrameRef frame, PythonSymbol* out) {
  PythonCodeInfo info;
  if (!table_.Lookup(frame.code_id, &info)) {
    out->filename = "<unknown>";
    out->function = "<unknown>";
    out->line = -1;
    out->firstlineno = 0;
    return false;
  }
  out->filename = info.filename_len ? std::string_view(info.filename, info.filename_len)
                                    : std::string_view("<unknown>");
  out->function = info.function_len ? std::string_view(info.function, info.function_len)
                                    : std::string_view("<unknown>");
  out->firstlineno = info.firstlineno;
  const uint64_t key =
      (static_cast<uint64_t>(frame.code_id) << 32) | static_cast<uint32_t>(frame.addrq);
  auto it = line_cache_.find(key);
  if (it != line_cache_.end()) {
    out->line = it->second;
    return true;
  }
  out->line = PythonLineForOffset(info.format, info.linetable, info.linetable_len, info.firstlineno,
                                  frame.addrq);
  if (line_cache_.size() >= kMaxCachedLines) line_cache_.clear();
  line_cache_.emplace(key, out->line);
  return true;
}

}  // namespace gs
