#include "analyzer/cli/terminal/progress.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analyzer/units/units.h"

namespace gs::analyzer::cli {

std::string ProgressText(size_t file_index, size_t files, const std::string& name, uint64_t bytes_read,
                         uint64_t file_bytes) {
  std::string base = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  if (base.size() > 40) base = "…" + base.substr(base.size() - 39);
  std::string text = absl::StrCat("analysing ", files > 1 ? absl::StrCat(file_index + 1, "/", files, " ") : "", base);
  if (file_bytes > 0) {
    const double share = std::min(1.0, static_cast<double>(bytes_read) / static_cast<double>(file_bytes));
    absl::StrAppend(&text, "  ", static_cast<int>(share * 100), "%  ", FormatBytes(bytes_read), " of ",
                    FormatBytes(file_bytes));
  } else {
    absl::StrAppend(&text, "  ", FormatBytes(bytes_read));
  }
  return text;
}

ProgressLine::ProgressLine(std::ostream* out, bool enabled, Options options)
    : out_(*out), enabled_(enabled), options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return std::chrono::steady_clock::now(); };
  start_ = options_.clock();
}

ProgressLine::~ProgressLine() { Finish(); }

void ProgressLine::Update(size_t file_index, size_t files, const std::string& name, uint64_t bytes_read,
                          uint64_t file_bytes) {
  if (!enabled_) return;
  const auto now = options_.clock();
  if (now - start_ < options_.delay) return;
  if (drawn_ && now - last_ < options_.interval) return;
  last_ = now;
  const std::string text = ProgressText(file_index, files, name, bytes_read, file_bytes);
  size_t cols = 0;
  for (unsigned char c : text) cols += (c & 0xC0) != 0x80;
  // "\r" then the text, padded over the previous line's leftovers.
  out_ << "\r" << text << std::string(width_ > cols ? width_ - cols : 0, ' ') << std::flush;
  width_ = std::max(width_, cols);
  drawn_ = true;
  ++redraws_;
}

void ProgressLine::Finish() {
  if (!drawn_) return;
  // "\r", blanks over the line, "\r": works on any terminal (no escape sequence needed).
  out_ << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  drawn_ = false;
  width_ = 0;
}

}  // namespace gs::analyzer::cli
