// dwarf_units.h — which .debug_line unit describes an address, so that a module's line table is
// decoded one compilation unit at a time, when a PC first lands in it, instead of whole.
//
// Why: the writer symbolises sampled stacks inside the traced process. Decoding a module's whole
// .debug_line at its first sample costs in proportion to the module's debug information (~7 ms
// for simgpu's libraries here; a user's large debug build, tens of MiB of line programs, would
// cost about a second and ~100 MB of rows), while the samples land in a few of its units.
//
// From .debug_aranges (each compilation unit's address ranges and its offset in .debug_info)
// and, for each of those units, the DW_AT_stmt_list attribute of its first entry in .debug_info
// (its line program's offset in .debug_line), read with .debug_abbrev (DWARF 5 §6.1.2, §7.5).
// g++ emits .debug_aranges by default; a module without it (clang's default), or with a
// compilation unit that has no set there, is not indexed, and its caller decodes the whole table
// as before. Ranges at address 0 (functions the linker
// discarded) are dropped, as the line table drops their sequences. Every read is bounds-checked:
// a corrupt section gives fewer ranges, never a fault.
//
// Thread safety: none (one owner). The sections must stay mapped while Build runs only.
#ifndef GPUSTALL_AGENT_SYMBOLIZE_DWARF_UNITS_H_
#define GPUSTALL_AGENT_SYMBOLIZE_DWARF_UNITS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "agent/symbolize/dwarf_reader.h"

namespace gs {

class DwarfLineUnitIndex {
 public:
  // Reads the ranges; false when none could be read (no .debug_aranges, or every set unusable)
  // or when a compilation unit of .debug_info has none (its lines would be lost).
  bool Build(Span aranges, Span info, Span abbrev);

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
