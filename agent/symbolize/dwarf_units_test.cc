// The unit index against the whole line table, on this test binary's own DWARF (g++'s
// .debug_aranges, DWARF 5 units and one DWARF 4 unit, symbolizer_test_dwarf4.cc; the same units
// found by their own entries when the sets are set aside) and on modules built by clang, which
// writes no .debug_aranges (unit_index_fixture_*.cc, built by CMakeLists.txt).
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

// Every byte of `elf`'s .text: the unit the index names answers as the whole table does. Returns
// the units decoded (by .debug_line offset) for further checks.
std::map<uint64_t, DwarfLineTable> ExpectEveryTextAddressGetsTheWholeTablesLine(const MappedElf& elf,
                                                                               const DwarfUnitSections& sections,
                                                                               const DwarfLineTable& whole) {
  std::map<uint64_t, DwarfLineTable> units;
  DwarfLineUnitIndex index;
  EXPECT_TRUE(index.Build(sections));
  const Span debug_line = elf.Contents(".debug_line");
  const Elf64_Shdr* text_section = elf.Section(".text");
  EXPECT_NE(text_section, nullptr);
  if (text_section == nullptr) return units;
  const uint64_t text = text_section->sh_addr;
  const size_t text_size = text_section->sh_size;
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
  EXPECT_GT(with_line, 0u);
  EXPECT_EQ(mismatched, 0u) << first_mismatch;
  // Where no range holds an address the whole table may still have a line for it: a sequence
  // ends at its code's fragment end, aligned, while the unit's range ends at the function's last
  // byte (seen: 2 bytes of padding in this binary). Such a byte is never a PC.
  EXPECT_LE(uncovered, with_line / 1000);
  return units;
}

// This binary's units through g++'s .debug_aranges, and a lookup decodes one unit, not the
// module.
TEST(DwarfLineUnitIndexTest, EveryTextAddressGetsTheWholeTablesLine) {
  const MappedElf elf("/proc/self/exe");
  ASSERT_NE(elf.Contents(".debug_line").data, nullptr);
  DwarfLineTable whole;
  whole.Load(elf.Contents(".debug_line"), elf.Contents(".debug_line_str"), elf.Contents(".debug_str"));
  const std::map<uint64_t, DwarfLineTable> units =
      ExpectEveryTextAddressGetsTheWholeTablesLine(elf, DwarfUnitSections::Of(elf), whole);
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(DwarfUnitSections::Of(elf)));
  const uint64_t here = ElfAddress(reinterpret_cast<const void*>(&ElfAddress));
  const std::optional<uint64_t> offset = index.LineUnitFor(here);
  ASSERT_TRUE(offset.has_value());
  EXPECT_GT(units.size(), 2u);
  EXPECT_LT(units.at(*offset).row_count(), whole.row_count());
}

// The same units without .debug_aranges: each found by its own entry (g++ writes DW_AT_ranges
// into .debug_rnglists as DW_FORM_sec_offset, or DW_AT_low_pc and DW_AT_high_pc, as for the
// DWARF 4 unit's one function), with the same ranges as the sets give.
TEST(DwarfLineUnitIndexTest, UnitsWithoutArangesAreFoundByTheirOwnEntries) {
  const MappedElf elf("/proc/self/exe");
  DwarfLineTable whole;
  whole.Load(elf.Contents(".debug_line"), elf.Contents(".debug_line_str"), elf.Contents(".debug_str"));
  DwarfUnitSections sections = DwarfUnitSections::Of(elf);
  ASSERT_NE(sections.rnglists.data, nullptr) << "g++ wrote no range lists: the test reads none";
  DwarfLineUnitIndex with_sets;
  ASSERT_TRUE(with_sets.Build(sections));
  sections.aranges = Span{};
  DwarfLineUnitIndex from_entries;
  ASSERT_TRUE(from_entries.Build(sections));
  EXPECT_EQ(from_entries.range_count(), with_sets.range_count());
  const std::map<uint64_t, DwarfLineTable> units = ExpectEveryTextAddressGetsTheWholeTablesLine(elf, sections, whole);
  EXPECT_GT(units.size(), 2u);
  int line = 0;
  const uint64_t pc = gs_test_dwarf4::FunctionInDwarf4(&line);
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(pc), &info), 0);
  EXPECT_EQ(from_entries.LineUnitFor(pc - 1 - reinterpret_cast<uint64_t>(info.dli_fbase)),
            with_sets.LineUnitFor(pc - 1 - reinterpret_cast<uint64_t>(info.dli_fbase)));
  // Without the range lists, the units that name one cannot be read: no index.
  sections.rnglists = Span{};
  EXPECT_FALSE(from_entries.Build(sections));
}

// Modules built by clang (no .debug_aranges; DW_FORM_addrx, DW_FORM_rnglistx, .debug_addr,
// .debug_rnglists, and .debug_ranges at DWARF 4): indexed, every address as the whole table.
TEST(DwarfLineUnitIndexTest, ModulesBuiltByClangAreIndexed) {
#ifndef GS_UNIT_INDEX_FIXTURES
  GTEST_SKIP() << "clang++ was not found when the build was configured (tools/setup installs it)";
#else
  for (const char* variant : {"dwarf5_sections", "dwarf5", "dwarf4_sections"}) {
    SCOPED_TRACE(variant);
    const MappedElf elf(std::string(GS_UNIT_INDEX_FIXTURES) + "/" + variant + ".so");
    const DwarfUnitSections sections = DwarfUnitSections::Of(elf);
    ASSERT_NE(sections.info.data, nullptr);
    EXPECT_EQ(sections.aranges.data, nullptr);
    DwarfLineTable whole;
    whole.Load(elf.Contents(".debug_line"), elf.Contents(".debug_line_str"), elf.Contents(".debug_str"));
    ASSERT_GT(whole.row_count(), 0u);
    const std::map<uint64_t, DwarfLineTable> units = ExpectEveryTextAddressGetsTheWholeTablesLine(elf, sections, whole);
    EXPECT_EQ(units.size(), 2u) << "both units of the fixture";
    DwarfLineUnitIndex index;
    ASSERT_TRUE(index.Build(sections));
    EXPECT_GT(index.range_count(), 2u) << "unit a's code lies in several ranges";
  }
#endif
}

// The DWARF 4 unit (version 4 .debug_info header, DW_FORM_sec_offset) is indexed too.
TEST(DwarfLineUnitIndexTest, FindsTheDwarf4Unit) {
  const MappedElf elf("/proc/self/exe");
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(DwarfUnitSections::Of(elf)));
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

// Hand-made DWARF 5 sections: compile units whose first entries the tests below write.
struct HandMadeDwarf {
  // .debug_abbrev: each code a compile unit (0x11) without children. 1: name (0x03) string
  // (0x08), language (0x13) data1 (0x0b), stmt_list (0x10) sec_offset (0x17); 2: stmt_list
  // only; 3: stmt_list, low_pc (0x11) addr (0x01), high_pc (0x12) data4 (0x06); 4: stmt_list,
  // ranges (0x55) rnglistx (0x23); 5: stmt_list, low_pc addrx (0x1b), ranges rnglistx,
  // addr_base (0x73) sec_offset, rnglists_base (0x74) sec_offset.
  const std::vector<uint8_t> abbrev = {
      1, 0x11, 0, 0x03, 0x08, 0x13, 0x0b, 0x10, 0x17, 0, 0,
      2, 0x11, 0, 0x10, 0x17, 0, 0,
      3, 0x11, 0, 0x10, 0x17, 0x11, 0x01, 0x12, 0x06, 0, 0,
      4, 0x11, 0, 0x10, 0x17, 0x55, 0x23, 0, 0,
      5, 0x11, 0, 0x10, 0x17, 0x11, 0x1b, 0x55, 0x23, 0x73, 0x17, 0x74, 0x17, 0, 0,
      0};
  std::vector<uint8_t> info, aranges, addr, rnglists;

  // A unit with abbreviation `code` and its attributes' bytes; returns its offset.
  size_t Unit(uint8_t code, const std::vector<uint8_t>& values) {
    std::vector<uint8_t> body;
    Put(&body, 5, 2);  // version
    Put(&body, 1, 1);  // DW_UT_compile
    Put(&body, 8, 1);  // address size
    Put(&body, 0, 4);  // abbrev offset
    Put(&body, code, 1);
    body.insert(body.end(), values.begin(), values.end());
    const size_t offset = info.size();
    Put(&info, body.size(), 4);
    info.insert(info.end(), body.begin(), body.end());
    return offset;
  }
  void Set(size_t unit_offset, std::vector<std::pair<uint64_t, uint64_t>> tuples) {
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
  }
  DwarfUnitSections Sections() const {
    auto span = [](const std::vector<uint8_t>& v) { return v.empty() ? Span{} : Span{v.data(), v.size()}; };
    return DwarfUnitSections{span(aranges), span(info), span(abbrev), span(addr), span(rnglists), Span{}};
  }
};

std::vector<uint8_t> Bytes(uint64_t value, size_t n) {
  std::vector<uint8_t> out;
  Put(&out, value, n);
  return out;
}
std::vector<uint8_t> Cat(std::vector<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Two units whose ranges nest (B's inside A's) and a range at address 0 (a function the linker
// discarded): an address in A past B's end is A's, not lost behind B; address 0's range is
// dropped. A's entry skips a DW_FORM_string and a DW_FORM_data1 before its DW_AT_stmt_list.
// Then units that the sets do not name: without addresses (no code), with DW_AT_low_pc and
// DW_AT_high_pc (found by its entry), and with a range list that cannot be read.
TEST(DwarfLineUnitIndexTest, NestedRangesAndDiscardedCode) {
  HandMadeDwarf d;
  const std::vector<uint8_t> a_cc = {'a', '.', 'c', 'c', 0, 0x21 /* DW_LANG_C_plus_plus_14 */};
  const size_t unit_a = d.Unit(1, Cat({a_cc, Bytes(0x100, 4)})), unit_b = d.Unit(2, Bytes(0x200, 4));
  d.Set(unit_a, {{0x1000, 0x1000}, {0, 0x50}});
  d.Set(unit_b, {{0x1400, 0x100}});
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(d.Sections()));
  EXPECT_EQ(index.range_count(), 2u);
  EXPECT_EQ(index.LineUnitFor(0x1000), std::optional<uint64_t>(0x100));
  EXPECT_EQ(index.LineUnitFor(0x1450), std::optional<uint64_t>(0x200));
  EXPECT_EQ(index.LineUnitFor(0x1500), std::optional<uint64_t>(0x100));
  EXPECT_EQ(index.LineUnitFor(0x1fff), std::optional<uint64_t>(0x100));
  EXPECT_EQ(index.LineUnitFor(0x2000), std::nullopt);
  EXPECT_EQ(index.LineUnitFor(0x10), std::nullopt);
  EXPECT_EQ(index.LineUnitFor(0xfff), std::nullopt);

  // A unit without a set and without addresses: no code, nothing to lose.
  d.Unit(2, Bytes(0x300, 4));
  ASSERT_TRUE(index.Build(d.Sections()));
  EXPECT_EQ(index.range_count(), 2u);
  // One without a set, with DW_AT_low_pc and DW_AT_high_pc (a length): found by its entry.
  d.Unit(3, Cat({Bytes(0x400, 4), Bytes(0x3000, 8), Bytes(0x80, 4)}));
  ASSERT_TRUE(index.Build(d.Sections()));
  EXPECT_EQ(index.range_count(), 3u);
  EXPECT_EQ(index.LineUnitFor(0x3000), std::optional<uint64_t>(0x400));
  EXPECT_EQ(index.LineUnitFor(0x307f), std::optional<uint64_t>(0x400));
  EXPECT_EQ(index.LineUnitFor(0x3080), std::nullopt);
  // One whose range list cannot be found (DW_FORM_rnglistx without DW_AT_rnglists_base): its
  // lines would be lost behind the index, so there is none and the symboliser decodes the whole
  // table.
  d.Unit(4, Cat({Bytes(0x500, 4), {0}}));
  EXPECT_FALSE(index.Build(d.Sections()));
  EXPECT_EQ(index.LineUnitFor(0x1000), std::nullopt);
}

// A DWARF 5 range list with every kind of entry (DW_RLE_*, DWARF 5 §7.25), found through
// DW_FORM_rnglistx and DW_AT_rnglists_base, its indexed addresses in .debug_addr from
// DW_AT_addr_base, its base address the unit's DW_AT_low_pc (DW_FORM_addrx) until an entry
// sets another. Cut sections give fewer ranges or none, never a fault.
TEST(DwarfLineUnitIndexTest, RangeListEntriesOfEveryKind) {
  HandMadeDwarf d;
  // .debug_addr: header (length, version 5, address size 8, segment size 0), then the table.
  d.addr = Cat({Bytes(4 + 4 * 8, 4), Bytes(5, 2), Bytes(8, 1), Bytes(0, 1), Bytes(0x5000, 8), Bytes(0x6000, 8),
                Bytes(0x7000, 8), Bytes(0x7080, 8)});
  const std::vector<uint8_t> list = Cat({
      {0x04, 0x10, 0x20},                    // offset_pair from low_pc: [0x5010, 0x5020)
      {0x03, 0x01, 0x40},                    // startx_length: [0x6000, 0x6040)
      {0x02, 0x02, 0x03},                    // startx_endx: [0x7000, 0x7080)
      {0x05}, Bytes(0x9000, 8), {0x04, 0x00, 0x10},  // base_address, then [0x9000, 0x9010)
      {0x01, 0x00}, {0x04, 0x80, 0x02, 0x90, 0x02},  // base_addressx 0x5000, then [0x5100, 0x5110)
      {0x06}, Bytes(0xa000, 8), Bytes(0xa100, 8),    // start_end: [0xa000, 0xa100)
      {0x07}, Bytes(0xb000, 8), {0x10},              // start_length: [0xb000, 0xb010)
      {0x00}});
  // .debug_rnglists: header (length, version, address size, segment size, one offset), the
  // offset (from DW_AT_rnglists_base, just after the header) and the list.
  d.rnglists = Cat({Bytes(2 + 1 + 1 + 4 + 4 + list.size(), 4), Bytes(5, 2), Bytes(8, 1), Bytes(0, 1), Bytes(1, 4),
                    Bytes(4, 4), list});
  d.Unit(5, Cat({Bytes(0x600, 4), {0x00}, {0x00}, Bytes(8, 4), Bytes(12, 4)}));
  DwarfLineUnitIndex index;
  ASSERT_TRUE(index.Build(d.Sections()));
  EXPECT_EQ(index.range_count(), 7u);
  const std::vector<std::pair<uint64_t, uint64_t>> expected = {
      {0x5010, 0x5020}, {0x5100, 0x5110}, {0x6000, 0x6040}, {0x7000, 0x7080},
      {0x9000, 0x9010}, {0xa000, 0xa100}, {0xb000, 0xb010}};
  for (const auto& [start, end] : expected) {
    EXPECT_EQ(index.LineUnitFor(start), std::optional<uint64_t>(0x600)) << std::hex << start;
    EXPECT_EQ(index.LineUnitFor(end - 1), std::optional<uint64_t>(0x600)) << std::hex << end;
    EXPECT_EQ(index.LineUnitFor(end), std::nullopt) << std::hex << end;
  }
  EXPECT_EQ(index.LineUnitFor(0x5000), std::nullopt);

  const DwarfUnitSections whole = d.Sections();
  for (size_t cut = 0; cut < d.rnglists.size(); ++cut) {
    std::vector<uint8_t> bytes(d.rnglists.begin(), d.rnglists.begin() + static_cast<std::ptrdiff_t>(cut));
    DwarfUnitSections sections = whole;
    sections.rnglists = Span{bytes.data(), bytes.size()};
    EXPECT_FALSE(index.Build(sections)) << cut;  // the list unread to its end: no index
  }
  for (size_t cut = 0; cut < d.addr.size(); ++cut) {
    std::vector<uint8_t> bytes(d.addr.begin(), d.addr.begin() + static_cast<std::ptrdiff_t>(cut));
    DwarfUnitSections sections = whole;
    sections.addr = Span{bytes.data(), bytes.size()};
    EXPECT_FALSE(index.Build(sections)) << cut;
  }
}

// No .debug_info or .debug_abbrev: no index (the symboliser decodes the whole table); and cut or
// scribbled sections give fewer ranges, never a read outside them (each cut is copied to a buffer
// of its own length, so an overrun would read past a heap block).
TEST(DwarfLineUnitIndexTest, MissingCutOrScribbledSectionsGiveFewerRangesAndNoFault) {
  const MappedElf elf("/proc/self/exe");
  const Span aranges = elf.Contents(".debug_aranges"), info = elf.Contents(".debug_info"), abbrev = elf.Contents(".debug_abbrev");
  DwarfLineUnitIndex index;
  const DwarfUnitSections all_sections = DwarfUnitSections::Of(elf);
  auto build = [&](Span a, Span i, Span b) {
    DwarfUnitSections s = all_sections;
    s.aranges = a;
    s.info = i;
    s.abbrev = b;
    return index.Build(s);
  };
  EXPECT_FALSE(build(aranges, Span{}, abbrev));
  EXPECT_FALSE(build(aranges, info, Span{}));
  ASSERT_TRUE(build(aranges, info, abbrev));
  const size_t all = index.range_count();
  for (size_t cut = 0; cut < aranges.size; cut += 7) {
    std::vector<uint8_t> bytes(aranges.data, aranges.data + cut);
    build(Span{bytes.data(), bytes.size()}, info, abbrev);
    EXPECT_LE(index.range_count(), all);
  }
  const size_t abbrev_cut = std::min<size_t>(abbrev.size, 4096);
  for (size_t cut = 0; cut < abbrev_cut; cut += 13) {
    std::vector<uint8_t> bytes(abbrev.data, abbrev.data + cut);
    build(aranges, info, Span{bytes.data(), bytes.size()});
    EXPECT_LE(index.range_count(), all);
  }
  std::vector<uint8_t> scribbled(info.data, info.data + info.size);
  uint32_t seed = 12345;
  for (int round = 0; round < 64; ++round) {
    for (int i = 0; i < 16; ++i) {
      seed = seed * 1103515245u + 12345u;
      scribbled[seed % scribbled.size()] = static_cast<uint8_t>(seed >> 24);
    }
    build(aranges, Span{scribbled.data(), scribbled.size()}, abbrev);
  }
  std::vector<uint8_t> ones(aranges.size, 0xff);
  // Sets of all ones are no sets: the units are found by their own entries.
  EXPECT_TRUE(build(Span{ones.data(), ones.size()}, info, abbrev));
  EXPECT_EQ(index.range_count(), all);
}

}  // namespace
}  // namespace gs
