// cubin.cc — kernel names from a cubin's ELF symbol table (see cubin.h), with <elf.h>'s structs.
#include "cuda/cubin.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace simgpu {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kEmCuda = 190;  // EM_CUDA

bool Within(size_t size, uint64_t offset, uint64_t length) {
  return offset <= size && length <= size - offset;
}

// The extent of an ELF64 image from its headers: the end of the section header table or of the
// furthest section, whichever is later.
size_t ElfExtent(const unsigned char* data) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  uint64_t end = eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * eh.e_shentsize;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, data + eh.e_shoff + static_cast<uint64_t>(i) * eh.e_shentsize, sizeof sh);
    if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > end) end = sh.sh_offset + sh.sh_size;
  }
  uint64_t ph_end = eh.e_phoff + static_cast<uint64_t>(eh.e_phnum) * eh.e_phentsize;
  return static_cast<size_t>(ph_end > end ? ph_end : end);
}

bool IsElf64(const unsigned char* data, size_t size) {
  return size >= sizeof(Elf64_Ehdr) && std::memcmp(data, ELFMAG, SELFMAG) == 0 &&
         data[EI_CLASS] == ELFCLASS64 && data[EI_DATA] == ELFDATA2LSB;
}

}  // namespace

ImageStatus ReadElfKernels(const unsigned char* data, size_t size, std::vector<std::string>* names) {
  if (!IsElf64(data, size)) return ImageStatus::kInvalidImage;
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_machine != kEmCuda) return ImageStatus::kInvalidImage;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      !Within(size, eh.e_shoff, static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr)) ||
      eh.e_shstrndx >= eh.e_shnum) {
    return ImageStatus::kInvalidImage;
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), data + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  auto section_ok = [&](const Elf64_Shdr& sh) {
    return sh.sh_type == SHT_NOBITS || Within(size, sh.sh_offset, sh.sh_size);
  };
  const Elf64_Shdr& shstr = sections[eh.e_shstrndx];
  if (!section_ok(shstr)) return ImageStatus::kInvalidImage;
  auto string_at = [&](const Elf64_Shdr& table, uint64_t offset) -> std::string {
    if (offset >= table.sh_size) return std::string();
    const char* s = reinterpret_cast<const char*>(data + table.sh_offset + offset);
    return std::string(s, strnlen(s, table.sh_size - offset));
  };
  bool found_symtab = false;
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type != SHT_SYMTAB) continue;
    found_symtab = true;
    if (!section_ok(sh) || sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= sections.size()) {
      return ImageStatus::kInvalidImage;
    }
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    if (!section_ok(strtab)) return ImageStatus::kInvalidImage;
    size_t count = sh.sh_size / sizeof(Elf64_Sym);
    for (size_t i = 1; i < count; ++i) {
      Elf64_Sym sym;
      std::memcpy(&sym, data + sh.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
      int bind = ELF64_ST_BIND(sym.st_info);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK)) {
        continue;
      }
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size()) continue;
      std::string name = string_at(strtab, sym.st_name);
      if (name.empty()) continue;
      // A kernel has a section of its own, .text.<name>.
      if (string_at(shstr, sections[sym.st_shndx].sh_name) != ".text." + name) continue;
      names->push_back(name);
    }
  }
  return found_symtab ? ImageStatus::kOk : ImageStatus::kInvalidImage;
}

ImageStatus ReadModuleKernels(const void* image, size_t max_size, std::vector<std::string>* names) {
  if (image == nullptr) return ImageStatus::kInvalidImage;
  const auto* data = static_cast<const unsigned char*>(image);
  if (max_size >= sizeof(Elf64_Ehdr) && std::memcmp(data, ELFMAG, SELFMAG) == 0) {
    if (!IsElf64(data, max_size)) return ImageStatus::kInvalidImage;
    size_t extent = ElfExtent(data);
    return ReadElfKernels(data, extent < max_size ? extent : max_size, names);
  }
  uint32_t magic = 0;
  if (max_size >= 16) std::memcpy(&magic, data, sizeof magic);
  if (magic == kFatbinMagic) {
    // fatbinary header and entries as cubin.h describes them (read off nvcc -fatbin output).
    uint16_t header_size = 0;
    uint64_t payload = 0;
    std::memcpy(&header_size, data + 6, sizeof header_size);
    std::memcpy(&payload, data + 8, sizeof payload);
    const unsigned char* p = data + header_size;
    const unsigned char* end = p + payload;
    bool any = false;
    while (p + 16 <= end) {
      uint16_t kind = 0;
      uint32_t entry_header = 0;
      uint64_t entry_size = 0;
      std::memcpy(&kind, p, sizeof kind);
      std::memcpy(&entry_header, p + 4, sizeof entry_header);
      std::memcpy(&entry_size, p + 8, sizeof entry_size);
      if (entry_header < 16 || p + entry_header + entry_size > end) break;
      const unsigned char* body = p + entry_header;
      if (kind == 2 && IsElf64(body, entry_size)) {
        std::vector<std::string> found;
        if (ReadElfKernels(body, entry_size, &found) == ImageStatus::kOk) {
          names->insert(names->end(), found.begin(), found.end());
          any = true;
          break;  // one architecture's cubin names every kernel
        }
      }
      p += entry_header + entry_size;
    }
    return any ? ImageStatus::kOk : ImageStatus::kNotSupported;  // PTX only, or compressed
  }
  // PTX text (the real driver JIT-compiles it): not modelled.
  if (max_size >= 1 && (data[0] == '/' || data[0] == '.' || data[0] == '\n' || data[0] == ' ' ||
                        data[0] == '\t')) {
    return ImageStatus::kNotSupported;
  }
  return ImageStatus::kInvalidImage;
}

}  // namespace simgpu
