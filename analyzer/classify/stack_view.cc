#include "analyzer/classify/stack_view.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analyzer/classify/gap_classifier.h"
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

// A frame of runpy (the standard library's "<frozen runpy>" since 3.11, ".../runpy.py" before):
// `python -m pkg.mod` runs the main module's `<module>` under _run_module_as_main <- _run_code.
bool IsRunpyFrame(const FrameInfo& f) {
  return IsPythonFrame(f) && (f.file == "<frozen runpy>" || f.file == "runpy.py" || absl::EndsWith(f.file, "/runpy.py"));
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
  // `python -m`: runpy's frames above the main module's `<module>` are the interpreter's way in,
  // as Py_RunMain is for a script; the program is rooted at its `<module>` either way. Only when
  // they are the outermost frames left: runpy.run_path called from the user's code stays.
  size_t root = out.size();
  while (root > 0 && IsRunpyFrame(out[root - 1])) --root;
  if (root < out.size() && root > 0 && IsPythonFrame(out[root - 1]) && out[root - 1].function == "<module>")
    out.resize(root);
  return out;
}

std::string FrameIdentity(const FrameInfo& f) {
  if (f.function.empty()) return absl::StrCat(f.module, "\x1f", f.file, "\x1f", f.line);
  return absl::StrCat(f.module.empty() ? f.file : f.module, "\x1f", f.function);
}

std::string StackIdentity(const std::vector<FrameInfo>& frames) {
  std::string identity;
  for (const FrameInfo& f : frames) absl::StrAppend(&identity, FrameIdentity(f), "\x1e");
  return identity;
}

std::vector<FrameInfo> ChargeKeyFrames(const TraceTables& tables, uint64_t key) {
  if (key == 0) return {FrameInfo{"(no host call recorded)", "", 0, ""}};
  if (key & kFunctionKeyBit) {
    return {FrameInfo{absl::StrCat(tables.FunctionName(static_cast<uint32_t>(key)), " (no stack)"), "", 0, ""}};
  }
  std::vector<FrameInfo> frames = ViewStack(tables.ResolveStack(static_cast<uint32_t>(key)));
  if (frames.empty()) frames.push_back(FrameInfo{absl::StrCat("stack#", key, " (not in trace)"), "", 0, ""});
  return frames;
}

}  // namespace gs::analyzer
