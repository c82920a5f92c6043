// dwarf_units.h — which .debug_line unit describes an address, so that a module's line table is
// decoded one compilation unit at a time, when a PC first lands in it, instead of whole.
//
// Why: the writer symbolises sampled stacks inside the traced process. Decoding a module's whole
// .debug_line at its first sample costs in proportion to the module's debug information (~7 ms
// for simgpu's libraries here; a user's large debug build, tens of MiB of line programs, would
// cost about a second and ~100 MB of rows), while the samples land in a few of its units.
//
// A unit's ranges come from its set in .debug_aranges (g++ emits one per unit by default), or,
// for a unit without one (clang's default, an assembler's), from its own first entry in
// .debug_info: DW_AT_low_pc and DW_AT_high_pc, or DW_AT_ranges, a list in .debug_rnglists (DWARF
// 5) or .debug_ranges (DWARF 2-4), its addresses possibly indices into .debug_addr (DWARF 5
// §2.17, §3.1.1, §7.25; the forms clang 14 writes: DW_FORM_addrx, DW_FORM_rnglistx). The line
// program's offset is that entry's DW_AT_stmt_list (§6.2), read through .debug_abbrev (§7.5). A
// unit with a line program whose addresses cannot be read (an unknown form, a missing section)
// leaves the module unindexed, and its caller decodes the whole table as before; a unit without
// addresses holds no code. Ranges at address 0 (functions the linker discarded) are dropped, as
// the line table drops their sequences. Every read is bounds-checked: a corrupt section gives
// fewer ranges, never a fault.
//
// Thread safety: none (one owner). The sections must stay mapped while Build runs only.
#ifndef GPUSTALL_AGENT_SYMBOLIZE_DWARF_UNITS_H_
#define GPUSTALL_AGENT_SYMBOLIZE_DWARF_UNITS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "agent/symbolize/dwarf_reader.h"
#include "agent/symbolize/mapped_elf.h"

namespace gs {

// The sections the index reads (data == nullptr: the module has none).
struct DwarfUnitSections {
  Span aranges, info, abbrev;   // .debug_aranges, .debug_info, .debug_abbrev
  Span addr, rnglists, ranges;  // .debug_addr, .debug_rnglists, .debug_ranges

  static DwarfUnitSections Of(const MappedElf& elf);
};

class DwarfLineUnitIndex {
 public:
  // Reads the ranges; false when none could be read, or when a compilation unit with a line
  // program has addresses that could not be read (its lines would be lost).
  bool Build(const DwarfUnitSections& sections);

  // The .debug_line offset of the unit whose ranges hold `address`, or nullopt when none does.
  std::optional<uint64_t> LineUnitFor(uint64_t address) const;

  size_t range_count() const { return ranges_.size(); }

 private:
  struct Range {
    uint64_t start, end;  // [start, end)
    uint64_t line_offset;
    uint64_t reach;       // the largest end of this range and every one before it
  };
  std::vector<Range> ranges_;  // by start
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_DWARF_UNITS_H_
