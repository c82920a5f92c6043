// mapped_elf.h — an ELF file mapped read-only, its section headers checked against the file, and
// its sections found by name: what the symboliser (elf_symbolizer.h) reads symbols and DWARF
// from, and what the DWARF tests and benchmark open modules with. A file that cannot be read or
// is not a 64-bit ELF with in-file section headers has no sections; nothing read through this
// class lies outside the mapping.
//
// Thread safety: none needed (immutable after construction). Move-less, copy-less: pointers into
// the mapping (symbol names, section spans) live as long as the object.
#ifndef GPUSTALL_AGENT_SYMBOLIZE_MAPPED_ELF_H_
#define GPUSTALL_AGENT_SYMBOLIZE_MAPPED_ELF_H_

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/symbolize/dwarf_reader.h"

namespace gs {

class MappedElf {
 public:
  explicit MappedElf(const std::string& path);
  ~MappedElf();
  MappedElf(const MappedElf&) = delete;
  MappedElf& operator=(const MappedElf&) = delete;

  // The section headers; none (0) when the file could not be read as a 64-bit ELF.
  const Elf64_Shdr* sections() const { return sections_; }
  unsigned section_count() const { return section_count_; }
  const uint8_t* base() const { return base_; }
  bool InFile(uint64_t offset, uint64_t length) const { return offset <= size_ && length <= size_ - offset; }

  // The last section called `name` that holds data in the file (SHT_PROGBITS, not
  // SHF_COMPRESSED, inside the file), or nullptr.
  const Elf64_Shdr* Section(const char* name) const;
  // That section's bytes (empty when there is none).
  Span Contents(const char* name) const;

 private:
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  const Elf64_Shdr* sections_ = nullptr;
  unsigned section_count_ = 0;
  const Elf64_Shdr* names_ = nullptr;  // the section-name string table, inside the file
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_MAPPED_ELF_H_
