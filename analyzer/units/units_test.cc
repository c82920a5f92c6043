// The formats people read, against the printf rule they were first written with: three
// significant digits or more ("%.0f" from 100 on, "%.1f" from 10, else "%.2f") of the value in its
// unit, as absl::StrFormat rounds it. units.cc writes the digits with std::to_chars instead (no
// format to parse: an export formats millions of durations); this holds the two to the same
// digits, ties and unit boundaries included.
#include "analyzer/units/units.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

std::string ByPrintf(double v, const char* unit) {
  if (v >= 100) return absl::StrFormat("%.0f %s", v, unit);
  if (v >= 10) return absl::StrFormat("%.1f %s", v, unit);
  return absl::StrFormat("%.2f %s", v, unit);
}

std::string DurationByPrintf(TimeNs ns) {
  const double a = std::fabs(static_cast<double>(ns));
  const std::string sign = ns < 0 ? "-" : "";
  if (a < 1e3) return absl::StrFormat("%s%d ns", sign, static_cast<int64_t>(a));
  if (a < 1e6) return sign + ByPrintf(a / 1e3, "µs");
  if (a < 1e9) return sign + ByPrintf(a / 1e6, "ms");
  return sign + ByPrintf(a / 1e9, "s");
}

TEST(UnitsTest, DurationsReadAsTheHeaderSays) {
  EXPECT_EQ(FormatDuration(850), "850 ns");
  EXPECT_EQ(FormatDuration(12'300), "12.3 µs");
  EXPECT_EQ(FormatDuration(4'560'000), "4.56 ms");
  EXPECT_EQ(FormatDuration(1'230'000'000), "1.23 s");
  EXPECT_EQ(FormatDuration(-1'500), "-1.50 µs");
  EXPECT_EQ(FormatDuration(999'999), "1000 µs");  // rounds up within its unit, as printf does
}

// Every duration below 2 ms, then a million spread up to an hour and their negatives: the same
// string as the printf rule (ties such as 12.345 µs fall as the double lies, either way).
TEST(UnitsTest, DurationsHaveThePrintfRulesDigits) {
  for (TimeNs ns = 0; ns < 2'000'000; ++ns) ASSERT_EQ(FormatDuration(ns), DurationByPrintf(ns)) << ns;
  std::mt19937_64 random(7);
  for (int i = 0; i < 1'000'000; ++i) {
    const auto ns = static_cast<TimeNs>(random() % 3'600'000'000'000ull);
    ASSERT_EQ(FormatDuration(ns), DurationByPrintf(ns)) << ns;
    ASSERT_EQ(FormatDuration(-ns), DurationByPrintf(-ns)) << -ns;
  }
}

TEST(UnitsTest, SizesAndRatesHaveThePrintfRulesDigits) {
  std::mt19937_64 random(11);
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t bytes = random() >> (random() % 60);
    const double b = static_cast<double>(bytes);
    const std::string expected = b < 1024                    ? absl::StrFormat("%d B", bytes)
                                 : b < 1024.0 * 1024         ? ByPrintf(b / 1024, "KiB")
                                 : b < 1024.0 * 1024 * 1024  ? ByPrintf(b / (1024.0 * 1024), "MiB")
                                                             : ByPrintf(b / (1024.0 * 1024 * 1024), "GiB");
    ASSERT_EQ(FormatBytes(bytes), expected) << bytes;
    const double rate = b / 3.0;
    const std::string rate_expected = rate >= 1e9 ? ByPrintf(rate / 1e9, "GB/s")
                                      : rate >= 1e6 ? ByPrintf(rate / 1e6, "MB/s")
                                                    : ByPrintf(rate / 1e3, "kB/s");
    ASSERT_EQ(FormatRate(rate), rate_expected) << rate;
  }
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatRate(11.8e9), "11.8 GB/s");
}

}  // namespace
}  // namespace gs::analyzer
