#include "analyzer/classify/stack_view.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analyzer/classify/site_frame.h"

namespace gs::analyzer {

namespace {

// "libjpeg.so.62+0x231e3" -> "libjpeg.so.62+?" (the reader's name for a frame without a symbol);
// false for anything else.
bool BucketUnnamed(FrameInfo* f) {
  if (f->module.empty() || !f->file.empty()) return false;
  const absl::string_view fn = f->function;
  const size_t plus = fn.rfind("+0x");
  if (plus == absl::string_view::npos || plus == 0 || plus + 3 == fn.size()) return false;
  for (char c : fn.substr(plus + 3))
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  f->function = absl::StrCat(fn.substr(0, plus), "+?");
  f->line = 0;
  return true;
}

}  // namespace

std::vector<FrameInfo> ViewStack(std::vector<FrameInfo> frames) {
  size_t inner = frames.size(), outer = frames.size();
  for (size_t i = 0; i < frames.size(); ++i) {
    if (!IsPythonFrame(frames[i])) continue;
    if (inner == frames.size()) inner = i;
    outer = i;
  }
  std::vector<FrameInfo> out;
  out.reserve(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    FrameInfo& f = frames[i];
    if (inner < frames.size() && !IsPythonFrame(f)) {
      // The interpreter's frames go wherever they are; above the outermost Python frame the C
      // runtime and entry frames go too. What else is there stays: the program embedding Python,
      // a native library's thread that calls into Python (torch's autograd engine).
      if (IsInterpreterFrame(f) || (i > outer && IsProcessRuntimeFrame(f))) continue;
    }
    const bool unnamed = BucketUnnamed(&f);
    // A module's internal calls without symbols are one frame: the bucket of its caller.
    if (unnamed && !out.empty() && out.back().function == f.function && out.back().module == f.module) continue;
    out.push_back(std::move(f));
  }
  return out;
}

std::string FrameIdentity(const FrameInfo& f) {
  if (f.function.empty()) return absl::StrCat(f.module, "\x1f", f.file, "\x1f", f.line);
  return absl::StrCat(f.module.empty() ? f.file : f.module, "\x1f", f.function);
}

}  // namespace gs::analyzer
