// elf_symbolizer.h — function names (and, where DWARF line tables exist, file:line) for PCs, from
// the ELF files of the loaded modules. Runs on the writer thread, off the hot path.
//
// Each module file is mapped read-only once, on its first lookup; its FUNC symbols (.symtab, else
// .dynsym) are sorted once, and every lookup is a binary search. C++ names are demangled with
// abi::__cxa_demangle. A module whose file cannot be read (vDSO, deleted file, permissions) gives
// empty results, and the trace keeps its raw PCs and build-id for offline symbolisation.
//
// Thread safety: none; one owner thread. Memory: one mapping per symbolised module (file-backed,
// reclaimable), a sorted symbol index, and the line table of each compilation unit whose lines
// were asked (units up to 32 MiB of line program; dwarf_units.h); a module whose units'
// addresses cannot be read has its whole line table decoded instead (up to 32 MiB; larger ones
// give function names only).
//
// Known limit: file:line is the line-table row of the PC, i.e. the INNERMOST inlined location
// (a call through an inline wrapper in cuda_runtime.h reports that header line), while the
// function name is the enclosing symbol. Inline chains need .debug_info (not read here).
#ifndef GPUSTALL_AGENT_SYMBOLIZE_ELF_SYMBOLIZER_H_
#define GPUSTALL_AGENT_SYMBOLIZE_ELF_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <string>

#include <unordered_map>

namespace gs {

struct SymbolInfo {
  std::string function;      // demangled; empty when unknown
  uint64_t function_offset = 0;
  std::string file;          // from .debug_line; empty when unknown
  uint32_t line = 0;
};

class ElfModuleSymbols;  // elf_symbolizer.cc

class ElfSymbolizer {
 public:
  ElfSymbolizer();
  ~ElfSymbolizer();

  // Describes `elf_address` (a virtual address of the ELF file at `path`: runtime PC minus the
  // module's load bias; for a return address pass pc - 1 so the call instruction is looked up).
  // `module_key` identifies the module (e.g. ModuleInfo::id); the file is opened on first use.
  // With `with_line` false the module's line table is neither read nor consulted (file stays
  // empty): for modules whose file:line no reader shows, decoding it is only cost.
  SymbolInfo Symbolize(uint32_t module_key, const std::string& path, uint64_t elf_address,
                       bool with_line = true);

 private:
  std::unordered_map<uint32_t, std::unique_ptr<ElfModuleSymbols>> modules_;
};

// Demangles an Itanium C++ name; returns `name` unchanged when it is not mangled.
std::string Demangle(const char* name);

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_ELF_SYMBOLIZER_H_
