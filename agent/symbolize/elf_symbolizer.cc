#include "agent/symbolize/elf_symbolizer.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "agent/symbolize/dwarf_lines.h"
#include "agent/symbolize/dwarf_units.h"

namespace gs {
namespace {
// The writer decodes a module's line table one unit at a time, the unit that holds a looked-up
// address (dwarf_units.h), or, in a module without .debug_aranges, whole at its first lookup.
// A larger unit, or a larger whole .debug_line in that second case (a debug build of a huge
// framework), gives function names only: decoding it would cost seconds and hundreds of MiB on
// the writer thread inside somebody's training job. Such traces can still be symbolised offline
// from the build-id.
constexpr size_t kMaxLineSectionBytes = 32u << 20;
}  // namespace

std::string Demangle(const char* name) {
  if (name == nullptr) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string out(demangled);
  std::free(demangled);
  return out;
}

// One mapped ELF file and its sorted function symbols.
class ElfModuleSymbols {
 public:
  explicit ElfModuleSymbols(const std::string& path) { Load(path); }
  ~ElfModuleSymbols() {
    if (base_ != nullptr) munmap(const_cast<uint8_t*>(base_), size_);
  }

  SymbolInfo Lookup(uint64_t address, bool with_line) {
    SymbolInfo info;
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                               [](uint64_t a, const Symbol& s) { return a < s.value; });
    if (it != symbols_.begin()) {
      const Symbol& s = *(it - 1);
      if (s.size == 0 || address < s.value + s.size) {
        info.function = Demangle(s.name);
        info.function_offset = address - s.value;
      }
    }
    if (!with_line) return info;
    const DwarfLineTable* lines = LinesFor(address);
    if (lines != nullptr) {
      const DwarfLineTable::Row* row = lines->Find(address);
      if (row != nullptr) {
        info.file = lines->file(row->file_index);
        info.line = row->line;
      }
    }
    return info;
  }

 private:
  struct Symbol {
    uint64_t value;
    uint64_t size;
    const char* name;  // points into the mapping
  };

  // The line table that answers for `address`: its unit's, decoded at the unit's first lookup,
  // or the whole module's where no unit index could be read.
  const DwarfLineTable* LinesFor(uint64_t address) {
    if (debug_line_.data == nullptr) return nullptr;
    if (!unit_index_read_) {
      unit_index_read_ = true;
      unit_index_.Build(debug_aranges_, debug_info_, debug_abbrev_);
    }
    if (unit_index_.range_count() == 0) {  // no index: the whole table
      if (lines_ == nullptr && debug_line_.size <= kMaxLineSectionBytes) {
        lines_ = std::make_unique<DwarfLineTable>();
        lines_->Load(debug_line_, debug_line_str_, debug_str_);
      }
      return lines_.get();
    }
    const std::optional<uint64_t> offset = unit_index_.LineUnitFor(address);
    if (!offset.has_value()) return nullptr;
    std::unique_ptr<DwarfLineTable>& unit = unit_lines_[*offset];
    if (unit == nullptr) {
      unit = std::make_unique<DwarfLineTable>();
      const Span bytes = DwarfLineTable::Unit(debug_line_, *offset);
      if (bytes.size <= kMaxLineSectionBytes) unit->Load(bytes, debug_line_str_, debug_str_);
    }
    return unit.get();
  }

  bool InFile(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }

  void Load(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
      close(fd);
      return;
    }
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return;
    base_ = static_cast<const uint8_t*>(p);
    size_ = static_cast<size_t>(st.st_size);

    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base_);
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || !InFile(eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr)))
      return;
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base_ + eh->e_shoff);
    const Elf64_Shdr* names = eh->e_shstrndx < eh->e_shnum ? &sections[eh->e_shstrndx] : nullptr;
    const Elf64_Shdr* symtab = nullptr;
    const Elf64_Shdr* dynsym = nullptr;
    for (unsigned i = 0; i < eh->e_shnum; ++i) {
      const Elf64_Shdr& sh = sections[i];
      if (sh.sh_type == SHT_SYMTAB) symtab = &sh;
      if (sh.sh_type == SHT_DYNSYM) dynsym = &sh;
      if (names != nullptr && sh.sh_type == SHT_PROGBITS && InFile(names->sh_offset, names->sh_size) &&
          sh.sh_name < names->sh_size && InFile(sh.sh_offset, sh.sh_size) && (sh.sh_flags & SHF_COMPRESSED) == 0) {
        const char* name = reinterpret_cast<const char*>(base_ + names->sh_offset + sh.sh_name);
        const Span span{base_ + sh.sh_offset, sh.sh_size};
        if (std::strcmp(name, ".debug_line") == 0) debug_line_ = span;
        if (std::strcmp(name, ".debug_line_str") == 0) debug_line_str_ = span;
        if (std::strcmp(name, ".debug_str") == 0) debug_str_ = span;
        if (std::strcmp(name, ".debug_aranges") == 0) debug_aranges_ = span;
        if (std::strcmp(name, ".debug_info") == 0) debug_info_ = span;
        if (std::strcmp(name, ".debug_abbrev") == 0) debug_abbrev_ = span;
      }
    }
    AddSymbols(sections, eh->e_shnum, symtab != nullptr ? symtab : dynsym);
    if (symtab != nullptr && dynsym != nullptr) AddSymbols(sections, eh->e_shnum, dynsym);
    std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
      // Among aliases at one address, prefer a sized symbol, then the longer (mangled C++) name.
      if (a.value != b.value) return a.value < b.value;
      return a.size > b.size;
    });
    symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                               [](const Symbol& a, const Symbol& b) { return a.value == b.value; }),
                   symbols_.end());
  }

  void AddSymbols(const Elf64_Shdr* sections, unsigned count, const Elf64_Shdr* table) {
    if (table == nullptr || table->sh_link >= count || table->sh_entsize != sizeof(Elf64_Sym)) return;
    const Elf64_Shdr& strings = sections[table->sh_link];
    if (!InFile(table->sh_offset, table->sh_size) || !InFile(strings.sh_offset, strings.sh_size)) return;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(base_ + table->sh_offset);
    const size_t n = table->sh_size / sizeof(Elf64_Sym);
    const char* strtab = reinterpret_cast<const char*>(base_ + strings.sh_offset);
    for (size_t i = 0; i < n; ++i) {
      const Elf64_Sym& s = syms[i];
      const int type = ELF64_ST_TYPE(s.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || s.st_value == 0) continue;
      if (s.st_name >= strings.sh_size) continue;
      // The string must end inside the table.
      if (std::memchr(strtab + s.st_name, '\0', strings.sh_size - s.st_name) == nullptr) continue;
      symbols_.push_back(Symbol{s.st_value, s.st_size, strtab + s.st_name});
    }
  }

  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::vector<Symbol> symbols_;
  Span debug_line_, debug_line_str_, debug_str_;
  Span debug_aranges_, debug_info_, debug_abbrev_;
  bool unit_index_read_ = false;
  DwarfLineUnitIndex unit_index_;  // with ranges: lines come from unit_lines_, never lines_
  std::unordered_map<uint64_t, std::unique_ptr<DwarfLineTable>> unit_lines_;  // by .debug_line offset
  std::unique_ptr<DwarfLineTable> lines_;  // the whole module's (no unit index)
};

ElfSymbolizer::ElfSymbolizer() = default;
ElfSymbolizer::~ElfSymbolizer() = default;

SymbolInfo ElfSymbolizer::Symbolize(uint32_t module_key, const std::string& path, uint64_t elf_address,
                                    bool with_line) {
  auto& module = modules_[module_key];
  if (module == nullptr) module = std::make_unique<ElfModuleSymbols>(path);
  return module->Lookup(elf_address, with_line);
}

}  // namespace gs
