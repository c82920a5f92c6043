// module_map.h — the ELF modules mapped into this process, for attributing PCs (writer thread).
//
// Built from dl_iterate_phdr: path, NT_GNU_BUILD_ID, load bias, address range of the PT_LOAD
// segments. Lookup of a PC outside every known module rescans (a library dlopen'ed after the last
// scan); modules that disappear (dlclose) are kept while nothing new overlaps them, so PCs
// captured before the dlclose still resolve.
//
// Thread safety: none; writer thread only. dl_iterate_phdr takes the loader lock, so never call
// Refresh from the hot path or a signal handler.
#ifndef GPUSTALL_AGENT_SYMBOLIZE_MODULE_MAP_H_
#define GPUSTALL_AGENT_SYMBOLIZE_MODULE_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gs {

struct ModuleInfo {
  uint32_t id = 0;             // > 0, unique per (path, load address) for the life of the map
  std::string path;            // absolute file path ("/proc/self/exe" resolved for the program)
  std::string build_id;        // raw bytes of NT_GNU_BUILD_ID; empty if none
  uint64_t bias = 0;           // dlpi_addr: ELF virtual address + bias = runtime address
  uint64_t load_address = 0;   // runtime address of file offset 0 (trace Module.load_address)
  uint64_t start = 0;          // [start, end): runtime range of the PT_LOAD segments
  uint64_t end = 0;
  bool has_file = true;        // false for the vDSO and anonymous entries
};

class ModuleMap {
 public:
  // Rescans the loaded modules. Returns the modules that are new since the last call.
  std::vector<const ModuleInfo*> Refresh();

  // The module containing `pc`, or nullptr. Rescans once when `pc` is outside every known module
  // and the loader's module list changed since the last scan; newly found modules are appended
  // to *discovered (if non-null).
  const ModuleInfo* Find(uint64_t pc, std::vector<const ModuleInfo*>* discovered = nullptr);

  const ModuleInfo* FindKnown(uint64_t pc) const;
  size_t size() const { return modules_.size(); }

 private:
  std::vector<ModuleInfo*> modules_;  // sorted by start; owned (never freed while the map lives)
  uint32_t next_id_ = 1;
  unsigned long long last_adds_ = 0;
  unsigned long long last_subs_ = 0;
  bool scanned_ = false;
  std::string exe_path_;

 public:
  ~ModuleMap();
  ModuleMap() = default;
  ModuleMap(const ModuleMap&) = delete;
  ModuleMap& operator=(const ModuleMap&) = delete;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_MODULE_MAP_H_
