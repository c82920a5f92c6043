#include "agent/symbolize/module_map.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <climits>

#include "agent/core/fork_gate.h"

namespace gs {
namespace {

struct Scan {
  std::vector<ModuleInfo> found;
  unsigned long long adds = 0;
  unsigned long long subs = 0;
};

std::string BuildIdOf(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const size_t name_size = (note->n_namesz + 3) & ~3u;
      const size_t desc_size = (note->n_descsz + 3) & ~3u;
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + name_size;
      if (desc + desc_size > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::equal(name, name + 4, reinterpret_cast<const uint8_t*>("GNU"))) {
        return std::string(reinterpret_cast<const char*>(desc), note->n_descsz);
      }
      p = desc + desc_size;
    }
  }
  return "";
}

int Visit(dl_phdr_info* info, size_t size, void* data) {
  auto* scan = static_cast<Scan*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    scan->adds = info->dlpi_adds;
    scan->subs = info->dlpi_subs;
  }
  ModuleInfo module;
  module.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  module.bias = info->dlpi_addr;
  uint64_t lo = UINT64_MAX, hi = 0;
  bool first_load = true;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    if (first_load) {
      module.load_address = info->dlpi_addr + ph.p_vaddr - ph.p_offset;
      first_load = false;
    }
    lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (first_load) return 0;  // nothing mapped
  module.start = lo;
  module.end = hi;
  module.build_id = BuildIdOf(info);
  scan->found.push_back(std::move(module));
  return 0;
}

}  // namespace

ModuleMap::~ModuleMap() {
  for (ModuleInfo* m : modules_) delete m;
}

std::vector<const ModuleInfo*> ModuleMap::Refresh() {
  if (exe_path_.empty()) {
    char buffer[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    exe_path_ = n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "/proc/self/exe";
  }
  Scan scan;
  {
    // The walk holds the loader's list lock: not across a fork (agent/core/fork_gate.h).
    MutexLock gate(&g_fork_gate);
    dl_iterate_phdr(&Visit, &scan);
  }
  last_adds_ = scan.adds;
  last_subs_ = scan.subs;
  scanned_ = true;

  std::vector<const ModuleInfo*> added;
  bool first = true;
  for (ModuleInfo& m : scan.found) {
    // dl_iterate_phdr lists the program first, with an empty name.
    if (m.path.empty()) {
      if (first) {
        m.path = exe_path_;
      } else {
        m.has_file = false;
      }
    }
    if (m.path.rfind("linux-vdso", 0) == 0 || m.path.rfind("linux-gate", 0) == 0) m.has_file = false;
    first = false;
    const auto same = std::find_if(modules_.begin(), modules_.end(), [&](const ModuleInfo* k) {
      return k->start == m.start && k->end == m.end && k->path == m.path;
    });
    if (same != modules_.end()) continue;
    // Drop stale (dlclose'd) modules that the new one overlaps.
    modules_.erase(std::remove_if(modules_.begin(), modules_.end(),
                                  [&](ModuleInfo* k) {
                                    const bool overlap = k->start < m.end && m.start < k->end;
                                    if (overlap) delete k;
                                    return overlap;
                                  }),
                   modules_.end());
    auto* owned = new ModuleInfo(std::move(m));
    owned->id = next_id_++;
    modules_.insert(std::upper_bound(modules_.begin(), modules_.end(), owned,
                                     [](const ModuleInfo* a, const ModuleInfo* b) {
                                       return a->start < b->start;
                                     }),
                    owned);
    added.push_back(owned);
  }
  return added;
}

const ModuleInfo* ModuleMap::FindKnown(uint64_t pc) const {
  auto it = std::upper_bound(modules_.begin(), modules_.end(), pc,
                             [](uint64_t value, const ModuleInfo* m) { return value < m->start; });
  if (it == modules_.begin()) return nullptr;
  const ModuleInfo* m = *(it - 1);
  return pc < m->end ? m : nullptr;
}

const ModuleInfo* ModuleMap::Find(uint64_t pc, std::vector<const ModuleInfo*>* discovered) {
  const ModuleInfo* m = FindKnown(pc);
  if (m != nullptr) return m;
  // Unknown PC: a late dlopen? dlpi_adds/dlpi_subs tell whether rescanning can help.
  if (scanned_) {
    Scan probe;
    MutexLock gate(&g_fork_gate);  // the loader's list lock: not across a fork (fork_gate.h)
    dl_iterate_phdr([](dl_phdr_info* info, size_t, void* data) {
      auto* p = static_cast<Scan*>(data);
      p->adds = info->dlpi_adds;
      p->subs = info->dlpi_subs;
      return 1;  // the counters are the same in every entry: stop at the first
    }, &probe);
    if (probe.adds == last_adds_ && probe.subs == last_subs_) return nullptr;
  }
  std::vector<const ModuleInfo*> added = Refresh();
  if (discovered != nullptr) discovered->insert(discovered->end(), added.begin(), added.end());
  return FindKnown(pc);
}

}  // namespace gs
