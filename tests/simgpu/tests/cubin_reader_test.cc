// cubin_reader_test.cc — the cubin reader behind cuModuleLoadData (cuda/cubin.cc) on ELF images
// built here with <elf.h>'s structs (no nvcc needed): which symbols are kernels, fatbinary
// wrapping, and malformed images.
#include <elf.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cuda/cubin.h"

namespace {

struct Section {
  std::string name;
  uint32_t type;
  std::vector<unsigned char> data;
  uint32_t link = 0;
  uint64_t entsize = 0;
};

struct Symbol {
  std::string name;
  unsigned char bind, type;
  uint16_t section;
};

// An ELF64 EM_CUDA image: null, .shstrtab, .strtab, .symtab, then `extra` sections.
std::vector<unsigned char> BuildCubin(const std::vector<std::string>& text_sections,
                                      const std::vector<Symbol>& symbols, uint16_t machine = 190) {
  std::vector<Section> sections(4);
  sections[1] = {".shstrtab", SHT_STRTAB, {0}};
  sections[2] = {".strtab", SHT_STRTAB, {0}};
  sections[3] = {".symtab", SHT_SYMTAB, {}, 2, sizeof(Elf64_Sym)};
  for (const auto& t : text_sections) sections.push_back({t, SHT_PROGBITS, std::vector<unsigned char>(16, 0)});
  Elf64_Sym null_sym{};
  auto& symtab = sections[3].data;
  symtab.resize(sizeof null_sym);
  for (const auto& s : symbols) {
    Elf64_Sym sym{};
    sym.st_name = static_cast<uint32_t>(sections[2].data.size());
    sections[2].data.insert(sections[2].data.end(), s.name.begin(), s.name.end());
    sections[2].data.push_back(0);
    sym.st_info = ELF64_ST_INFO(s.bind, s.type);
    sym.st_shndx = s.section;
    const auto* b = reinterpret_cast<const unsigned char*>(&sym);
    symtab.insert(symtab.end(), b, b + sizeof sym);
  }
  std::vector<uint32_t> name_offsets;
  for (auto& sec : sections) {
    name_offsets.push_back(static_cast<uint32_t>(sections[1].data.size()));
    sections[1].data.insert(sections[1].data.end(), sec.name.begin(), sec.name.end());
    sections[1].data.push_back(0);
  }
  std::vector<unsigned char> image(sizeof(Elf64_Ehdr));
  std::vector<Elf64_Shdr> headers(sections.size());
  for (size_t i = 1; i < sections.size(); ++i) {
    headers[i].sh_name = name_offsets[i];
    headers[i].sh_type = sections[i].type;
    headers[i].sh_offset = image.size();
    headers[i].sh_size = sections[i].data.size();
    headers[i].sh_link = sections[i].link;
    headers[i].sh_entsize = sections[i].entsize;
    image.insert(image.end(), sections[i].data.begin(), sections[i].data.end());
  }
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = machine;
  eh.e_shoff = image.size();
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = static_cast<uint16_t>(headers.size());
  eh.e_shstrndx = 1;
  eh.e_ehsize = sizeof eh;
  const auto* hb = reinterpret_cast<const unsigned char*>(headers.data());
  image.insert(image.end(), hb, hb + headers.size() * sizeof(Elf64_Shdr));
  std::memcpy(image.data(), &eh, sizeof eh);
  return image;
}

std::vector<unsigned char> SampleCubin(uint16_t machine = 190) {
  // sections 4: .text._Z4kernPf, 5: .text.triton_k, 6: .text.weak_k, 7: .text.shared
  return BuildCubin({".text._Z4kernPf", ".text.triton_k", ".text.weak_k", ".text.shared"},
                    {{"_Z4kernPf", STB_GLOBAL, STT_FUNC, 4},
                     {"$_Z4kernPf$_Z6helperf", STB_LOCAL, STT_FUNC, 4},  // inlined device fn
                     {"triton_k", STB_GLOBAL, STT_FUNC, 5},
                     {"weak_k", STB_WEAK, STT_FUNC, 6},
                     {"global_data", STB_GLOBAL, STT_OBJECT, 7},
                     {"not_a_kernel", STB_GLOBAL, STT_FUNC, 7},  // no .text.<name> of its own
                     {"undefined_fn", STB_GLOBAL, STT_FUNC, SHN_UNDEF}},
                    machine);
}

TEST(SimgpuCubinReader, KernelsAreGlobalFunctionsWithTheirOwnTextSection) {
  auto image = SampleCubin();
  std::vector<std::string> names;
  ASSERT_EQ(simgpu::ReadModuleKernels(image.data(), SIZE_MAX, &names), simgpu::ImageStatus::kOk);
  EXPECT_EQ(names, (std::vector<std::string>{"_Z4kernPf", "triton_k", "weak_k"}));
}

TEST(SimgpuCubinReader, FatbinaryElfEntryIsRead) {
  auto elf = SampleCubin();
  // fatbinary: magic, version 1, header 16, payload size; an entry: kind 2 (ELF), header 64.
  std::vector<unsigned char> fat(16 + 64);
  uint32_t magic = 0xBA55ED50u;
  uint16_t version = 1, header = 16, kind = 2;
  uint32_t entry_header = 64;
  uint64_t entry_size = elf.size(), payload = 64 + elf.size();
  std::memcpy(&fat[0], &magic, 4);
  std::memcpy(&fat[4], &version, 2);
  std::memcpy(&fat[6], &header, 2);
  std::memcpy(&fat[8], &payload, 8);
  std::memcpy(&fat[16], &kind, 2);
  std::memcpy(&fat[20], &entry_header, 4);
  std::memcpy(&fat[24], &entry_size, 8);
  fat.insert(fat.end(), elf.begin(), elf.end());
  std::vector<std::string> names;
  ASSERT_EQ(simgpu::ReadModuleKernels(fat.data(), SIZE_MAX, &names), simgpu::ImageStatus::kOk);
  EXPECT_EQ(names.size(), 3u);
  kind = 1;  // PTX only: the real driver JIT-compiles it; simgpu does not model that
  std::memcpy(&fat[16], &kind, 2);
  names.clear();
  EXPECT_EQ(simgpu::ReadModuleKernels(fat.data(), SIZE_MAX, &names),
            simgpu::ImageStatus::kNotSupported);
}

TEST(SimgpuCubinReader, MalformedImagesAreInvalid) {
  std::vector<std::string> names;
  auto x86 = SampleCubin(EM_X86_64);
  EXPECT_EQ(simgpu::ReadModuleKernels(x86.data(), SIZE_MAX, &names),
            simgpu::ImageStatus::kInvalidImage);
  auto image = SampleCubin();
  EXPECT_EQ(simgpu::ReadElfKernels(image.data(), image.size() / 2, &names),
            simgpu::ImageStatus::kInvalidImage);  // section headers cut off
  const char text[] = "hello, not an image";
  EXPECT_EQ(simgpu::ReadModuleKernels(text, sizeof text, &names),
            simgpu::ImageStatus::kInvalidImage);
  const char ptx[] = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n";
  EXPECT_EQ(simgpu::ReadModuleKernels(ptx, sizeof ptx, &names), simgpu::ImageStatus::kNotSupported);
  EXPECT_TRUE(names.empty());
}

}  // namespace
