// The unit index against the whole line table, on this test binary's own DWARF (g++'s
// .debug_aranges, DWARF 5 units and one DWARF 4 unit, symbolizer_test_dwarf4.cc).
#include "agent/symbolize/dwarf_units.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/symbolize/dwarf_lines.h"
#include "agent/symbolize/mapped_elf.h"
#include "gtest/gtest.h"

namespace gs_test_dwarf4 {
uint64_t FunctionInDwarf4(int* line);
}

namespace gs {
namespace {

// The runtime address of a function of this binary as the line table sees it (the load bias
// taken off: the test is position-independent).
uint64_t ElfAddress(const void* function) {
  Dl_info info;
  return dladdr(function, &info) != 0 ? reinterpret_cast<uint64_t>(function) - reinterpret_cast<uint64_t>(info.dli_fbase)
                                      : 0;
}

// Every byte of .text: the unit the index names answers as the whole table does, and a lookup
// decodes one unit, not the module.
TEST(DwarfLineUnitIndexTest, EveryTextAddressGetsTheWholeTablesLine) {
  const MappedElf elf("/proc/self/exe");
  const Span debug_line = elf.Contents(".debug_line");
  ASSERT_NE(debug_line.data, nullptr);
  DwarfLineTable whole;
  whole.Load(debug_line, elf.Contents(".debug_line_str"), elf.Contents(".debug_str"));
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(elf.Contents(".debug_aranges"), elf.Contents(".debug_info"), elf.Contents(".debug_abbrev")));

  std::map<uint64_t, DwarfLineTable> units;
  ASSERT_NE(elf.Section(".text"), nullptr);
  const uint64_t text = elf.Section(".text")->sh_addr;
  const size_t text_size = elf.Section(".text")->sh_size;
  size_t with_line = 0, mismatched = 0, uncovered = 0;
  std::string first_mismatch;
  for (uint64_t a = text; a < text + text_size; ++a) {
    const DwarfLineTable::Row* expected = whole.Find(a);
    with_line += expected != nullptr;
    const std::optional<uint64_t> offset = index.LineUnitFor(a);
    if (!offset.has_value()) {
      uncovered += expected != nullptr;
      continue;
    }
    auto [it, inserted] = units.try_emplace(*offset);
    if (inserted) it->second.Load(DwarfLineTable::Unit(debug_line, *offset), elf.Contents(".debug_line_str"), elf.Contents(".debug_str"));
    const DwarfLineTable& unit = it->second;
    const DwarfLineTable::Row* got = unit.Find(a);
    const bool same = (expected == nullptr && got == nullptr) ||
                      (expected != nullptr && got != nullptr && expected->line == got->line &&
                       whole.file(expected->file_index) == unit.file(got->file_index));
    if (!same && mismatched++ == 0) {
      char where[32];
      std::snprintf(where, sizeof(where), "0x%llx", static_cast<unsigned long long>(a));
      first_mismatch = std::string(where) + ": whole " +
                       (expected ? whole.file(expected->file_index) + ":" + std::to_string(expected->line) : "none") +
                       ", unit " + (got ? unit.file(got->file_index) + ":" + std::to_string(got->line) : "none");
    }
  }
  EXPECT_GT(with_line, text_size / 4) << "a good part of .text has lines (the rest: gtest's, built without)";
  EXPECT_EQ(mismatched, 0u) << first_mismatch;
  // Where no range holds an address the whole table may still have a line for it: a sequence
  // ends at its code's fragment end, aligned, while the unit's range ends at the function's last
  // byte (seen: 2 bytes of padding in this binary). Such a byte is never a PC.
  EXPECT_LE(uncovered, with_line / 1000);

  // One unit decoded for a lookup, not the module: this file's unit has a part of the rows.
  const uint64_t here = ElfAddress(reinterpret_cast<const void*>(&ElfAddress));
  const std::optional<uint64_t> offset = index.LineUnitFor(here);
  ASSERT_TRUE(offset.has_value());
  EXPECT_GT(units.size(), 2u);
  EXPECT_LT(units.at(*offset).row_count(), whole.row_count());
}

// The DWARF 4 unit (version 4 .debug_info header, DW_FORM_sec_offset) is indexed too.
TEST(DwarfLineUnitIndexTest, FindsTheDwarf4Unit) {
  const MappedElf elf("/proc/self/exe");
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(elf.Contents(".debug_aranges"), elf.Contents(".debug_info"), elf.Contents(".debug_abbrev")));
  int line = 0;
  const uint64_t pc = gs_test_dwarf4::FunctionInDwarf4(&line);
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(pc), &info), 0);
  const uint64_t address = pc - 1 - reinterpret_cast<uint64_t>(info.dli_fbase);
  const std::optional<uint64_t> offset = index.LineUnitFor(address);
  ASSERT_TRUE(offset.has_value());
  DwarfLineTable unit;
  unit.Load(DwarfLineTable::Unit(elf.Contents(".debug_line"), *offset), elf.Contents(".debug_line_str"), elf.Contents(".debug_str"));
  const DwarfLineTable::Row* row = unit.Find(address);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->line, static_cast<uint32_t>(line));
  EXPECT_NE(unit.file(row->file_index).find("symbolizer_test_dwarf4.cc"), std::string::npos);
}

// Little-endian bytes for the hand-made sections below.
void Put(std::vector<uint8_t>* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

// Two units whose ranges nest (B's inside A's) and a range at address 0 (a function the linker
// discarded): an address in A past B's end is A's, not lost behind B; address 0's range is
// dropped. The units are DWARF 5 with one attribute, DW_AT_stmt_list as DW_FORM_sec_offset, and
// A's entry skips a DW_FORM_string and a DW_FORM_data1 before it. Then a unit that the ranges
// do not name.
TEST(DwarfLineUnitIndexTest, NestedRangesAndDiscardedCode) {
  // .debug_abbrev: code 1 = compile unit (0x11), no children, name (0x03) string (0x08),
  // language (0x13) data1 (0x0b), stmt_list (0x10) sec_offset (0x17); code 2 = stmt_list only.
  const std::vector<uint8_t> abbrev = {1, 0x11, 0, 0x03, 0x08, 0x13, 0x0b, 0x10, 0x17, 0, 0,
                                       2, 0x11, 0, 0x10, 0x17, 0, 0, 0};
  std::vector<uint8_t> info;
  auto unit = [&](uint8_t code, uint32_t stmt_list) {
    std::vector<uint8_t> body;
    Put(&body, 5, 2);  // version
    Put(&body, 1, 1);  // DW_UT_compile
    Put(&body, 8, 1);  // address size
    Put(&body, 0, 4);  // abbrev offset
    Put(&body, code, 1);
    if (code == 1) {
      for (char c : std::string("a.cc")) body.push_back(static_cast<uint8_t>(c));
      body.push_back(0);
      Put(&body, 0x21, 1);  // DW_LANG_C_plus_plus_14
    }
    Put(&body, stmt_list, 4);
    const size_t offset = info.size();
    Put(&info, body.size(), 4);
    info.insert(info.end(), body.begin(), body.end());
    return offset;
  };
  const size_t unit_a = unit(1, 0x100), unit_b = unit(2, 0x200);
  std::vector<uint8_t> aranges;
  auto set = [&](size_t unit_offset, std::vector<std::pair<uint64_t, uint64_t>> tuples) {
    std::vector<uint8_t> body;
    Put(&body, 2, 2);
    Put(&body, unit_offset, 4);
    Put(&body, 8, 1);
    Put(&body, 0, 1);
    Put(&body, 0, 4);  // to 16 bytes from the set's start, with the 4-byte length
    for (auto [start, size] : tuples) {
      Put(&body, start, 8);
      Put(&body, size, 8);
    }
    Put(&body, 0, 16);
    Put(&aranges, body.size(), 4);
    aranges.insert(aranges.end(), body.begin(), body.end());
  };
  set(unit_a, {{0x1000, 0x1000}, {0, 0x50}});
  set(unit_b, {{0x1400, 0x100}});
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(Span{aranges.data(), aranges.size()}, Span{info.data(), info.size()},
                          Span{abbrev.data(), abbrev.size()}));
  EXPECT_EQ(index.range_count(), 2u);
  EXPECT_EQ(index.LineUnitFor(0x1000), std::optional<uint64_t>(0x100));
  EXPECT_EQ(index.LineUnitFor(0x1450), std::optional<uint64_t>(0x200));
  EXPECT_EQ(index.LineUnitFor(0x1500), std::optional<uint64_t>(0x100));
  EXPECT_EQ(index.LineUnitFor(0x1fff), std::optional<uint64_t>(0x100));
  EXPECT_EQ(index.LineUnitFor(0x2000), std::nullopt);
  EXPECT_EQ(index.LineUnitFor(0x10), std::nullopt);
  EXPECT_EQ(index.LineUnitFor(0xfff), std::nullopt);

  // A third unit without a set of its own (clang emits none by default): its lines would be lost,
  // so there is no index and the symboliser decodes the whole table.
  unit(2, 0x300);
  EXPECT_FALSE(index.Build(Span{aranges.data(), aranges.size()}, Span{info.data(), info.size()},
                           Span{abbrev.data(), abbrev.size()}));
  EXPECT_EQ(index.LineUnitFor(0x1000), std::nullopt);
}

// No .debug_aranges: no index (the symboliser decodes the whole table); and cut or scribbled
// sections give fewer ranges, never a read outside them (each cut is copied to a buffer of its
// own length, so an overrun would read past a heap block).
TEST(DwarfLineUnitIndexTest, MissingCutOrScribbledSectionsGiveFewerRangesAndNoFault) {
  const MappedElf elf("/proc/self/exe");
  const Span aranges = elf.Contents(".debug_aranges"), info = elf.Contents(".debug_info"), abbrev = elf.Contents(".debug_abbrev");
  DwarfLineUnitIndex index;
  EXPECT_FALSE(index.Build(Span{}, info, abbrev));
  EXPECT_FALSE(index.Build(aranges, Span{}, abbrev));
  ASSERT_TRUE(index.Build(aranges, info, abbrev));
  const size_t all = index.range_count();
  for (size_t cut = 0; cut < aranges.size; cut += 7) {
    std::vector<uint8_t> bytes(aranges.data, aranges.data + cut);
    index.Build(Span{bytes.data(), bytes.size()}, info, abbrev);
    EXPECT_LE(index.range_count(), all);
  }
  const size_t abbrev_cut = std::min<size_t>(abbrev.size, 4096);
  for (size_t cut = 0; cut < abbrev_cut; cut += 13) {
    std::vector<uint8_t> bytes(abbrev.data, abbrev.data + cut);
    index.Build(aranges, info, Span{bytes.data(), bytes.size()});
    EXPECT_LE(index.range_count(), all);
  }
  std::vector<uint8_t> scribbled(info.data, info.data + info.size);
  uint32_t seed = 12345;
  for (int round = 0; round < 64; ++round) {
    for (int i = 0; i < 16; ++i) {
      seed = seed * 1103515245u + 12345u;
      scribbled[seed % scribbled.size()] = static_cast<uint8_t>(seed >> 24);
    }
    index.Build(aranges, Span{scribbled.data(), scribbled.size()}, abbrev);
  }
  std::vector<uint8_t> ones(aranges.size, 0xff);
  EXPECT_FALSE(index.Build(Span{ones.data(), ones.size()}, info, abbrev));
}

}  // namespace
}  // namespace gs
