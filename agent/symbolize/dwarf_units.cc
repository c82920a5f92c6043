#include "agent/symbolize/dwarf_units.h"

#include <algorithm>
#include <utility>

namespace gs {
namespace {

// DWARF 5 §7.5.1 (unit types), §7.5.4 (attributes), §7.5.6 (forms); the GNU forms from GCC's
// dwarf2.def, which emits them for split DWARF and dwz.
enum : uint8_t { kUtCompile = 1, kUtType = 2, kUtPartial = 3, kUtSkeleton = 4, kUtSplitCompile = 5, kUtSplitType = 6 };
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

// A compilation unit's own entry (its first in .debug_info): what locates its line program and
// its code. An attribute's value as written: an address, an index into .debug_addr or into the
// unit's range-list offsets, a section offset, or a constant.
struct UnitEntry {
  enum class Kind : uint8_t { kNone, kAddress, kIndex, kOffset, kConstant };
  struct Value {
    Kind kind = Kind::kNone;
    uint64_t value = 0;
  };
  uint32_t version = 0;
  size_t offset_size = 4, address_size = 8;
  Value stmt_list, low_pc, high_pc, ranges, addr_base, rnglists_base;
};

enum : uint64_t {
  kAtStmtList = 0x10, kAtLowPc = 0x11, kAtHighPc = 0x12, kAtRanges = 0x55, kAtAddrBase = 0x73,
  kAtRnglistsBase = 0x74,
};

// Reads one attribute value of a form that names an address, an index, an offset or a constant;
// false for any other form, which none of the attributes read here takes in a valid unit.
bool ReadValue(DwarfReader& r, uint64_t form, int64_t implicit, const UnitEntry& e, UnitEntry::Value* v) {
  using Kind = UnitEntry::Kind;
  switch (form) {
    case kFormAddr: *v = {Kind::kAddress, r.Fixed(e.address_size)}; return true;
    case kFormAddrx: case kFormGnuAddrIndex: case kFormRnglistx: *v = {Kind::kIndex, r.Uleb()}; return true;
    case kFormAddrx1: *v = {Kind::kIndex, r.Fixed(1)}; return true;
    case kFormAddrx2: *v = {Kind::kIndex, r.Fixed(2)}; return true;
    case kFormAddrx3: *v = {Kind::kIndex, r.Fixed(3)}; return true;
    case kFormAddrx4: *v = {Kind::kIndex, r.Fixed(4)}; return true;
    case kFormSecOffset: *v = {Kind::kOffset, r.Fixed(e.offset_size)}; return true;
    case kFormData1: *v = {Kind::kConstant, r.Fixed(1)}; return true;
    case kFormData2: *v = {Kind::kConstant, r.Fixed(2)}; return true;
    case kFormData4: *v = {Kind::kConstant, r.Fixed(4)}; return true;
    case kFormData8: *v = {Kind::kConstant, r.Fixed(8)}; return true;
    case kFormUdata: *v = {Kind::kConstant, r.Uleb()}; return true;
    case kFormSdata: *v = {Kind::kConstant, static_cast<uint64_t>(r.Sleb())}; return true;
    case kFormImplicitConst: *v = {Kind::kConstant, static_cast<uint64_t>(implicit)}; return true;
    default: return false;
  }
}

// The entry of the unit at `unit_offset` in .debug_info, read through its abbreviation; false
// when it cannot be read (or the unit is a type unit, which holds no code).
bool ReadUnitEntry(Span info, Span abbrev, uint64_t unit_offset, UnitEntry* e) {
  if (unit_offset >= info.size) return false;
  DwarfReader head(info.data + unit_offset, info.data + info.size);
  DwarfReader u = head.Unit(&e->offset_size);
  if (!head.ok()) return false;
  e->version = static_cast<uint32_t>(u.Fixed(2));
  uint64_t abbrev_offset = 0;
  if (e->version == 5) {
    const uint8_t unit_type = static_cast<uint8_t>(u.Fixed(1));
    e->address_size = u.Fixed(1);
    abbrev_offset = u.Fixed(e->offset_size);
    if (unit_type == kUtSkeleton || unit_type == kUtSplitCompile) {
      u.Skip(8);  // dwo_id
    } else if (unit_type != kUtCompile && unit_type != kUtPartial) {
      return false;  // type units (kUtType, kUtSplitType) hold no code
    }
  } else if (e->version >= 2 && e->version <= 4) {
    abbrev_offset = u.Fixed(e->offset_size);
    e->address_size = u.Fixed(1);
  } else {
    return false;
  }
  const uint64_t code = u.Uleb();
  if (!u.ok() || code == 0 || abbrev_offset >= abbrev.size || (e->address_size != 4 && e->address_size != 8))
    return false;

  // The abbreviation: code, tag, children flag, then (attribute, form[, implicit value]) pairs
  // up to (0, 0).
  DwarfReader a(abbrev.data + abbrev_offset, abbrev.data + abbrev.size);
  while (true) {
    const uint64_t c = a.Uleb();
    if (!a.ok() || c == 0) return false;
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
    const int64_t implicit = form == kFormImplicitConst ? a.Sleb() : 0;
    if (attribute == 0 && form == 0) return a.ok() && u.ok();
    UnitEntry::Value* target = attribute == kAtStmtList        ? &e->stmt_list
                               : attribute == kAtLowPc         ? &e->low_pc
                               : attribute == kAtHighPc        ? &e->high_pc
                               : attribute == kAtRanges        ? &e->ranges
                               : attribute == kAtAddrBase      ? &e->addr_base
                               : attribute == kAtRnglistsBase  ? &e->rnglists_base
                                                               : nullptr;
    if (target != nullptr) {
      if (!ReadValue(u, form, implicit, *e, target)) return false;  // a form these never take
    } else if (!SkipForm(u, form, e->offset_size, e->address_size, e->version)) {
      return false;
    }
  }
  return false;
}

// A line program's offset in .debug_line: DW_FORM_sec_offset, or a constant before DWARF 4.
std::optional<uint64_t> LineOffset(const UnitEntry& e) {
  if (e.stmt_list.kind != UnitEntry::Kind::kOffset && e.stmt_list.kind != UnitEntry::Kind::kConstant)
    return std::nullopt;
  return e.stmt_list.value;
}

// Reads a unit's address ranges from its entry into `out` as (start, end) pairs; false when it
// has some that cannot be read. A unit with neither DW_AT_ranges nor DW_AT_high_pc has no code.
bool EntryRanges(const UnitEntry& e, const DwarfUnitSections& s, std::vector<std::pair<uint64_t, uint64_t>>* out) {
  using Kind = UnitEntry::Kind;
  // An address from .debug_addr: the unit's table starts at DW_AT_addr_base (DWARF 5 §7.27).
  auto indexed_address = [&](uint64_t index, uint64_t* address) {
    if (e.addr_base.kind != Kind::kOffset || s.addr.data == nullptr || e.addr_base.value > s.addr.size ||
        index > (s.addr.size - e.addr_base.value) / e.address_size)
      return false;
    DwarfReader r(s.addr.data + e.addr_base.value, s.addr.data + s.addr.size);
    r.Skip(index * e.address_size);
    *address = r.Fixed(e.address_size);
    return r.ok();
  };
  auto address_of = [&](const UnitEntry::Value& v, uint64_t* address) {
    if (v.kind == Kind::kAddress) {
      *address = v.value;
      return true;
    }
    return v.kind == Kind::kIndex && indexed_address(v.value, address);
  };
  // The unit's base address for its range lists: DW_AT_low_pc (0 when absent, §3.1.1).
  uint64_t base = 0;
  if (e.low_pc.kind != Kind::kNone && !address_of(e.low_pc, &base)) return false;
  if (e.ranges.kind == Kind::kNone) {
    if (e.high_pc.kind == Kind::kNone) return true;  // no code
    uint64_t high = 0;
    if (e.low_pc.kind == Kind::kNone) return false;
    if (e.high_pc.kind == Kind::kConstant) {
      high = base + e.high_pc.value;  // a length since DWARF 4
    } else if (!address_of(e.high_pc, &high)) {
      return false;
    }
    out->emplace_back(base, high);
    return true;
  }
  if (e.version >= 5) {
    // .debug_rnglists: DW_FORM_sec_offset from the section's start, or DW_FORM_rnglistx, an
    // index into the offsets that follow the unit's table header, each relative to that
    // position, DW_AT_rnglists_base (§7.28).
    if (s.rnglists.data == nullptr) return false;
    uint64_t list = e.ranges.value;
    if (e.ranges.kind == Kind::kIndex) {
      if (e.rnglists_base.kind != Kind::kOffset || e.rnglists_base.value > s.rnglists.size ||
          e.ranges.value > (s.rnglists.size - e.rnglists_base.value) / e.offset_size)
        return false;
      DwarfReader r(s.rnglists.data + e.rnglists_base.value, s.rnglists.data + s.rnglists.size);
      r.Skip(e.ranges.value * e.offset_size);
      list = e.rnglists_base.value + r.Fixed(e.offset_size);
      if (!r.ok()) return false;
    } else if (e.ranges.kind != Kind::kOffset) {
      return false;
    }
    if (list >= s.rnglists.size) return false;
    DwarfReader r(s.rnglists.data + list, s.rnglists.data + s.rnglists.size);
    // The entries (DW_RLE_*, §7.25) up to DW_RLE_end_of_list.
    while (r.ok()) {
      uint64_t start = 0, end = 0;
      switch (r.Fixed(1)) {
        case 0x00: return r.ok();  // end_of_list
        case 0x01:                 // base_addressx
          if (!indexed_address(r.Uleb(), &base)) return false;
          continue;
        case 0x02:  // startx_endx
          if (!indexed_address(r.Uleb(), &start) || !indexed_address(r.Uleb(), &end)) return false;
          break;
        case 0x03:  // startx_length
          if (!indexed_address(r.Uleb(), &start)) return false;
          end = start + r.Uleb();
          break;
        case 0x04:  // offset_pair
          start = base + r.Uleb();
          end = base + r.Uleb();
          break;
        case 0x05:  // base_address
          base = r.Fixed(e.address_size);
          continue;
        case 0x06:  // start_end
          start = r.Fixed(e.address_size);
          end = r.Fixed(e.address_size);
          break;
        case 0x07:  // start_length
          start = r.Fixed(e.address_size);
          end = start + r.Uleb();
          break;
        default: return false;
      }
      if (r.ok()) out->emplace_back(start, end);
    }
    return false;
  }
  // .debug_ranges (DWARF 2-4 §2.17.3): (start, end) offsets from the base address up to (0, 0);
  // a start of all ones makes the end the new base address.
  if ((e.ranges.kind != Kind::kOffset && e.ranges.kind != Kind::kConstant) || s.ranges.data == nullptr ||
      e.ranges.value >= s.ranges.size)
    return false;
  const uint64_t all_ones = e.address_size == 8 ? UINT64_MAX : UINT32_MAX;
  DwarfReader r(s.ranges.data + e.ranges.value, s.ranges.data + s.ranges.size);
  while (r.ok()) {
    const uint64_t start = r.Fixed(e.address_size);
    const uint64_t end = r.Fixed(e.address_size);
    if (!r.ok()) break;
    if (start == 0 && end == 0) return true;
    if (start == all_ones) {
      base = end;
      continue;
    }
    out->emplace_back(base + start, base + end);
  }
  return false;
}

// Whether the unit at this header holds code with lines that an index must cover: DWARF 2-4
// units, and DWARF 5 full, partial and skeleton units (type units hold none).
bool MayHoldCode(DwarfReader unit) {
  const uint32_t version = static_cast<uint32_t>(unit.Fixed(2));
  if (version >= 2 && version <= 4) return true;
  if (version != 5) return false;
  const uint8_t type = static_cast<uint8_t>(unit.Fixed(1));
  return unit.ok() && (type == kUtCompile || type == kUtPartial || type == kUtSkeleton);
}

}  // namespace

DwarfUnitSections DwarfUnitSections::Of(const MappedElf& elf) {
  return DwarfUnitSections{elf.Contents(".debug_aranges"), elf.Contents(".debug_info"),
                           elf.Contents(".debug_abbrev"),  elf.Contents(".debug_addr"),
                           elf.Contents(".debug_rnglists"), elf.Contents(".debug_ranges")};
}

bool DwarfLineUnitIndex::Build(const DwarfUnitSections& s) {
  ranges_.clear();
  if (s.info.data == nullptr || s.abbrev.data == nullptr) return false;
  auto add = [this](uint64_t start, uint64_t end, uint64_t line_offset) {
    if (start != 0 && end > start) ranges_.push_back(Range{start, end, line_offset, 0});
  };
  std::vector<uint64_t> indexed_units;  // .debug_info offsets of the units whose sets were read
  const uint8_t* cursor = s.aranges.data;
  const uint8_t* const end = s.aranges.data + s.aranges.size;
  // A set per compilation unit (DWARF 5 §6.1.2): its header, then (address, length) tuples up to
  // (0, 0), the first tuple at a multiple of its size from the set's start.
  while (cursor != nullptr && cursor < end) {
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
    UnitEntry entry;
    if (!ReadUnitEntry(s.info, s.abbrev, unit_offset, &entry)) continue;
    const std::optional<uint64_t> line_offset = LineOffset(entry);
    if (!line_offset.has_value()) continue;
    indexed_units.push_back(unit_offset);
    while (r.ok()) {
      const uint64_t start = r.Fixed(address_size);
      const uint64_t size = r.Fixed(address_size);
      if (!r.ok() || (start == 0 && size == 0)) break;
      add(start, start + std::min(size, UINT64_MAX - start), *line_offset);
    }
  }
  // The units without a set: their ranges from their own entries. One with a line program whose
  // addresses cannot be read would lose its lines behind the index: then there is none, and the
  // caller decodes the whole table.
  std::sort(indexed_units.begin(), indexed_units.end());
  std::vector<std::pair<uint64_t, uint64_t>> unit_ranges;
  for (const uint8_t* unit = s.info.data; unit < s.info.data + s.info.size;) {
    const uint64_t offset = static_cast<uint64_t>(unit - s.info.data);
    DwarfReader head(unit, s.info.data + s.info.size);
    size_t offset_size = 4;
    const DwarfReader body = head.Unit(&offset_size);
    if (!head.ok()) {  // the units after it cannot be found, nor whether they hold code
      ranges_.clear();
      return false;
    }
    unit = head.position();
    if (!MayHoldCode(body) || std::binary_search(indexed_units.begin(), indexed_units.end(), offset)) continue;
    UnitEntry entry;
    unit_ranges.clear();
    const bool read = ReadUnitEntry(s.info, s.abbrev, offset, &entry);
    const std::optional<uint64_t> line_offset = LineOffset(entry);
    if (read && !line_offset.has_value()) continue;  // no line program: no lines to lose
    if (!read || !EntryRanges(entry, s, &unit_ranges)) {
      ranges_.clear();
      return false;
    }
    for (const auto& [start, end] : unit_ranges) add(start, end, *line_offset);
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
