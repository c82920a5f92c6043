// code_table.h — code objects seen on the hot path, copied once into preallocated storage.
//
// A captured Python frame refers to its code object by a small id (the slot index + 1) instead
// of by pointer: code objects die and their addresses are reused, so what the writer thread
// needs (file name, qualified name, first line, line table) is copied the first time the hot
// path meets a code object, while the object is known to be alive (it is on the caller's stack).
//
// Identity: a slot matches a code object if the code pointer AND its co_filename, co_qualname
// and co_linetable pointers, co_firstlineno, the line table's length and a content fingerprint
// (length, first and last 8 bytes of the file name, the qualname and the line table) all
// match. Pointers alone are not enough: a loop exec()ing similar code gets new code, string and
// table objects at the very addresses of the dead ones (the torture test does exactly that).
// What could still collide: a same-length name or path differing only in its middle, at the
// same addresses, with a line table equal at both ends.
//
// Version index (3.12+, Intern's `by_version`): reading that identity is most of a capture's cost
// (three more objects per frame; BENCHMARKS.md, "Python frames by code version"). CPython 3.12 and
// 3.13 number every code object at creation (co_version, from a counter that only grows, and stops
// at 0 if it ever wraps: Objects/codeobject.c), so a code object's address and a nonzero version
// name that one object for the life of the process: a new object at a dead one's address has
// another version. A second table maps (address, version) to the id the full identity gave, and
// a hit reads one word of the code object. The counter is process-wide on 3.12 and per
// interpreter on 3.13, so there the caller asks for the index only while the main interpreter is
// the only one (python_stacks.cc). Statically allocated code objects (3.12's deep-frozen modules)
// carry build-time versions that a runtime object may repeat, but they never die, so no runtime
// object ever takes their address.
//
// Storage: a power-of-two array of slots (open addressing, bounded linear probe) and a byte
// arena, both mmap'ed by Init and never freed or evicted while the process runs. When full,
// Intern returns 0 and counts the loss ("losses are data"). In front of the slots, 4096 hints map a
// code pointer to the id it last interned as, so that the slot's loads need not wait for the
// identity's hash; the slot's full identity still decides.
//
// Thread safety: Intern may run concurrently on any threads (lock-free: a slot is claimed with a
// CAS and published with a release store; two threads meeting the same new code object may both
// copy it, into two slots). Lookup may run concurrently with Intern; it sees only published
// slots, which never change afterwards.
#ifndef GPUSTALL_AGENT_PYTHON_CODE_TABLE_H_
#define GPUSTALL_AGENT_PYTHON_CODE_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/python/python_layout.h"

namespace gs {

// Addresses of the interpreter's type objects, compared against ob_type (never dereferenced).
struct PyTypePointers {
  uintptr_t code = 0;
  uintptr_t bytes = 0;
  uintptr_t unicode = 0;
  uintptr_t none = 0;  // the None object (3.13 shim frames)
};

// What the writer thread gets back for an id. Pointers stay valid for the table's lifetime.
struct PythonCodeInfo {
  const char* filename = "";
  uint32_t filename_len = 0;
  const char* function = "";  // co_qualname (3.11+) or co_name, UTF-8
  uint32_t function_len = 0;
  const uint8_t* linetable = nullptr;  // copy of co_lnotab / co_linetable; nullptr if not copied
  uint32_t linetable_len = 0;
  int32_t firstlineno = 0;
  PyLineTableFormat format = PyLineTableFormat::kLnotab;
};

struct PythonCodeTableStats {
  uint64_t interned = 0;    // slots published
  uint64_t table_full = 0;  // Intern found no slot
  uint64_t arena_full = 0;  // strings/line table not copied (slot published without them)
  uint64_t unreadable = 0;  // identity fields failed validation
};

class PythonCodeTable {
 public:
  static constexpr uint32_t kMaxProbe = 32;
  static constexpr uint32_t kMaxLineTableBytes = 64 * 1024;
  static constexpr uint32_t kMaxStringChars = 4096;

  PythonCodeTable() = default;
  PythonCodeTable(const PythonCodeTable&) = delete;
  PythonCodeTable& operator=(const PythonCodeTable&) = delete;

  // Maps storage. `slots` is rounded up to a power of two. Not thread safe; call before use.
  bool Init(uint32_t slots, size_t arena_bytes, const PythonLayout& layout,
            const PyTypePointers& types);
  // Unmaps (tests only: the agent keeps the table for the life of the process).
  void Release();

  // HOT PATH, inside a FaultScope: `code` has already been checked to be a code object.
  // Returns the id (>= 1) or 0 if the code object could not be stored. `by_version`: the code
  // object's (address, co_version) may name it (see "Version index" above).
  uint32_t Intern(uintptr_t code, bool by_version = false);

  // Writer side. False for 0, out-of-range or unpublished ids.
  bool Lookup(uint32_t id, PythonCodeInfo* out) const;

  PythonCodeTableStats stats() const;

 private:
  struct Slot;
  struct VersionEntry;
  struct Identity {
    uintptr_t code, filename, name, linetable;
    uint64_t content;  // fingerprint of filename, qualname and line table contents
    uint32_t linetable_len;
    int32_t firstlineno;
  };

  static uint64_t MixFingerprint(uint64_t bytes, uint64_t first, uint64_t last);
  static uint64_t Fingerprint(uintptr_t data, uint64_t bytes);
  bool StringFingerprint(uintptr_t str, uint64_t* fp) const;
  bool ReadIdentity(uintptr_t code, Identity* id) const;
  void Fill(Slot* slot, const Identity& id);
  bool AllocArena(uint32_t size, uint32_t* offset);
  bool CopyUnicode(uintptr_t str, uint32_t* offset, uint32_t* len);
  uint32_t InternByIdentity(uintptr_t code);
  uint32_t ProbeOrInsert(const Identity& id);
  static bool Matches(const Slot& s, const Identity& id);
  static uint32_t HintIndex(uintptr_t code) {
    return static_cast<uint32_t>((code >> 4) ^ (code >> 16)) & (kHints - 1);
  }
  uint32_t FindByVersion(uintptr_t code, uint32_t version) const;
  void RememberVersion(uintptr_t code, uint32_t version, uint32_t id);

  PythonLayout layout_;
  PyTypePointers types_;
  Slot* slots_ = nullptr;
  VersionEntry* versions_ = nullptr;  // as many as slots_ (mask_ + 1)
  uint32_t mask_ = 0;
  char* arena_ = nullptr;
  size_t arena_size_ = 0;
  size_t slots_bytes_ = 0;
  size_t versions_bytes_ = 0;
  std::atomic<uint32_t> arena_used_{0};
  std::atomic<uint64_t> interned_{0}, table_full_{0}, arena_full_{0}, unreadable_{0};
  // Code pointer -> the id it last interned as (a guess that the slot's identity checks; 0: none).
  static constexpr uint32_t kHints = 4096;
  std::atomic<uint32_t> hints_[kHints] = {};
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_CODE_TABLE_H_
