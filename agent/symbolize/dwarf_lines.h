// dwarf_lines.h — a compact reader of DWARF .debug_line (versions 2-5), for "file:line" of PCs.
//
// Decodes line-number programs (a module's every one, or one unit's: dwarf_units.h says which
// unit holds an address) into a sorted address → (file, line) table.
// A row that repeats its predecessor's file and line within a sequence is not kept (Find answers
// the same without it), and the table is put in order by sorting sequences, not rows (addresses
// only grow within a sequence; rows are sorted only where sequences overlap). Where two sequences
// claim the same addresses either answer is one of theirs: against the earlier whole-row sort,
// 8 of the agent's own 1.59 M text addresses name the other claimant's line.
// Enough for what g++ 12 and nvcc's host compiler emit here (DWARF 5, .debug_line_str file names;
// DWARF 4 with -gdwarf-4). Not handled: compressed sections (SHF_COMPRESSED; the table is then
// empty), split DWARF, VLIW op_index. Sequences at address 0 (functions discarded by the linker)
// are dropped. Every read is bounds-checked: a corrupt section gives fewer rows, never a fault.
//
// Thread safety: none (one owner). The sections must stay mapped while the table is used only
// during Load; the table keeps its own copies of file names.
#ifndef GPUSTALL_AGENT_SYMBOLIZE_DWARF_LINES_H_
#define GPUSTALL_AGENT_SYMBOLIZE_DWARF_LINES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/symbolize/dwarf_reader.h"

namespace gs {

class DwarfLineTable {
 public:
  // 16 bytes: a debug build's table has hundreds of thousands of rows (the agent's own: ~1.3 MB
  // of .debug_line), and the writer builds it at the first sample that lands there.
  struct Row {
    uint64_t address;
    uint32_t file_index;  // index into files(); meaningless when end_sequence
    uint32_t line : 31;
    uint32_t end_sequence : 1;
  };
  static_assert(sizeof(Row) == 16, "compact rows");

  // Decodes `debug_line`; `line_str`/`str` resolve DW_FORM_line_strp/DW_FORM_strp (may be empty).
  // Every unit of the span: the whole section, or one unit of it (Unit).
  void Load(Span debug_line, Span line_str, Span str);

  // The bytes of the one unit at `offset` in `debug_line` (its length field included), or an
  // empty span when no whole unit starts there.
  static Span Unit(Span debug_line, uint64_t offset);

  // The row covering `address` (the last row at or before it, within a sequence), or nullptr.
  const Row* Find(uint64_t address) const;
  const std::string& file(uint32_t index) const { return files_[index]; }
  size_t row_count() const { return rows_.size(); }

 private:
  // Where one sequence's rows sit in rows_ (during Load only).
  struct Sequence {
    uint64_t start;
    size_t begin, end;
  };
  bool LoadUnit(const uint8_t*& cursor, const uint8_t* section_end, Span line_str, Span str,
                std::vector<Sequence>* sequences);

  std::vector<Row> rows_;
  std::vector<std::string> files_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_DWARF_LINES_H_
