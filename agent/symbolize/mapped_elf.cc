#include "agent/symbolize/mapped_elf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace gs {

MappedElf::MappedElf(const std::string& path) {
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
  sections_ = reinterpret_cast<const Elf64_Shdr*>(base_ + eh->e_shoff);
  section_count_ = eh->e_shnum;
  if (eh->e_shstrndx < eh->e_shnum && InFile(sections_[eh->e_shstrndx].sh_offset, sections_[eh->e_shstrndx].sh_size))
    names_ = &sections_[eh->e_shstrndx];
}

MappedElf::~MappedElf() {
  if (base_ != nullptr) munmap(const_cast<uint8_t*>(base_), size_);
}

const Elf64_Shdr* MappedElf::Section(const char* name) const {
  if (names_ == nullptr) return nullptr;
  const char* table = reinterpret_cast<const char*>(base_ + names_->sh_offset);
  const Elf64_Shdr* found = nullptr;
  for (unsigned i = 0; i < section_count_; ++i) {
    const Elf64_Shdr& sh = sections_[i];
    if (sh.sh_type != SHT_PROGBITS || sh.sh_name >= names_->sh_size || !InFile(sh.sh_offset, sh.sh_size) ||
        (sh.sh_flags & SHF_COMPRESSED) != 0)
      continue;
    // The name must end inside the string table.
    const char* candidate = table + sh.sh_name;
    const size_t room = names_->sh_size - sh.sh_name;
    if (std::memchr(candidate, '\0', room) != nullptr && std::strcmp(candidate, name) == 0) found = &sh;
  }
  return found;
}

Span MappedElf::Contents(const char* name) const {
  const Elf64_Shdr* sh = Section(name);
  return sh != nullptr ? Span{base_ + sh->sh_offset, sh->sh_size} : Span{};
}

}  // namespace gs
