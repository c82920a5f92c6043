// dwarf_reader.h — a bounds-checked little-endian cursor over one DWARF section, and the span of
// bytes it reads: the line-table decoder (dwarf_lines.h) and the unit index (dwarf_units.h) read
// modules of the traced process with it, where a corrupt or hostile file must give fewer answers,
// never a fault.
#ifndef GPUSTALL_AGENT_SYMBOLIZE_DWARF_READER_H_
#define GPUSTALL_AGENT_SYMBOLIZE_DWARF_READER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gs {

// Bytes of a mapped section (data == nullptr: the module has none).
struct Span {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// After the first overrun every read returns 0 (CString: "") and ok() is false.
class DwarfReader {
 public:
  DwarfReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool ok() const { return ok_; }
  const uint8_t* position() const { return p_; }
  bool at_end() const { return p_ >= end_; }
  uint64_t Fixed(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) return Fail();
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p_[i]} << (8 * i);
    p_ += n;
    return v;
  }
  uint64_t Uleb() {
    uint64_t v = 0;
    for (int shift = 0; ok_; shift += 7) {
      if (p_ >= end_) return Fail();
      const uint8_t b = *p_++;
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) break;
    }
    return v;
  }
  int64_t Sleb() {
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
      if (!ok_ || p_ >= end_) return static_cast<int64_t>(Fail());
      b = *p_++;
      if (shift < 64) v |= static_cast<int64_t>(uint64_t{b & 0x7fu} << shift);
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(int64_t{1} << shift);
    return v;
  }
  const char* CString() {
    if (!ok_) return "";
    const void* nul = std::memchr(p_, 0, static_cast<size_t>(end_ - p_));
    if (nul == nullptr) {
      Fail();
      return "";
    }
    const char* s = reinterpret_cast<const char*>(p_);
    p_ = static_cast<const uint8_t*>(nul) + 1;
    return s;
  }
  void Skip(uint64_t n) {
    if (!ok_ || static_cast<uint64_t>(end_ - p_) < n) {
      Fail();
      return;
    }
    p_ += n;
  }
  // A unit (DWARF 5 §7.4): its initial length, 4 bytes, or 0xffffffff and 8 for 64-bit DWARF,
  // whose section offsets are then 8 bytes wide (*offset_size); then that many bytes. Returns a
  // reader over exactly those bytes and moves past them; when they run past the end, this reader
  // fails (!ok()) and so does the one returned.
  DwarfReader Unit(size_t* offset_size) {
    uint64_t length = Fixed(4);
    *offset_size = 4;
    if (length == 0xffffffffu) {
      length = Fixed(8);
      *offset_size = 8;
    }
    if (!ok_ || length > static_cast<uint64_t>(end_ - p_)) {
      Fail();
      DwarfReader failed(end_, end_);
      failed.ok_ = false;
      return failed;
    }
    DwarfReader body(p_, p_ + length);
    p_ += length;
    return body;
  }
  const uint8_t* end() const { return end_; }

 private:
  uint64_t Fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace gs

#endif  // GPUSTALL_AGENT_SYMBOLIZE_DWARF_READER_H_
