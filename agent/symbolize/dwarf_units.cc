#include "agent/symbolize/dwarf_units.h"

#include <algorithm>

namespace gs {
namespace {

// DWARF 5 §7.5.1 (unit types), §7.5.4 (attributes), §7.5.6 (forms); the GNU forms from GCC's
// dwarf2.def, which emits them for split DWARF and dwz.
enum : uint8_t { kUtCompile = 1, kUtType = 2, kUtPartial = 3, kUtSkeleton = 4, kUtSplitCompile = 5, kUtSplitType = 6 };
enum : uint64_t { kAtStmtList = 0x10 };
enum : uint64_t {
  kFormAddr = 0x01, kFormBlock2 = 0x03, kFormBlock4 = 0x04, kFormData2 = 0x05, kFormData4 = 0x06,
  kFormData8 = 0x07, kFormString = 0x08, kFormBlock = 0x09, kFormBlock1 = 0x0a, kFormData1 = 0x0b,
  kFormFlag = 0x0c, kFormSdata = 0x0d, kFormStrp = 0x0e, kFormUdata = 0x0f, kFormRefAddr = 0x10,
  kFormRef1 = 0x11, kFormRef2 = 0x12, kFormRef4 = 0x13, kFormRef8 = 0x14, kFormRefUdata = 0x15,
  kFormIndirect = 0x16, kFormSecOffset = 0x17, kFormExprloc = 0x18, kFormFlagPresent = 0x19,
  kFormStrx = 0x1a, kFormAddrx = 0x1b, kFormRefSup4 = 0x1c, kFormStrpSup = 0x1d, kFormData16 = 0x1e,
  kFormLineStrp = 0x1f, kFormRefSig8 = 0x20, kFormImplicitConst = 0x21, kFormLoclistx = 0x22,
  kFormRnglistx = 0x23, kFormRefSup8 = 0x24, kFormStrx1 = 0x25, kFormStrx2 = 0x26, kFormStrx3 = 0x27,
  kFormStrx4 = 0x28, kFormAddrx1 = 0x29, kFormAddrx2 = 0x2a, kFormAddrx3 = 0x2b, kFormAddrx4 = 0x2c,
  kFormGnuAddrIndex = 0x1f01, kFormGnuStrIndex = 0x1f02, kFormGnuRefAlt = 0x1f20, kFormGnuStrpAlt = 0x1f21,
};

// Steps over one attribute value; false for a form it does not know (the entry cannot be read on).
bool SkipForm(DwarfReader& r, uint64_t form, size_t offset_size, size_t address_size, uint32_t version) {
  for (int indirections = 0; indirections < 4; ++indirections) {
    switch (form) {
      case kFormFlagPresent: case kFormImplicitConst: return true;
      case kFormData1: case kFormRef1: case kFormFlag: case kFormStrx1: case kFormAddrx1: r.Skip(1); return true;
      case kFormData2: case kFormRef2: case kFormStrx2: case kFormAddrx2: r.Skip(2); return true;
      case kFormStrx3: case kFormAddrx3: r.Skip(3); return true;
      case kFormData4: case kFormRef4: case kFormRefSup4: case kFormStrx4: case kFormAddrx4: r.Skip(4); return true;
      case kFormData8: case kFormRef8: case kFormRefSig8: case kFormRefSup8: r.Skip(8); return true;
      case kFormData16: r.Skip(16); return true;
      case kFormAddr: r.Skip(address_size); return true;
      // DWARF 2 wrote DW_FORM_ref_addr at the address's size, later versions at the offset's.
      case kFormRefAddr: r.Skip(version <= 2 ? address_size : offset_size); return true;
      case kFormStrp: case kFormLineStrp: case kFormSecOffset: case kFormStrpSup: case kFormGnuRefAlt:
      case kFormGnuStrpAlt: r.Skip(offset_size); return true;
      case kFormSdata: r.Sleb(); return true;
      case kFormUdata: case kFormRefUdata: case kFormStrx: case kFormAddrx: case kFormLoclistx:
      case kFormRnglistx: case kFormGnuAddrIndex: case kFormGnuStrIndex: r.Uleb(); return true;
      case kFormString: r.CString(); return true;
      case kFormBlock1: r.Skip(r.Fixed(1)); return true;
      case kFormBlock2: r.Skip(r.Fixed(2)); return true;
      case kFormBlock4: r.Skip(r.Fixed(4)); return true;
      case kFormBlock: case kFormExprloc: r.Skip(r.Uleb()); return true;
      case kFormIndirect: form = r.Uleb(); break;  // the form is in the entry, then its value
      default: return false;
    }
  }
  return false;
}

// The DW_AT_stmt_list of the unit at `unit_offset` in .debug_info: its first entry (the unit's
// own) read through its abbreviation.
std::optional<uint64_t> LineOffsetOfUnit(Span info, Span abbrev, uint64_t unit_offset) {
  if (unit_offset >= info.size) return std::nullopt;
  DwarfReader head(info.data + unit_offset, info.data + info.size);
  size_t offset_size = 4;
  DwarfReader u = head.Unit(&offset_size);
  if (!head.ok()) return std::nullopt;
  const uint32_t version = static_cast<uint32_t>(u.Fixed(2));
  uint64_t abbrev_offset = 0;
  size_t address_size = 8;
  if (version == 5) {
    const uint8_t unit_type = static_cast<uint8_t>(u.Fixed(1));
    address_size = u.Fixed(1);
    abbrev_offset = u.Fixed(offset_size);
    if (unit_type == kUtSkeleton || unit_type == kUtSplitCompile) {
      u.Skip(8);  // dwo_id
    } else if (unit_type != kUtCompile && unit_type != kUtPartial) {
      return std::nullopt;  // type units (kUtType, kUtSplitType) hold no code
    }
  } else if (version >= 2 && version <= 4) {
    abbrev_offset = u.Fixed(offset_size);
    address_size = u.Fixed(1);
  } else {
    return std::nullopt;
  }
  const uint64_t code = u.Uleb();
  if (!u.ok() || code == 0 || abbrev_offset >= abbrev.size) return std::nullopt;

  // The abbreviation: code, tag, children flag, then (attribute, form[, implicit value]) pairs
  // up to (0, 0).
  DwarfReader a(abbrev.data + abbrev_offset, abbrev.data + abbrev.size);
  while (true) {
    const uint64_t c = a.Uleb();
    if (!a.ok() || c == 0) return std::nullopt;
    a.Uleb();     // tag
    a.Fixed(1);   // has children
    if (c == code) break;
    while (a.ok()) {
      const uint64_t attribute = a.Uleb();
      const uint64_t form = a.Uleb();
      if (form == kFormImplicitConst) a.Sleb();
      if (attribute == 0 && form == 0) break;
    }
  }
  while (a.ok() && u.ok()) {
    const uint64_t attribute = a.Uleb();
    const uint64_t form = a.Uleb();
    if (form == kFormImplicitConst) a.Sleb();
    if (attribute == 0 && form == 0) return std::nullopt;
    if (attribute == kAtStmtList) {
      uint64_t offset = 0;
      if (form == kFormSecOffset) {
        offset = u.Fixed(offset_size);
      } else if (form == kFormData4) {
        offset = u.Fixed(4);
      } else if (form == kFormData8) {
        offset = u.Fixed(8);
      } else {
        return std::nullopt;
      }
      return u.ok() ? std::optional<uint64_t>(offset) : std::nullopt;
    }
    if (!SkipForm(u, form, offset_size, address_size, version)) return std::nullopt;
  }
  return std::nullopt;
}

// Whether every compilation unit of .debug_info (DWARF 2-4 units, DWARF 5 DW_UT_compile) is in
// `indexed` (sorted offsets). Walks the unit headers only.
bool EveryCompileUnitIn(Span info, const std::vector<uint64_t>& indexed) {
  const uint8_t* cursor = info.data;
  const uint8_t* const end = info.data + info.size;
  while (cursor < end) {
    const uint64_t offset = static_cast<uint64_t>(cursor - info.data);
    DwarfReader head(cursor, end);
    size_t offset_size = 4;
    DwarfReader unit = head.Unit(&offset_size);
    if (!head.ok()) return false;
    cursor = head.position();
    const uint32_t version = static_cast<uint32_t>(unit.Fixed(2));
    const bool compile_unit = (version >= 2 && version <= 4) || (version == 5 && unit.Fixed(1) == kUtCompile);
    if (compile_unit && !std::binary_search(indexed.begin(), indexed.end(), offset)) return false;
  }
  return true;
}

}  // namespace

bool DwarfLineUnitIndex::Build(Span aranges, Span info, Span abbrev) {
  ranges_.clear();
  if (aranges.data == nullptr || info.data == nullptr || abbrev.data == nullptr) return false;
  std::vector<uint64_t> indexed_units;  // .debug_info offsets of the units whose ranges were read
  const uint8_t* cursor = aranges.data;
  const uint8_t* const end = aranges.data + aranges.size;
  // A set per compilation unit (DWARF 5 §6.1.2): its header, then (address, length) tuples up to
  // (0, 0), the first tuple at a multiple of its size from the set's start.
  while (cursor < end) {
    const uint8_t* const set_start = cursor;
    DwarfReader head(cursor, end);
    size_t offset_size = 4;
    DwarfReader r = head.Unit(&offset_size);
    if (!head.ok()) break;
    cursor = head.position();  // whatever happens inside, the next set starts there
    const uint32_t version = static_cast<uint32_t>(r.Fixed(2));
    const uint64_t unit_offset = r.Fixed(offset_size);
    const size_t address_size = r.Fixed(1);
    const size_t segment_size = r.Fixed(1);
    if (!r.ok() || version != 2 || (address_size != 4 && address_size != 8) || segment_size != 0) continue;
    const size_t tuple = 2 * address_size;
    const size_t header = static_cast<size_t>(r.position() - set_start);
    r.Skip((tuple - header % tuple) % tuple);
    const std::optional<uint64_t> line_offset = LineOffsetOfUnit(info, abbrev, unit_offset);
    if (!line_offset.has_value()) continue;
    indexed_units.push_back(unit_offset);
    while (r.ok()) {
      const uint64_t start = r.Fixed(address_size);
      const uint64_t size = r.Fixed(address_size);
      if (!r.ok() || (start == 0 && size == 0)) break;
      if (start == 0 || size == 0) continue;
      ranges_.push_back(Range{start, start + std::min(size, UINT64_MAX - start), *line_offset, 0});
    }
  }
  // A compilation unit that the index does not know (no set of its own: clang's objects, an
  // assembler's; or one whose entry could not be read) may hold code with lines: then the index
  // would lose them, and the caller decodes the whole table instead, as it did before.
  std::sort(indexed_units.begin(), indexed_units.end());
  if (!EveryCompileUnitIn(info, indexed_units)) {
    ranges_.clear();
    return false;
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  uint64_t reach = 0;
  for (Range& r : ranges_) reach = r.reach = std::max(reach, r.end);
  return !ranges_.empty();
}

std::optional<uint64_t> DwarfLineUnitIndex::LineUnitFor(uint64_t address) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t a, const Range& r) { return a < r.start; });
  // The last range that starts at or before `address`, or an earlier one that reaches past it
  // (ranges of two units may nest or overlap).
  while (it != ranges_.begin()) {
    --it;
    if (address < it->end) return it->line_offset;
    if (it->reach <= address) break;
  }
  return std::nullopt;
}

}  // namespace gs
