// fake_python.h — hand-made objects with CPython's layout, for tests that need no interpreter.
#ifndef GPUSTALL_AGENT_PYTHON_TESTS_FAKE_PYTHON_H_
#define GPUSTALL_AGENT_PYTHON_TESTS_FAKE_PYTHON_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "agent/python/code_table.h"
#include "agent/python/python_layout.h"

namespace gs {

class FakeHeap {
 public:
  // Objects laid out like CPython 3.12's, with made-up type objects.
  FakeHeap() : layout_(*BuiltinPythonLayout(12)) {
    types_.code = Alloc(64);
    types_.bytes = Alloc(64);
    types_.unicode = Alloc(64);
  }
  FakeHeap(const PythonLayout& layout, const PyTypePointers& types)
      : layout_(layout), types_(types) {}
  const PythonLayout& layout() const { return layout_; }
  const PyTypePointers& types() const { return types_; }

  uintptr_t Str(const std::u32string& s) {
    bool ascii = true;
    uint32_t max = 0;
    for (char32_t c : s) {
      ascii &= c < 0x80;
      max = c > max ? c : max;
    }
    const int kind = max < 0x100 ? 1 : max < 0x10000 ? 2 : 4;
    const int header = ascii ? layout_.unicode_ascii_size : layout_.unicode_compact_size;
    const uintptr_t o = Alloc(header + (s.size() + 1) * kind);
    Put<uintptr_t>(o, layout_.object_type, types_.unicode);
    Put<int64_t>(o, layout_.unicode_length, static_cast<int64_t>(s.size()));
    Put<uint32_t>(o, layout_.unicode_state, (kind << 2) | (1 << 5) | (ascii ? 1 << 6 : 0));
    for (size_t i = 0; i < s.size(); ++i) {
      const uintptr_t at = o + header + i * kind;
      if (kind == 1) *reinterpret_cast<uint8_t*>(at) = static_cast<uint8_t>(s[i]);
      if (kind == 2) *reinterpret_cast<uint16_t*>(at) = static_cast<uint16_t>(s[i]);
      if (kind == 4) *reinterpret_cast<uint32_t*>(at) = static_cast<uint32_t>(s[i]);
    }
    return o;
  }

  uintptr_t Bytes(const std::vector<uint8_t>& b) {
    const uintptr_t o = Alloc(layout_.bytes_data + b.size() + 1);
    Put<uintptr_t>(o, layout_.object_type, types_.bytes);
    Put<int64_t>(o, layout_.var_size, static_cast<int64_t>(b.size()));
    if (!b.empty())
      std::memcpy(reinterpret_cast<void*>(o + layout_.bytes_data), b.data(), b.size());
    return o;
  }

  // A 3.11+ code object with `units` code units and _co_firsttraceable 0.
  uintptr_t Code(uintptr_t filename, uintptr_t qualname, uintptr_t linetable, int firstlineno,
                 int units = 8) {
    const uintptr_t o = Alloc(layout_.code_adaptive + 2 * units);
    Put<uintptr_t>(o, layout_.object_type, types_.code);
    Put<int64_t>(o, layout_.var_size, units);
    if (layout_.code_firsttraceable != kNoField) Put<int32_t>(o, layout_.code_firsttraceable, 0);
    Put<uintptr_t>(o, layout_.code_filename, filename);
    Put<uintptr_t>(o, layout_.code_name, qualname);
    Put<uintptr_t>(o, layout_.code_qualname, qualname);
    Put<uintptr_t>(o, layout_.code_linetable, linetable);
    Put<int32_t>(o, layout_.code_firstlineno, firstlineno);
    return o;
  }

  template <typename T>
  static void Put(uintptr_t base, int offset, T value) {
    std::memcpy(reinterpret_cast<void*>(base + offset), &value, sizeof value);
  }

  uintptr_t Alloc(size_t bytes) {
    blocks_.emplace_back(new uint64_t[(bytes + 7) / 8 + 1]());
    return reinterpret_cast<uintptr_t>(blocks_.back().get());
  }

 private:
  PythonLayout layout_;
  PyTypePointers types_;
  std::vector<std::unique_ptr<uint64_t[]>> blocks_;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_TESTS_FAKE_PYTHON_H_
