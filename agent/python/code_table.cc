// code_table.cc — see code_table.h.
#include "agent/python/code_table.h"

#include <sys/mman.h>

#include <cstring>

#include "agent/python/raw_memory.h"

namespace gs {

enum SlotState : uint32_t { kEmpty = 0, kFilling = 1, kReady = 2 };

struct PythonCodeTable::Slot {
  std::atomic<uint32_t> state;
  int32_t firstlineno;
  uintptr_t code, filename_obj, name_obj, linetable_obj;
  uint64_t content;               // Identity::content
  uint32_t linetable_len;         // length of the interpreter's table (identity)
  uint32_t copied_linetable_len;  // 0 if not copied
  uint32_t linetable_off, filename_off, filename_len, function_off, function_len;
};

// (address, co_version) -> id: published like a slot (claimed with a CAS, then kReady).
struct PythonCodeTable::VersionEntry {
  std::atomic<uint32_t> state;
  uint32_t version;
  uintptr_t code;
  uint32_t id;
};

namespace {

// MurmurHash3's 64-bit finalizer: object addresses share their low bits and cluster in
// arenas; every output bit must depend on all of them for short linear probes.
uint64_t Mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

uint32_t HashPointer(uintptr_t p) { return static_cast<uint32_t>(Mix64(p)); }

// Where (address, co_version) starts its probe in the version index: the version rotated into
// the address's high bits, which object addresses leave zero.
uint32_t HashVersion(uintptr_t code, uint32_t version) {
  return HashPointer(code ^ (uint64_t{version} << 47 | uint64_t{version} >> 17));
}

uint64_t Rotl(uint64_t v, int s) { return (v << s) | (v >> (64 - s)); }

void* MapZeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// UTF-8 encoding of one code point; lone surrogates (not encodable) become '?'.
int EncodeUtf8(uint32_t c, char* out) {
  if (c < 0x80) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) {
    out[0] = '?';
    return 1;
  }
  if (c < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (c >> 18));
  out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (c & 0x3F));
  return 4;
}

uint32_t CodePointAt(uintptr_t data, int kind, int64_t i) {
  switch (kind) {
    case 1:
      return LoadAt<uint8_t>(data, static_cast<int>(i));
    case 2:
      return LoadAt<uint16_t>(data, static_cast<int>(i * 2));
    default:
      return LoadAt<uint32_t>(data, static_cast<int>(i * 4));
  }
}

}  // namespace

// Cheap on purpose (it runs for every frame of every capture): rotations and one multiply.
// It only has to tell apart objects that already share their addresses and lengths.
uint64_t PythonCodeTable::MixFingerprint(uint64_t bytes, uint64_t first, uint64_t last) {
  return first ^ Rotl(last, 29) ^ (bytes * 0x9E3779B97F4A7C15ull);
}

bool PythonCodeTable::Init(uint32_t slots, size_t arena_bytes, const PythonLayout& layout,
                           const PyTypePointers& types) {
  uint32_t n = 16;
  while (n < slots && n < (1u << 24)) n <<= 1;
  slots_bytes_ = sizeof(Slot) * n;
  versions_bytes_ = sizeof(VersionEntry) * n;
  if (arena_bytes > (size_t{1} << 31)) arena_bytes = size_t{1} << 31;
  void* s = MapZeroed(slots_bytes_);
  void* v = MapZeroed(versions_bytes_);
  void* a = MapZeroed(arena_bytes);
  if (s == nullptr || v == nullptr || a == nullptr) {
    if (s) munmap(s, slots_bytes_);
    if (v) munmap(v, versions_bytes_);
    if (a) munmap(a, arena_bytes);
    return false;
  }
  // Zeroed memory is a valid array of empty slots (state kEmpty == 0, atomics lock-free).
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "lock-free state word");
  slots_ = static_cast<Slot*>(s);
  versions_ = static_cast<VersionEntry*>(v);
  mask_ = n - 1;
  arena_ = static_cast<char*>(a);
  arena_size_ = arena_bytes;
  arena_used_.store(0, std::memory_order_relaxed);
  for (std::atomic<uint32_t>& hint : hints_) hint.store(0, std::memory_order_relaxed);
  layout_ = layout;
  types_ = types;
  return true;
}

void PythonCodeTable::Release() {
  if (slots_ != nullptr) munmap(slots_, slots_bytes_);
  if (versions_ != nullptr) munmap(versions_, versions_bytes_);
  if (arena_ != nullptr) munmap(arena_, arena_size_);
  slots_ = nullptr;
  versions_ = nullptr;
  arena_ = nullptr;
}

// Length, first and last 8 bytes of a byte range: the whole content for short ranges (names),
// the ends for long ones (paths differ at the end, line tables at both).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "Fingerprint's shifts read words little-endian");

uint64_t PythonCodeTable::Fingerprint(uintptr_t data, uint64_t bytes) {
  // On every lookup (the hot path), so whole-word loads only: a short range's bytes are read as the
  // word that ends with them and shifted down, which gives the value a zero-padded copy would (the
  // word's other bytes lie before `data`, inside the object's header: every caller's range starts
  // at least 8 bytes into its object). A byte-by-byte copy of names under 16 characters was a
  // capture's largest item (BENCHMARKS.md, "Python frames on 3.9–3.11").
  uint64_t first = 0, last = 0;
  if (bytes >= 8) {
    first = LoadAt<uint64_t>(data, 0);
  } else if (bytes > 0) {
    first = LoadAt<uint64_t>(data + bytes - 8, 0) >> (8 * (8 - bytes));
  }
  if (bytes >= 16) {
    last = LoadAt<uint64_t>(data + bytes - 8, 0);
  } else if (bytes > 8) {
    last = LoadAt<uint64_t>(data + bytes - 8, 0) >> (8 * (16 - bytes));
  }
  return MixFingerprint(bytes, first, last);
}

// Fingerprint of a str object's characters (raw, in its own kind), or false if it is not a
// readable compact str.
bool PythonCodeTable::StringFingerprint(uintptr_t str, uint64_t* fp) const {
  const PythonLayout& l = layout_;
  if (LoadAt<uintptr_t>(str, l.object_type) != types_.unicode) return false;
  const int64_t length = LoadAt<int64_t>(str, l.unicode_length);
  if (length < 0 || length > kMaxStringChars) return false;
  const uint32_t state = LoadAt<uint32_t>(str, l.unicode_state);
  const int kind = (state >> 2) & 7;
  if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4)) return false;
  const uintptr_t data = str + (((state >> 6) & 1) ? l.unicode_ascii_size : l.unicode_compact_size);
  *fp = Fingerprint(data, static_cast<uint64_t>(length) * kind) ^ static_cast<uint64_t>(kind);
  return true;
}

// Reads what identifies a code object's content. The pointers alone are not enough: a loop
// that exec()s and drops similar code gets new code, name and table objects at the very
// addresses of the dead ones; the content fingerprint tells them apart.
bool PythonCodeTable::ReadIdentity(uintptr_t code, Identity* id) const {
  const PythonLayout& l = layout_;
  id->code = code;
  id->filename = LoadAt<uintptr_t>(code, l.code_filename);
  id->name = LoadAt<uintptr_t>(code, l.code_qualname);
  id->linetable = LoadAt<uintptr_t>(code, l.code_linetable);
  id->firstlineno = LoadAt<int32_t>(code, l.code_firstlineno);
  id->content = 0;
  id->linetable_len = 0;
  if (!PlausibleObject(id->filename) || !PlausibleObject(id->name) ||
      !PlausibleObject(id->linetable)) {
    return false;
  }
  if (LoadAt<uintptr_t>(id->linetable, l.object_type) != types_.bytes) return false;
  const int64_t len = LoadAt<int64_t>(id->linetable, l.var_size);
  if (len < 0 || len > (int64_t{1} << 30)) return false;
  id->linetable_len = static_cast<uint32_t>(len);
  uint64_t file_fp = 0, name_fp = 0;
  if (!StringFingerprint(id->filename, &file_fp) || !StringFingerprint(id->name, &name_fp)) {
    return false;
  }
  id->content = Fingerprint(id->linetable + l.bytes_data, static_cast<uint64_t>(len)) ^
                Rotl(file_fp, 21) ^ Rotl(name_fp, 42);
  return true;
}

uint32_t PythonCodeTable::FindByVersion(uintptr_t code, uint32_t version) const {
  const uint32_t h = HashVersion(code, version);
  for (uint32_t i = 0; i < kMaxProbe; ++i) {
    const VersionEntry& e = versions_[(h + i) & mask_];
    const uint32_t state = e.state.load(std::memory_order_acquire);
    if (state == kEmpty) return 0;
    if (state == kReady && e.code == code && e.version == version) return e.id;
  }
  return 0;
}

void PythonCodeTable::RememberVersion(uintptr_t code, uint32_t version, uint32_t id) {
  const uint32_t h = HashVersion(code, version);
  for (uint32_t i = 0; i < kMaxProbe; ++i) {
    VersionEntry& e = versions_[(h + i) & mask_];
    uint32_t state = e.state.load(std::memory_order_acquire);
    if (state == kReady && e.code == code && e.version == version) return;  // another thread's
    if (state == kEmpty && e.state.compare_exchange_strong(state, kFilling, std::memory_order_acquire)) {
      e.code = code;
      e.version = version;
      e.id = id;
      e.state.store(kReady, std::memory_order_release);
      return;
    }
  }
  // Full along this probe: the object keeps taking the full path, as before the index.
}

uint32_t PythonCodeTable::Intern(uintptr_t code, bool by_version) {
  uint32_t version = 0;
  if (by_version && layout_.code_version != kNoField) {
    version = LoadAt<uint32_t>(code, layout_.code_version);
    if (version != 0) {
      if (const uint32_t known = FindByVersion(code, version); known != 0) return known;
    }
  }
  const uint32_t found = InternByIdentity(code);
  if (version != 0 && found != 0) RememberVersion(code, version, found);
  return found;
}

bool PythonCodeTable::Matches(const Slot& s, const Identity& id) {
  return s.code == id.code && s.filename_obj == id.filename && s.name_obj == id.name &&
         s.linetable_obj == id.linetable && s.firstlineno == id.firstlineno &&
         s.linetable_len == id.linetable_len && s.content == id.content;
}

uint32_t PythonCodeTable::InternByIdentity(uintptr_t code) {
  // The hint's slot is found from the code pointer alone, so its loads overlap the identity's
  // instead of waiting for the identity's hash (the probe's first load was the capture's
  // slowest instruction). A hint is only a guess: the published slot's identity decides.
  const uint32_t hint = hints_[HintIndex(code)].load(std::memory_order_relaxed);
  Identity id;
  if (!ReadIdentity(code, &id)) {
    unreadable_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  if (hint != 0) {
    const Slot& s = slots_[(hint - 1) & mask_];
    if (s.state.load(std::memory_order_acquire) == kReady && Matches(s, id)) return hint;
  }
  const uint32_t found = ProbeOrInsert(id);
  // Written only when it changes: every thread reads the hints, and a store on each capture
  // would bounce their cache lines between the threads' cores.
  if (found != 0 && found != hint) hints_[HintIndex(code)].store(found, std::memory_order_relaxed);
  return found;
}

uint32_t PythonCodeTable::ProbeOrInsert(const Identity& id) {
  // Hash the whole identity, not just the address: allocators hand the same address to one
  // short-lived code object after another (exec in a loop), and a pointer-only hash would pile
  // all of them, dead ones included, into one probe sequence.
  const uint32_t h = HashPointer(id.code ^ (id.name * 3) ^ (id.filename * 5) ^ (id.linetable * 7) ^
                                 id.content ^ static_cast<uint32_t>(id.firstlineno));
  for (uint32_t i = 0; i < kMaxProbe; ++i) {
    const uint32_t index = (h + i) & mask_;
    Slot& s = slots_[index];
    uint32_t state = s.state.load(std::memory_order_acquire);
    if (state == kReady) {
      if (Matches(s, id)) return index + 1;
      continue;
    }
    if (state == kEmpty &&
        s.state.compare_exchange_strong(state, kFilling, std::memory_order_acquire)) {
      // If a read below faults, the slot stays kFilling forever: skipped by everyone, one slot
      // lost. That needs a code object that was valid a moment ago to vanish mid-copy.
      Fill(&s, id);
      s.state.store(kReady, std::memory_order_release);
      interned_.fetch_add(1, std::memory_order_relaxed);
      return index + 1;
    }
    // kFilling (another thread copying, perhaps this very object) or lost the race: move on.
  }
  table_full_.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

void PythonCodeTable::Fill(Slot* s, const Identity& id) {
  s->code = id.code;
  s->filename_obj = id.filename;
  s->name_obj = id.name;
  s->linetable_obj = id.linetable;
  s->firstlineno = id.firstlineno;
  s->linetable_len = id.linetable_len;
  s->content = id.content;
  s->copied_linetable_len = 0;
  s->filename_len = 0;
  s->function_len = 0;
  s->filename_off = s->function_off = s->linetable_off = 0;
  bool lost = false;
  if (!CopyUnicode(id.filename, &s->filename_off, &s->filename_len)) lost = true;
  if (!CopyUnicode(id.name, &s->function_off, &s->function_len)) lost = true;
  if (id.linetable_len > 0 && id.linetable_len <= kMaxLineTableBytes) {
    if (AllocArena(id.linetable_len, &s->linetable_off)) {
      CopyFrom(arena_ + s->linetable_off, id.linetable + layout_.bytes_data, id.linetable_len);
      s->copied_linetable_len = id.linetable_len;
    } else {
      lost = true;
    }
  }
  if (lost) arena_full_.fetch_add(1, std::memory_order_relaxed);
}

bool PythonCodeTable::AllocArena(uint32_t size, uint32_t* offset) {
  uint32_t used = arena_used_.load(std::memory_order_relaxed);
  do {
    if (static_cast<size_t>(used) + size > arena_size_) return false;
  } while (!arena_used_.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
  *offset = used;
  return true;
}

// Copies a compact str object as UTF-8. False (nothing copied) for anything else: non-str,
// legacy non-compact strings, over-long strings, or no arena space.
bool PythonCodeTable::CopyUnicode(uintptr_t str, uint32_t* offset, uint32_t* len) {
  const PythonLayout& l = layout_;
  if (LoadAt<uintptr_t>(str, l.object_type) != types_.unicode) return false;
  const int64_t length = LoadAt<int64_t>(str, l.unicode_length);
  if (length < 0 || length > kMaxStringChars) return false;
  const uint32_t state = LoadAt<uint32_t>(str, l.unicode_state);
  const int kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1;
  const bool ascii = (state >> 6) & 1;
  if (!compact) return false;
  if (ascii) {
    if (!AllocArena(static_cast<uint32_t>(length), offset)) return false;
    CopyFrom(arena_ + *offset, str + l.unicode_ascii_size, static_cast<size_t>(length));
    *len = static_cast<uint32_t>(length);
    return true;
  }
  if (kind != 1 && kind != 2 && kind != 4) return false;
  const uintptr_t data = str + l.unicode_compact_size;
  char scratch[4];
  uint32_t bytes = 0;
  for (int64_t i = 0; i < length; ++i) bytes += EncodeUtf8(CodePointAt(data, kind, i), scratch);
  if (!AllocArena(bytes, offset)) return false;
  char* out = arena_ + *offset;
  for (int64_t i = 0; i < length; ++i) out += EncodeUtf8(CodePointAt(data, kind, i), out);
  *len = bytes;
  return true;
}

bool PythonCodeTable::Lookup(uint32_t id, PythonCodeInfo* out) const {
  if (id == 0 || slots_ == nullptr || id - 1 > mask_) return false;
  const Slot& s = slots_[id - 1];
  if (s.state.load(std::memory_order_acquire) != kReady) return false;
  out->filename = arena_ + s.filename_off;
  out->filename_len = s.filename_len;
  out->function = arena_ + s.function_off;
  out->function_len = s.function_len;
  // An empty table is a complete copy too (3.9 single-line code: the line is co_firstlineno).
  const bool copied = s.copied_linetable_len == s.linetable_len;
  out->linetable = copied ? reinterpret_cast<const uint8_t*>(arena_ + s.linetable_off) : nullptr;
  out->linetable_len = copied ? s.linetable_len : 0;
  out->firstlineno = s.firstlineno;
  out->format = layout_.line_format;
  return true;
}

PythonCodeTableStats PythonCodeTable::stats() const {
  PythonCodeTableStats st;
  st.interned = interned_.load(std::memory_order_relaxed);
  st.table_full = table_full_.load(std::memory_order_relaxed);
  st.arena_full = arena_full_.load(std::memory_order_relaxed);
  st.unreadable = unreadable_.load(std::memory_order_relaxed);
  return st;
}

}  // namespace gs
