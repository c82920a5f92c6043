#include "agent/symbolize/elf_symbolizer.h"

#include <cxxabi.h>
#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "agent/symbolize/dwarf_lines.h"
#include "agent/symbolize/dwarf_units.h"
#include "agent/symbolize/mapped_elf.h"

namespace gs {
namespace {
// The writer decodes a module's line table one unit at a time, the unit that holds a looked-up
// address (dwarf_units.h), or, in a module whose units' addresses cannot be read, whole at its
// first lookup.
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
  explicit ElfModuleSymbols(const std::string& path) : elf_(path) { Load(); }

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
      unit_index_.Build(DwarfUnitSections::Of(elf_));
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

  void Load() {
    debug_line_ = elf_.Contents(".debug_line");
    debug_line_str_ = elf_.Contents(".debug_line_str");
    debug_str_ = elf_.Contents(".debug_str");
    const Elf64_Shdr* sections = elf_.sections();
    const Elf64_Shdr* symtab = nullptr;
    const Elf64_Shdr* dynsym = nullptr;
    for (unsigned i = 0; i < elf_.section_count(); ++i) {
      if (sections[i].sh_type == SHT_SYMTAB) symtab = &sections[i];
      if (sections[i].sh_type == SHT_DYNSYM) dynsym = &sections[i];
    }
    AddSymbols(sections, elf_.section_count(), symtab != nullptr ? symtab : dynsym);
    if (symtab != nullptr && dynsym != nullptr) AddSymbols(sections, elf_.section_count(), dynsym);
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
    if (!elf_.InFile(table->sh_offset, table->sh_size) || !elf_.InFile(strings.sh_offset, strings.sh_size)) return;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(elf_.base() + table->sh_offset);
    const size_t n = table->sh_size / sizeof(Elf64_Sym);
    const char* strtab = reinterpret_cast<const char*>(elf_.base() + strings.sh_offset);
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

  MappedElf elf_;
  std::vector<Symbol> symbols_;
  Span debug_line_, debug_line_str_, debug_str_;
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
