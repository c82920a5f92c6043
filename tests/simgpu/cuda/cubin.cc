// cubin.cc — the kernels of a module image: names from the cubin's ELF symbol table, register
// counts from its .nv.info, static shared memory from its .nv.shared.<kernel> sections (see
// cubin.h for the encodings and how they were established), with <elf.h>'s structs. Every read
// is checked against the image's size: a malformed image is an error status, never a crash.
#include "cuda/cubin.h"

#include <elf.h>
#include <fatbinary_section.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

namespace simgpu {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kEmCuda = 190;  // EM_CUDA
constexpr uint16_t kFatbinEntryElf = 2;
constexpr uint32_t kModelledArch = 90;  // simgpu's devices: compute capability 9.0 (sm_90)
// .nv.info (cubin.h): its section type, the sized-value format, the register-count attribute.
constexpr uint32_t kShtNvInfo = SHT_LOPROC;
constexpr uint8_t kEifmtSval = 0x04;
constexpr uint8_t kEiattrRegcount = 0x2f;
constexpr uint32_t kMaxRegistersPerThread = 255;  // the Programming Guide's per-thread limit
// The per-block reservation sm_90 cubins fold into .nv.shared.<kernel> (cubin.h).
constexpr uint64_t kReservedSharedPerBlock = 1024;

bool Within(size_t size, uint64_t offset, uint64_t length) {
  return offset <= size && length <= size - offset;
}

// The extent of an ELF64 image from its headers: the end of the section header table or of the
// furthest section, whichever is later; `max_size` when the headers point past it (the image is
// then rejected by ReadElfKernels, which checks every section against the size it is given).
size_t ElfExtent(const unsigned char* data, size_t max_size) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  const uint64_t table = static_cast<uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || !Within(max_size, eh.e_shoff, table)) {
    return max_size;
  }
  uint64_t end = eh.e_shoff + table;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, data + eh.e_shoff + static_cast<uint64_t>(i) * sizeof sh, sizeof sh);
    if (sh.sh_type == SHT_NOBITS) continue;
    if (sh.sh_size > UINT64_MAX - sh.sh_offset) return max_size;
    if (sh.sh_offset + sh.sh_size > end) end = sh.sh_offset + sh.sh_size;
  }
  const uint64_t ph_table = static_cast<uint64_t>(eh.e_phnum) * eh.e_phentsize;
  if (ph_table > UINT64_MAX - eh.e_phoff) return max_size;
  if (eh.e_phoff + ph_table > end) end = eh.e_phoff + ph_table;
  return end < max_size ? static_cast<size_t>(end) : max_size;
}

bool IsElf64(const unsigned char* data, size_t size) {
  return size >= sizeof(Elf64_Ehdr) && std::memcmp(data, ELFMAG, SELFMAG) == 0 &&
         data[EI_CLASS] == ELFCLASS64 && data[EI_DATA] == ELFDATA2LSB;
}

// The EIATTR_REGCOUNT entries of one .nv.info section, symbol index -> registers. False when the
// section does not parse to its end (an entry of an unknown format, or one running past it): then
// nothing in it is trusted.
bool ReadRegisterCounts(const unsigned char* info, size_t size, std::map<uint32_t, int>* counts) {
  std::map<uint32_t, int> found;
  size_t at = 0;
  while (at < size) {
    if (size - at < 4) return false;
    const uint8_t format = info[at];
    const uint8_t attribute = info[at + 1];
    uint16_t value = 0;
    std::memcpy(&value, info + at + 2, sizeof value);
    size_t length = 4;
    if (format == kEifmtSval) {
      length += value;
    } else if (format < 0x01 || format > 0x03) {
      return false;
    }
    if (length > size - at) return false;
    if (format == kEifmtSval && attribute == kEiattrRegcount && value == 8) {
      uint32_t symbol = 0, registers = 0;
      std::memcpy(&symbol, info + at + 4, sizeof symbol);
      std::memcpy(&registers, info + at + 8, sizeof registers);
      if (registers > kMaxRegistersPerThread) return false;
      found[symbol] = static_cast<int>(registers);
    }
    at += length;
  }
  for (const auto& entry : found) (*counts)[entry.first] = entry.second;
  return true;
}

// A fatbinary's kernels: from its sm_90 cubin, else from its first readable one (cubin.h).
ImageStatus ReadFatbinary(const unsigned char* data, size_t max_size,
                          std::vector<CubinKernel>* kernels) {
  uint16_t header_size = 0;
  uint64_t payload = 0;
  std::memcpy(&header_size, data + 6, sizeof header_size);
  std::memcpy(&payload, data + 8, sizeof payload);
  if (header_size < 16 || header_size > max_size || payload > max_size - header_size) {
    return ImageStatus::kInvalidImage;
  }
  const size_t end = header_size + static_cast<size_t>(payload);
  size_t at = header_size;
  std::vector<CubinKernel> first;
  bool have_first = false;
  while (end - at >= 16) {
    const unsigned char* entry = data + at;
    uint16_t kind = 0;
    uint32_t entry_header = 0, arch = 0;
    uint64_t entry_size = 0;
    std::memcpy(&kind, entry, sizeof kind);
    std::memcpy(&entry_header, entry + 4, sizeof entry_header);
    std::memcpy(&entry_size, entry + 8, sizeof entry_size);
    if (entry_header < 16 || entry_header > end - at || entry_size > end - at - entry_header) break;
    if (entry_header >= 32) std::memcpy(&arch, entry + 28, sizeof arch);
    const unsigned char* body = entry + entry_header;
    if (kind == kFatbinEntryElf && IsElf64(body, entry_size)) {
      std::vector<CubinKernel> found;
      if (ReadElfKernels(body, entry_size, &found) == ImageStatus::kOk) {
        if (arch == kModelledArch) {
          kernels->insert(kernels->end(), found.begin(), found.end());
          return ImageStatus::kOk;
        }
        if (!have_first) {
          first = std::move(found);
          have_first = true;
        }
      }
    }
    at += entry_header + entry_size;
  }
  if (!have_first) return ImageStatus::kNotSupported;  // PTX only, or compressed
  kernels->insert(kernels->end(), first.begin(), first.end());
  return ImageStatus::kOk;
}

}  // namespace

ImageStatus ReadElfKernels(const unsigned char* data, size_t size,
                           std::vector<CubinKernel>* kernels) {
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
  if (shstr.sh_type == SHT_NOBITS || !section_ok(shstr)) return ImageStatus::kInvalidImage;
  auto string_at = [&](const Elf64_Shdr& table, uint64_t offset) -> std::string {
    if (offset >= table.sh_size) return std::string();
    const char* s = reinterpret_cast<const char*>(data + table.sh_offset + offset);
    return std::string(s, strnlen(s, table.sh_size - offset));
  };
  std::vector<std::string> section_names;
  for (const Elf64_Shdr& sh : sections) section_names.push_back(string_at(shstr, sh.sh_name));

  std::vector<CubinKernel> found;
  std::vector<uint32_t> symbol_of;  // found[i]'s index in .symtab (EIATTR_REGCOUNT names it)
  bool found_symtab = false;
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type != SHT_SYMTAB) continue;
    found_symtab = true;
    if (!section_ok(sh) || sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= sections.size()) {
      return ImageStatus::kInvalidImage;
    }
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    if (strtab.sh_type == SHT_NOBITS || !section_ok(strtab)) return ImageStatus::kInvalidImage;
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
      if (section_names[sym.st_shndx] != ".text." + name) continue;
      CubinKernel k;
      k.name = std::move(name);
      found.push_back(std::move(k));
      symbol_of.push_back(static_cast<uint32_t>(i));
    }
  }
  if (!found_symtab) return ImageStatus::kInvalidImage;

  // Registers: .nv.info's EIATTR_REGCOUNT entries; static shared memory: .nv.shared.<kernel>.
  std::map<uint32_t, int> registers;
  std::map<std::string, uint64_t> shared;  // NOBITS section name -> size
  bool reservation_included = false;
  for (size_t i = 0; i < sections.size(); ++i) {
    const Elf64_Shdr& sh = sections[i];
    if (sh.sh_type == kShtNvInfo && section_names[i] == ".nv.info" && section_ok(sh)) {
      ReadRegisterCounts(data + sh.sh_offset, sh.sh_size, &registers);
    }
    if (sh.sh_type == SHT_NOBITS) shared[section_names[i]] = sh.sh_size;
    if (section_names[i] == ".nv.shared.reserved.0") reservation_included = true;
  }
  for (size_t k = 0; k < found.size(); ++k) {
    auto r = registers.find(symbol_of[k]);
    if (r != registers.end()) found[k].registers_per_thread = r->second;
    auto s = shared.find(".nv.shared." + found[k].name);
    if (s == shared.end()) continue;  // no shared memory of its own
    uint64_t bytes = s->second;
    if (reservation_included) {
      bytes = bytes > kReservedSharedPerBlock ? bytes - kReservedSharedPerBlock : 0;
    }
    found[k].static_shared_bytes = bytes > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(bytes);
  }
  kernels->insert(kernels->end(), found.begin(), found.end());
  return ImageStatus::kOk;
}

ImageStatus ReadModuleKernels(const void* image, size_t max_size,
                              std::vector<CubinKernel>* kernels) {
  if (image == nullptr) return ImageStatus::kInvalidImage;
  const auto* data = static_cast<const unsigned char*>(image);
  if (max_size >= sizeof(Elf64_Ehdr) && std::memcmp(data, ELFMAG, SELFMAG) == 0) {
    if (!IsElf64(data, max_size)) return ImageStatus::kInvalidImage;
    return ReadElfKernels(data, ElfExtent(data, max_size), kernels);
  }
  uint32_t magic = 0;
  if (max_size >= 16) std::memcpy(&magic, data, sizeof magic);
  if (magic == kFatbinMagic) return ReadFatbinary(data, max_size, kernels);
  // PTX text (the real driver JIT-compiles it): not modelled.
  if (max_size >= 1 && (data[0] == '/' || data[0] == '.' || data[0] == '\n' || data[0] == ' ' ||
                        data[0] == '\t')) {
    return ImageStatus::kNotSupported;
  }
  return ImageStatus::kInvalidImage;
}

const void* FatbinaryOfWrapper(const void* wrapper) {
  if (wrapper == nullptr) return nullptr;
  int magic = 0;
  std::memcpy(&magic, wrapper, sizeof magic);  // only the magic: a dummy may be shorter
  if (static_cast<unsigned>(magic) != FATBINC_MAGIC) return nullptr;
  __fatBinC_Wrapper_t w;
  std::memcpy(&w, wrapper, sizeof w);
  if (w.version != FATBINC_VERSION && w.version != FATBINC_LINK_VERSION) return nullptr;
  return w.data;
}

}  // namespace simgpu
