#include "analyzer/units/units.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace gs::analyzer {

namespace {
std::string ThreeDigits(double v, const char* unit) {
  if (v >= 100) return absl::StrFormat("%.0f %s", v, unit);
  if (v >= 10) return absl::StrFormat("%.1f %s", v, unit);
  return absl::StrFormat("%.2f %s", v, unit);
}
}  // namespace

std::string FormatDuration(TimeNs ns) {
  double a = std::fabs(static_cast<double>(ns));
  const char* sign = ns < 0 ? "-" : "";
  if (a < 1e3) return absl::StrFormat("%s%d ns", sign, static_cast<int64_t>(a));
  if (a < 1e6) return sign + ThreeDigits(a / 1e3, "µs");
  if (a < 1e9) return sign + ThreeDigits(a / 1e6, "ms");
  return sign + ThreeDigits(a / 1e9, "s");
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
