#include "analyzer/export/collapsed_stacks.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace gs::analyzer {

AnalysisOptions AllStacksOptions(AnalysisOptions options) {
  options.top_stacks = std::numeric_limits<size_t>::max();
  return options;
}

std::string FoldedFrame(const FrameInfo& frame) {
  std::string s = frame.function.empty() ? std::string("??") : frame.function;
  if (!frame.file.empty()) absl::StrAppend(&s, " (", frame.file, frame.line ? absl::StrCat(":", frame.line) : "", ")");
  for (char& c : s)
    if (c == ';' || c == '\n' || c == '\r') c = ':';
  return s;
}

TimeNs WriteCollapsedStacks(const Analysis& analysis, std::ostream* out) {
  TimeNs total = 0;
  std::string line;
  for (const StackShare& s : analysis.top_stacks) {
    if (s.idle_ns <= 0) continue;
    line.clear();
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it)
      absl::StrAppend(&line, it == s.frames.rbegin() ? "" : ";", FoldedFrame(*it));
    if (line.empty()) line = "(no stack)";
    *out << line << ' ' << s.idle_ns << '\n';
    total += s.idle_ns;
  }
  return total;
}

}  // namespace gs::analyzer
