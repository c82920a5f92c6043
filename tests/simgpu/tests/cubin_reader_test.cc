// cubin_reader_test.cc — the cubin reader behind cuModuleLoadData and __cudaRegisterFatBinary
// (cuda/cubin.cc). SimgpuCubinReader: ELF images built here with <elf.h>'s structs (no nvcc
// needed): which symbols are kernels, registers from .nv.info, static shared memory from
// .nv.shared.<kernel>, fatbinary wrapping, and malformed images, which must never crash.
// SimgpuCubinNvcc (where nvcc exists): nvcc's own cubin and fatbinary of resource_kernels.cu,
// against what ptxas said of each kernel (the build keeps `-Xptxas -v`'s output).
#include <elf.h>
#include <fatbinary_section.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "cuda/cubin.h"
#include "tests/ptxas_log.h"

namespace {

struct Section {
  std::string name;
  uint32_t type;
  std::vector<unsigned char> data;
  uint32_t link = 0;
  uint64_t entsize = 0;
  uint64_t nobits_size = 0;  // SHT_NOBITS: the size it claims (it has no bytes)
};

struct Symbol {
  std::string name;
  unsigned char bind, type;
  uint16_t section;
};

// An ELF64 EM_CUDA image: null, .shstrtab, .strtab, .symtab, the text sections (4, 5, ...),
// then `extra` sections.
std::vector<unsigned char> BuildCubin(const std::vector<std::string>& text_sections,
                                      const std::vector<Symbol>& symbols, uint16_t machine = 190,
                                      const std::vector<Section>& extra = {}) {
  std::vector<Section> sections(4);
  sections[1] = {".shstrtab", SHT_STRTAB, {0}};
  sections[2] = {".strtab", SHT_STRTAB, {0}};
  sections[3] = {".symtab", SHT_SYMTAB, {}, 2, sizeof(Elf64_Sym)};
  for (const auto& t : text_sections) sections.push_back({t, SHT_PROGBITS, std::vector<unsigned char>(16, 0)});
  sections.insert(sections.end(), extra.begin(), extra.end());
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
    headers[i].sh_size =
        sections[i].type == SHT_NOBITS ? sections[i].nobits_size : sections[i].data.size();
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

std::vector<std::string> Names(const std::vector<simgpu::CubinKernel>& kernels) {
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k.name);
  return names;
}

const simgpu::CubinKernel* Find(const std::vector<simgpu::CubinKernel>& kernels,
                                const std::string& name) {
  for (const auto& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// One .nv.info entry (cuda/cubin.h): format, attribute, then a sized value's size and bytes, or
// a value in the u16 itself.
void AppendInfo(std::vector<unsigned char>* info, uint8_t format, uint8_t attribute,
                uint16_t size_or_value, const std::vector<uint32_t>& words = {}) {
  info->push_back(format);
  info->push_back(attribute);
  info->push_back(static_cast<unsigned char>(size_or_value & 0xff));
  info->push_back(static_cast<unsigned char>(size_or_value >> 8));
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) info->push_back(static_cast<unsigned char>(w >> (8 * i)));
  }
}

// EIATTR_REGCOUNT (format 0x04, attribute 0x2f, 8 bytes: symbol index, registers).
void AppendRegcount(std::vector<unsigned char>* info, uint32_t symbol, uint32_t registers) {
  AppendInfo(info, 0x04, 0x2f, 8, {symbol, registers});
}

// .nv.info as ptxas writes it: frame sizes (0x11) and register counts, a 2-byte value (0x03).
std::vector<unsigned char> SampleNvInfo() {
  std::vector<unsigned char> info;
  AppendInfo(&info, 0x04, 0x11, 8, {1, 0});  // EIATTR_FRAME_SIZE of symbol 1: 0
  AppendRegcount(&info, 1, 40);              // _Z4kernPf (symbol 1): 40 registers
  AppendInfo(&info, 0x03, 0x1b, 0x00ff);     // a value in the u16 (EIATTR_MAXREG_COUNT)
  AppendRegcount(&info, 3, 128);             // triton_k (symbol 3): 128 registers
  return info;
}

Section NoBits(const std::string& name, uint64_t size) {
  Section s{name, SHT_NOBITS, {}};
  s.nobits_size = size;
  return s;
}

std::vector<unsigned char> SampleCubin(uint16_t machine = 190,
                                       const std::vector<Section>& extra = {}) {
  // sections 4: .text._Z4kernPf, 5: .text.triton_k, 6: .text.weak_k, 7: .text.shared
  // symbols 1: _Z4kernPf, 2: its inlined device function, 3: triton_k, 4: weak_k, ...
  return BuildCubin({".text._Z4kernPf", ".text.triton_k", ".text.weak_k", ".text.shared"},
                    {{"_Z4kernPf", STB_GLOBAL, STT_FUNC, 4},
                     {"$_Z4kernPf$_Z6helperf", STB_LOCAL, STT_FUNC, 4},  // inlined device fn
                     {"triton_k", STB_GLOBAL, STT_FUNC, 5},
                     {"weak_k", STB_WEAK, STT_FUNC, 6},
                     {"global_data", STB_GLOBAL, STT_OBJECT, 7},
                     {"not_a_kernel", STB_GLOBAL, STT_FUNC, 7},  // no .text.<name> of its own
                     {"undefined_fn", STB_GLOBAL, STT_FUNC, SHN_UNDEF}},
                    machine, extra);
}

// The sample with .nv.info and _Z4kernPf's 4000 bytes of static shared memory, as an sm_80
// cubin has them, or (reservation) as an sm_90 one: 1 KiB more, and .nv.shared.reserved.0.
std::vector<unsigned char> ResourceCubin(bool reservation, std::vector<unsigned char> info) {
  std::vector<Section> extra = {{".nv.info", SHT_LOPROC, std::move(info), 3}};
  extra.push_back(NoBits(".nv.shared._Z4kernPf", reservation ? 5024 : 4000));
  if (reservation) {
    extra.push_back(NoBits(".nv.shared.reserved.0", 0));
    extra.push_back(NoBits(".nv.shared.triton_k", 1024));  // nothing of its own
  }
  return SampleCubin(190, extra);
}

// A fatbinary (cuda/cubin.h) of ELF entries, each for an architecture.
std::vector<unsigned char> Fatbinary(
    const std::vector<std::pair<uint32_t, std::vector<unsigned char>>>& entries) {
  std::vector<unsigned char> fat(16);
  for (const auto& [arch, elf] : entries) {
    std::vector<unsigned char> header(64, 0);
    uint16_t kind = 2, version = 0x0101;
    uint32_t entry_header = 64;
    uint64_t entry_size = elf.size();
    std::memcpy(&header[0], &kind, 2);
    std::memcpy(&header[2], &version, 2);
    std::memcpy(&header[4], &entry_header, 4);
    std::memcpy(&header[8], &entry_size, 8);
    std::memcpy(&header[28], &arch, 4);
    fat.insert(fat.end(), header.begin(), header.end());
    fat.insert(fat.end(), elf.begin(), elf.end());
  }
  uint32_t magic = 0xBA55ED50u;
  uint16_t version = 1, header = 16;
  uint64_t payload = fat.size() - 16;
  std::memcpy(&fat[0], &magic, 4);
  std::memcpy(&fat[4], &version, 2);
  std::memcpy(&fat[6], &header, 2);
  std::memcpy(&fat[8], &payload, 8);
  return fat;
}

TEST(SimgpuCubinReader, KernelsAreGlobalFunctionsWithTheirOwnTextSection) {
  auto image = SampleCubin();
  std::vector<simgpu::CubinKernel> kernels;
  ASSERT_EQ(simgpu::ReadModuleKernels(image.data(), SIZE_MAX, &kernels), simgpu::ImageStatus::kOk);
  EXPECT_EQ(Names(kernels), (std::vector<std::string>{"_Z4kernPf", "triton_k", "weak_k"}));
  for (const auto& k : kernels) {
    EXPECT_EQ(k.registers_per_thread, -1) << k.name << ": no .nv.info, so unknown";
    EXPECT_EQ(k.static_shared_bytes, 0u) << k.name;
  }
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
  std::vector<simgpu::CubinKernel> names;
  ASSERT_EQ(simgpu::ReadModuleKernels(fat.data(), SIZE_MAX, &names), simgpu::ImageStatus::kOk);
  EXPECT_EQ(names.size(), 3u);
  kind = 1;  // PTX only: the real driver JIT-compiles it; simgpu does not model that
  std::memcpy(&fat[16], &kind, 2);
  names.clear();
  EXPECT_EQ(simgpu::ReadModuleKernels(fat.data(), SIZE_MAX, &names),
            simgpu::ImageStatus::kNotSupported);
}

TEST(SimgpuCubinReader, MalformedImagesAreInvalid) {
  std::vector<simgpu::CubinKernel> names;
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


TEST(SimgpuCubinReader, RegistersFromNvInfoAndStaticSharedMemoryFromNvShared) {
  auto image = ResourceCubin(false, SampleNvInfo());
  std::vector<simgpu::CubinKernel> kernels;
  ASSERT_EQ(simgpu::ReadModuleKernels(image.data(), image.size(), &kernels),
            simgpu::ImageStatus::kOk);
  ASSERT_EQ(Names(kernels), (std::vector<std::string>{"_Z4kernPf", "triton_k", "weak_k"}));
  EXPECT_EQ(Find(kernels, "_Z4kernPf")->registers_per_thread, 40);
  EXPECT_EQ(Find(kernels, "_Z4kernPf")->static_shared_bytes, 4000u);
  EXPECT_EQ(Find(kernels, "triton_k")->registers_per_thread, 128);
  EXPECT_EQ(Find(kernels, "triton_k")->static_shared_bytes, 0u) << "no .nv.shared section";
  EXPECT_EQ(Find(kernels, "weak_k")->registers_per_thread, -1) << "no EIATTR_REGCOUNT for it";
}

TEST(SimgpuCubinReader, Sm90ReservationInNvSharedIsNotTheKernels) {
  auto image = ResourceCubin(true, SampleNvInfo());
  std::vector<simgpu::CubinKernel> kernels;
  ASSERT_EQ(simgpu::ReadModuleKernels(image.data(), image.size(), &kernels),
            simgpu::ImageStatus::kOk);
  EXPECT_EQ(Find(kernels, "_Z4kernPf")->static_shared_bytes, 4000u) << "5024 - 1024";
  EXPECT_EQ(Find(kernels, "triton_k")->static_shared_bytes, 0u) << "1024 - 1024";
  EXPECT_EQ(Find(kernels, "_Z4kernPf")->registers_per_thread, 40);
}

TEST(SimgpuCubinReader, GarbledNvInfoLeavesRegistersUnknownAndNeverCrashes) {
  std::vector<std::vector<unsigned char>> garbled;
  auto truncated = SampleNvInfo();
  truncated.resize(truncated.size() - 3);  // the last entry runs past the section
  garbled.push_back(truncated);
  auto unknown_format = SampleNvInfo();
  unknown_format[24] = 0x07;  // the third entry's format byte (after two of 12): no such format
  garbled.push_back(unknown_format);
  std::vector<unsigned char> huge_size;
  AppendRegcount(&huge_size, 1, 40);
  AppendInfo(&huge_size, 0x04, 0x2f, 0xfff0);  // a sized value far longer than the section
  garbled.push_back(huge_size);
  std::vector<unsigned char> too_many;
  AppendRegcount(&too_many, 1, 4096);  // more than the 255 a thread can have
  garbled.push_back(too_many);
  for (size_t i = 0; i < garbled.size(); ++i) {
    auto image = ResourceCubin(false, garbled[i]);
    std::vector<simgpu::CubinKernel> kernels;
    ASSERT_EQ(simgpu::ReadModuleKernels(image.data(), image.size(), &kernels),
              simgpu::ImageStatus::kOk) << "case " << i;
    ASSERT_EQ(kernels.size(), 3u) << "case " << i;
    for (const auto& k : kernels) {
      EXPECT_EQ(k.registers_per_thread, -1) << "case " << i << " " << k.name;
    }
    EXPECT_EQ(Find(kernels, "_Z4kernPf")->static_shared_bytes, 4000u) << "case " << i;
  }
}

TEST(SimgpuCubinReader, EveryCorruptedOrTruncatedImageIsHandled) {
  const auto image = ResourceCubin(true, SampleNvInfo());
  const auto fat = Fatbinary({{90, image}});
  for (const auto* original : {&image, &fat}) {
    for (size_t at = 0; at < original->size(); ++at) {
      for (unsigned char value : {0x00, 0x7f, 0xff}) {
        std::vector<unsigned char> copy = *original;
        copy[at] = value;
        std::vector<simgpu::CubinKernel> kernels;
        simgpu::ReadModuleKernels(copy.data(), copy.size(), &kernels);  // any status, no crash
        for (const auto& k : kernels) EXPECT_LE(k.registers_per_thread, 255);
      }
    }
    for (size_t size = 0; size < original->size(); ++size) {
      std::vector<unsigned char> cut(original->begin(), original->begin() + size);
      std::vector<simgpu::CubinKernel> kernels;
      EXPECT_NE(simgpu::ReadModuleKernels(cut.data(), cut.size(), &kernels),
                simgpu::ImageStatus::kOk) << "cut to " << size;
    }
  }
}

TEST(SimgpuCubinReader, FatbinaryIsReadForSm90WhateverItsOrder) {
  std::vector<unsigned char> info80, info90;
  AppendRegcount(&info80, 1, 24);
  AppendRegcount(&info90, 1, 30);
  const auto sm80 = ResourceCubin(false, info80);
  const auto sm90 = ResourceCubin(true, info90);
  for (const auto& fat :
       {Fatbinary({{80, sm80}, {90, sm90}}), Fatbinary({{90, sm90}, {80, sm80}})}) {
    std::vector<simgpu::CubinKernel> kernels;
    ASSERT_EQ(simgpu::ReadModuleKernels(fat.data(), fat.size(), &kernels),
              simgpu::ImageStatus::kOk);
    ASSERT_EQ(kernels.size(), 3u) << "one architecture's cubin names every kernel";
    EXPECT_EQ(Find(kernels, "_Z4kernPf")->registers_per_thread, 30);
    EXPECT_EQ(Find(kernels, "_Z4kernPf")->static_shared_bytes, 4000u);
  }
  // Without an sm_90 cubin, the first readable one (the real driver would JIT the PTX).
  const auto only80 = Fatbinary({{80, sm80}});
  std::vector<simgpu::CubinKernel> kernels;
  ASSERT_EQ(simgpu::ReadModuleKernels(only80.data(), only80.size(), &kernels),
            simgpu::ImageStatus::kOk);
  EXPECT_EQ(Find(kernels, "_Z4kernPf")->registers_per_thread, 24);
  // A payload larger than the image is malformed.
  auto cut = Fatbinary({{90, sm90}});
  cut.resize(cut.size() - 1);
  kernels.clear();
  EXPECT_EQ(simgpu::ReadModuleKernels(cut.data(), cut.size(), &kernels),
            simgpu::ImageStatus::kInvalidImage);
}

TEST(SimgpuCubinReader, FatbinaryOfNvccsRegistrationWrapper) {
  const auto fat = Fatbinary({{90, ResourceCubin(true, SampleNvInfo())}});
  // What nvcc's host code passes __cudaRegisterFatBinary (fatbinary_section.h).
  __fatBinC_Wrapper_t wrapper{FATBINC_MAGIC, FATBINC_VERSION,
                              reinterpret_cast<const unsigned long long*>(fat.data()), nullptr};
  EXPECT_EQ(simgpu::FatbinaryOfWrapper(&wrapper), fat.data());
  wrapper.version = FATBINC_LINK_VERSION;  // -rdc: the same data member
  EXPECT_EQ(simgpu::FatbinaryOfWrapper(&wrapper), fat.data());
  wrapper.version = 7;
  EXPECT_EQ(simgpu::FatbinaryOfWrapper(&wrapper), nullptr);
  static char dummy[16] = {};  // what tests/fake_nvcc.h registers
  EXPECT_EQ(simgpu::FatbinaryOfWrapper(dummy), nullptr);
  EXPECT_EQ(simgpu::FatbinaryOfWrapper(nullptr), nullptr);
}

#if defined(RESOURCE_CUBIN) && defined(RESOURCE_FATBIN)
// nvcc's own images of resource_kernels.cu, against ptxas -v of the same compilation (the build
// writes it to <image>.ptxas.txt). Established with CUDA 13.0: see resource_kernels.cu.

std::vector<unsigned char> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>());
}

void ExpectWhatPtxasSaid(const std::string& image_path, const std::string& arch) {
  const auto image = ReadFile(image_path);
  ASSERT_FALSE(image.empty()) << image_path;
  const auto ptxas = simgpu_test::ReadPtxasLog(image_path + ".ptxas.txt", arch);
  ASSERT_EQ(ptxas.size(), 4u) << "ptxas -v reported the four kernels of resource_kernels.cu";
  std::vector<simgpu::CubinKernel> kernels;
  ASSERT_EQ(simgpu::ReadModuleKernels(image.data(), image.size(), &kernels),
            simgpu::ImageStatus::kOk);
  ASSERT_EQ(kernels.size(), 4u);
  for (const auto& [name, said] : ptxas) {
    const simgpu::CubinKernel* k = Find(kernels, name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_EQ(k->registers_per_thread, said.registers) << name;
    EXPECT_EQ(static_cast<long>(k->static_shared_bytes), said.static_shared_bytes) << name;
  }
  // What the source declares, whatever the toolkit: 1000 floats, and __launch_bounds__(64)'s
  // kernel using more registers than the small ones.
  EXPECT_EQ(Find(kernels, "_Z5tiledPfPKf")->static_shared_bytes, 4000u);
  EXPECT_EQ(Find(kernels, "plain")->static_shared_bytes, 0u);
  EXPECT_GT(Find(kernels, "_Z5heavyPfPKf")->registers_per_thread,
            Find(kernels, "_Z5tiledPfPKf")->registers_per_thread);
}

TEST(SimgpuCubinNvcc, CubinRegistersAndStaticSharedMemoryAreWhatPtxasSaid) {
  ExpectWhatPtxasSaid(RESOURCE_CUBIN, "sm_90");
}

TEST(SimgpuCubinNvcc, FatbinaryIsReadForSm90AsPtxasSaid) {
  // The sm_80 cubin comes first in it and differs (CUDA 13.0: plain 8 registers, not 10;
  // scratch 12, not 14): the sm_90 one is read.
  ExpectWhatPtxasSaid(RESOURCE_FATBIN, "sm_90");
}
#endif

}  // namespace
