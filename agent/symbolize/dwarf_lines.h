// dwarf_lines.h — a compact reader of DWARF .debug_line (versions 2-5), for "file:line" of PCs.
//
// Decodes every line-number program of a module once into a sorted address → (file, line) table.
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

namespace gs {

struct Span {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class DwarfLineTable {
 public:
  struct Row {
    uint64_t address;
    uint32_t file_index;  // index into files(); meaningless when end_sequence
    uint32_t line;
    bool end_sequence;
  };

  // Decodes `debug_line`; `line_str`/`str` resolve DW_FORM_line_strp/DW_FORM_strp (may be empty).
  void Load(Span debug_line, Span line_str, Span str);

  // The row covering `address` (the last row at or before it, within a sequence), or nullptr.
  const Row* Find(uint64_t address) const;
  const std::string& file(uint32_t index) const { return files_[index]; }
  size_t row_count() const { return rows_.size(); }

 private:
  bool LoadUnit(const uint8_t*& cursor, const uint8_t* section_end, Span line_str, Span str);

  std::vector<Row> rows_;
  std::vector<std::string> files_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_DWARF_LINES_H_
