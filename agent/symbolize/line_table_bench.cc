// line_table_bench — what a module's file:line costs the writer: its whole line table decoded
// (a module whose units' addresses cannot be read) against the unit index and the units that a number of
// looked-up addresses fall in (dwarf_units.h). A benchmark, not a test: it prints, per module,
// microseconds (best of --repeat: the first reads the pages in) and rows kept.
//
//   gs_line_table_bench [--lookups N] [--repeat N] MODULE...
//
// The N addresses are spread evenly over the module's .text, as samples of a busy stack would
// be over its functions at worst; one address per module is the writer's common case (a sampled
// stack passes through a module at one or two places).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "agent/symbolize/dwarf_lines.h"
#include "agent/symbolize/dwarf_units.h"
#include "agent/symbolize/mapped_elf.h"

namespace {

template <typename F>
double BestMicros(int repeat, F&& f) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int lookups = 1, repeat = 5, first = 1;
  for (; first < argc && argv[first][0] == '-'; first += 2) {
    if (first + 1 >= argc) break;
    if (std::strcmp(argv[first], "--lookups") == 0) lookups = std::max(1, std::atoi(argv[first + 1]));
    if (std::strcmp(argv[first], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[first + 1]));
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: %s [--lookups N] [--repeat N] MODULE...\n", argv[0]);
    return 2;
  }
  std::printf("%-40s %10s %10s %8s | %9s %7s | %9s %6s %8s\n", "module (lookups)", ".debug_line", "whole us",
              "rows", "index us", "ranges", "units us", "units", "rows");
  for (int i = first; i < argc; ++i) {
    const gs::MappedElf m(argv[i]);
    const Elf64_Shdr* text = m.Section(".text");
    if (m.Contents(".debug_line").data == nullptr || text == nullptr) {
      std::printf("%-40s no .debug_line\n", argv[i]);
      continue;
    }
    size_t rows = 0, ranges = 0, units = 0, unit_rows = 0;
    const double whole_us = BestMicros(repeat, [&] {
      gs::DwarfLineTable whole;
      whole.Load(m.Contents(".debug_line"), m.Contents(".debug_line_str"), m.Contents(".debug_str"));
      rows = whole.row_count();
    });
    const double index_us = BestMicros(repeat, [&] {
      gs::DwarfLineUnitIndex index;
      index.Build(gs::DwarfUnitSections::Of(m));
      ranges = index.range_count();
    });
    gs::DwarfLineUnitIndex index;
    index.Build(gs::DwarfUnitSections::Of(m));
    const double units_us = BestMicros(repeat, [&] {
      std::map<uint64_t, std::unique_ptr<gs::DwarfLineTable>> decoded;
      for (int k = 0; k < lookups; ++k) {
        const uint64_t address = text->sh_addr + (text->sh_size * (2 * static_cast<uint64_t>(k) + 1)) / (2 * static_cast<uint64_t>(lookups));
        const auto offset = index.LineUnitFor(address);
        if (!offset.has_value()) continue;
        auto& unit = decoded[*offset];
        if (unit == nullptr) {
          unit = std::make_unique<gs::DwarfLineTable>();
          unit->Load(gs::DwarfLineTable::Unit(m.Contents(".debug_line"), *offset), m.Contents(".debug_line_str"), m.Contents(".debug_str"));
        }
        unit->Find(address);
      }
      units = decoded.size();
      unit_rows = 0;
      for (const auto& [offset, unit] : decoded) unit_rows += unit->row_count();
    });
    char label[64];
    const char* slash = std::strrchr(argv[i], '/');
    std::snprintf(label, sizeof(label), "%s (%d)", slash != nullptr ? slash + 1 : argv[i], lookups);
    std::printf("%-40s %10zu %10.0f %8zu | %9.0f %7zu | %9.0f %6zu %8zu\n", label, m.Contents(".debug_line").size, whole_us,
                rows, index_us, ranges, units_us, units, unit_rows);
  }
  return 0;
}
