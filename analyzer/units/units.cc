#include "analyzer/units/units.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gs::analyzer {

namespace {
// `v` with three significant digits or more ("%.0f" from 100 on, "%.1f" from 10, else "%.2f"),
// then the unit. std::to_chars rounds the double's exact value as printf does
// (analyzer.UnitsTest.*: every duration below 2 ms and 2 million more against absl::StrFormat)
// without parsing a format: the Chrome export writes three durations for each of millions of
// idle intervals.
std::string ThreeDigits(double v, std::string_view unit, std::string_view sign = "") {
  char digits[32];
  const int precision = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  const std::to_chars_result r = std::to_chars(digits, digits + sizeof(digits), v, std::chars_format::fixed, precision);
  std::string out;
  out.reserve(sign.size() + static_cast<size_t>(r.ptr - digits) + 1 + unit.size());
  out.append(sign).append(digits, r.ptr).append(1, ' ').append(unit);
  return out;
}
}  // namespace

std::string FormatDuration(TimeNs ns) {
  double a = std::fabs(static_cast<double>(ns));
  const char* sign = ns < 0 ? "-" : "";
  if (a < 1e3) return absl::StrCat(sign, static_cast<int64_t>(a), " ns");
  if (a < 1e6) return ThreeDigits(a / 1e3, "µs", sign);
  if (a < 1e9) return ThreeDigits(a / 1e6, "ms", sign);
  return ThreeDigits(a / 1e9, "s", sign);
}

std::string FormatBytes(uint64_t bytes) {
  double b = static_cast<double>(bytes);
  if (b < 1024) return absl::StrFormat("%d B", bytes);
  if (b < 1024.0 * 1024) return ThreeDigits(b / 1024, "KiB");
  if (b < 1024.0 * 1024 * 1024) return ThreeDigits(b / (1024.0 * 1024), "MiB");
  return ThreeDigits(b / (1024.0 * 1024 * 1024), "GiB");
}

std::string FormatRate(double bps) {
  if (bps >= 1e9) return ThreeDigits(bps / 1e9, "GB/s");
  if (bps >= 1e6) return ThreeDigits(bps / 1e6, "MB/s");
  return ThreeDigits(bps / 1e3, "kB/s");
}

std::string FormatPercent(double f) {
  double p = f * 100;
  if (p > 0 && p < 0.1) return "<0.1%";
  return absl::StrFormat("%.1f%%", p);
}

}  // namespace gs::analyzer
