// units.h — human formatting of durations, sizes and rates, shared by evidence strings,
// recommendations and the text report (one place, so numbers read the same everywhere).
#ifndef GPUSTALL_ANALYZER_UNITS_UNITS_H_
#define GPUSTALL_ANALYZER_UNITS_UNITS_H_

#include <cstdint>
#include <string>

#include "analyzer/model/types.h"

namespace gs::analyzer {

std::string FormatDuration(TimeNs ns);     // "850 ns", "12.3 µs", "4.56 ms", "1.23 s"
std::string FormatBytes(uint64_t bytes);   // "512 B", "1.5 KiB", "3.2 GiB"
std::string FormatRate(double bytes_per_s);  // "11.8 GB/s"
std::string FormatPercent(double fraction);  // "12.3%"

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_UNITS_UNITS_H_
