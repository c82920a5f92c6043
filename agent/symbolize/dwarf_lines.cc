#include "agent/symbolize/dwarf_lines.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gs {
namespace {

// DWARF constants (DWARF 5 standard, §7).
enum : uint8_t {
  kLnsCopy = 1, kLnsAdvancePc = 2, kLnsAdvanceLine = 3, kLnsSetFile = 4, kLnsConstAddPc = 8,
  kLnsFixedAdvancePc = 9,
};
enum : uint8_t { kLneEndSequence = 1, kLneSetAddress = 2, kLneDefineFile = 3 };
enum : uint32_t { kLnctPath = 1, kLnctDirectoryIndex = 2 };
enum : uint32_t {
  kFormBlock = 0x09, kFormData1 = 0x0b, kFormData2 = 0x05, kFormData4 = 0x06, kFormData8 = 0x07,
  kFormData16 = 0x1e, kFormString = 0x08, kFormStrp = 0x0e, kFormLineStrp = 0x1f, kFormUdata = 0x0f,
  kFormSdata = 0x0d, kFormBlock1 = 0x0a, kFormBlock2 = 0x03, kFormBlock4 = 0x04, kFormStrx = 0x1a,
  kFormStrx1 = 0x25, kFormStrx2 = 0x26, kFormStrx4 = 0x28,
};

const char* StringAt(Span section, uint64_t offset) {
  if (section.data == nullptr || offset >= section.size) return "";
  if (std::memchr(section.data + offset, 0, section.size - offset) == nullptr) return "";
  return reinterpret_cast<const char*>(section.data + offset);
}

// Reads one attribute value of a DWARF 5 entry format. Strings go to *text, numbers to *number.
void ReadForm(DwarfReader& r, uint32_t form, size_t offset_size, Span line_str, Span str, std::string* text,
              uint64_t* number) {
  switch (form) {
    case kFormString: *text = r.CString(); break;
    case kFormLineStrp: *text = StringAt(line_str, r.Fixed(offset_size)); break;
    case kFormStrp: *text = StringAt(str, r.Fixed(offset_size)); break;
    case kFormUdata: *number = r.Uleb(); break;
    case kFormSdata: *number = static_cast<uint64_t>(r.Sleb()); break;
    case kFormData1: case kFormStrx1: *number = r.Fixed(1); break;
    case kFormData2: case kFormStrx2: *number = r.Fixed(2); break;
    case kFormData4: case kFormStrx4: *number = r.Fixed(4); break;
    case kFormData8: *number = r.Fixed(8); break;
    case kFormStrx: *number = r.Uleb(); break;
    case kFormData16: r.Skip(16); break;
    case kFormBlock: r.Skip(r.Uleb()); break;
    case kFormBlock1: r.Skip(r.Fixed(1)); break;
    case kFormBlock2: r.Skip(r.Fixed(2)); break;
    case kFormBlock4: r.Skip(r.Fixed(4)); break;
    default: r.Skip(UINT64_MAX); break;  // unknown form: cannot continue this unit
  }
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (name.empty() || name[0] == '/' || dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace

void DwarfLineTable::Load(Span debug_line, Span line_str, Span str) {
  if (debug_line.data == nullptr) return;
  const uint8_t* cursor = debug_line.data;
  const uint8_t* end = debug_line.data + debug_line.size;
  std::vector<Sequence> sequences;
  // g++'s tables hold ~7 bytes of program per kept row: reserved (address space only until
  // written) so that the rows are not copied at each growth.
  rows_.reserve(debug_line.size / 4);
  while (cursor < end && LoadUnit(cursor, end, line_str, str, &sequences)) {
  }
  // At one address an end-of-sequence sorts before the start of the next sequence, so Find's
  // "last row at or before" lands on the start.
  const auto before = [](const Row& a, const Row& b) {
    if (a.address != b.address) return a.address < b.address;
    return a.end_sequence && !b.end_sequence;
  };
  // Sequences in address order (a linker lays most of them out in order already); the rows of
  // one sequence are in order by construction, so only sequences that overlap others (a few
  // dozen of the agent's own 1,100) need their rows sorted: each such cluster, in unit order,
  // sorted stably on its own gives the rows a sort of the whole table would (~3x the time).
  std::stable_sort(sequences.begin(), sequences.end(),
                   [](const Sequence& a, const Sequence& b) { return a.start < b.start; });
  std::vector<Row> ordered;
  ordered.reserve(rows_.size());
  for (size_t i = 0; i < sequences.size();) {
    size_t j = i + 1;
    uint64_t cluster_end = rows_[sequences[i].end - 1].address;
    while (j < sequences.size() && sequences[j].start < cluster_end) {
      cluster_end = std::max(cluster_end, rows_[sequences[j].end - 1].address);
      ++j;
    }
    const size_t first = ordered.size();
    const bool overlapping = j - i > 1;
    if (overlapping) {
      std::sort(sequences.begin() + static_cast<std::ptrdiff_t>(i), sequences.begin() + static_cast<std::ptrdiff_t>(j),
                [](const Sequence& a, const Sequence& b) { return a.begin < b.begin; });
    }
    for (; i < j; ++i) {
      ordered.insert(ordered.end(), rows_.begin() + static_cast<std::ptrdiff_t>(sequences[i].begin),
                     rows_.begin() + static_cast<std::ptrdiff_t>(sequences[i].end));
    }
    if (overlapping) {
      std::stable_sort(ordered.begin() + static_cast<std::ptrdiff_t>(first), ordered.end(), before);
    }
  }
  rows_.swap(ordered);
}

bool DwarfLineTable::LoadUnit(const uint8_t*& cursor, const uint8_t* section_end, Span line_str, Span str,
                              std::vector<Sequence>* sequences) {
  DwarfReader head(cursor, section_end);
  size_t offset_size = 4;
  DwarfReader r = head.Unit(&offset_size);
  if (!head.ok()) return false;
  const uint8_t* unit_end = r.end();
  cursor = unit_end;  // whatever happens inside, the next unit starts there

  const uint32_t version = static_cast<uint32_t>(r.Fixed(2));
  if (version < 2 || version > 5) return true;
  size_t address_size = 8;
  if (version >= 5) {
    address_size = r.Fixed(1);
    r.Fixed(1);  // segment selector size
  }
  const uint64_t header_length = r.Fixed(offset_size);
  if (header_length > static_cast<uint64_t>(unit_end - r.position())) return true;
  const uint8_t* program = r.position() + header_length;
  const uint32_t min_inst_length = static_cast<uint32_t>(r.Fixed(1));
  if (version >= 4) r.Fixed(1);  // maximum_operations_per_instruction (VLIW only)
  const bool default_is_stmt = r.Fixed(1) != 0;
  (void)default_is_stmt;
  const int8_t line_base = static_cast<int8_t>(r.Fixed(1));
  const uint8_t line_range = static_cast<uint8_t>(r.Fixed(1));
  const uint8_t opcode_base = static_cast<uint8_t>(r.Fixed(1));
  if (!r.ok() || line_range == 0 || opcode_base == 0) return true;
  std::vector<uint8_t> standard_lengths(opcode_base, 0);
  for (int i = 1; i < opcode_base; ++i) standard_lengths[i] = static_cast<uint8_t>(r.Fixed(1));

  // Directories and files; `file_map[i]` is the files_ index of the unit's file i.
  std::vector<std::string> dirs;
  std::vector<uint32_t> file_map;
  auto add_file = [&](const std::string& name, uint64_t dir) {
    files_.push_back(JoinPath(dir < dirs.size() ? dirs[dir] : std::string(), name));
    file_map.push_back(static_cast<uint32_t>(files_.size() - 1));
  };
  if (version >= 5) {
    for (int table = 0; table < 2; ++table) {
      const uint32_t format_count = static_cast<uint32_t>(r.Fixed(1));
      std::vector<std::pair<uint32_t, uint32_t>> format;
      for (uint32_t i = 0; i < format_count; ++i) {
        const uint32_t type = static_cast<uint32_t>(r.Uleb());
        const uint32_t form = static_cast<uint32_t>(r.Uleb());
        format.emplace_back(type, form);
      }
      const uint64_t count = r.Uleb();
      for (uint64_t i = 0; i < count && r.ok(); ++i) {
        std::string path;
        uint64_t dir = 0;
        for (auto [type, form] : format) {
          std::string text;
          uint64_t number = 0;
          ReadForm(r, form, offset_size, line_str, str, &text, &number);
          if (type == kLnctPath) path = text;
          if (type == kLnctDirectoryIndex) dir = number;
        }
        if (table == 0) {
          dirs.push_back(path);
        } else {
          add_file(path, dir);
        }
      }
    }
  } else {
    dirs.emplace_back();  // directory 0: the compilation directory (not in .debug_line before v5)
    while (r.ok()) {
      const char* dir = r.CString();
      if (dir[0] == '\0') break;
      dirs.emplace_back(dir);
    }
    file_map.push_back(0);  // file 0 is unused before DWARF 5
    if (files_.empty()) files_.emplace_back();
    while (r.ok()) {
      const char* name = r.CString();
      if (name[0] == '\0') break;
      const uint64_t dir = r.Uleb();
      r.Uleb();  // mtime
      r.Uleb();  // length
      add_file(name, dir);
    }
  }
  if (!r.ok()) return true;

  // The line-number program (DWARF 5 §6.2.5).
  DwarfReader p(program, unit_end);
  std::vector<Row> sequence;
  uint64_t address = 0;
  uint64_t file = 1;
  int64_t line = 1;
  auto emit = [&](bool end) {
    const uint32_t index = file < file_map.size() ? file_map[file] : 0;
    const uint32_t line_number = line < 0 ? 0 : static_cast<uint32_t>(std::min<int64_t>(line, INT32_MAX));
    // Same file and line as the row before: it covers these addresses already.
    if (!end && !sequence.empty() && sequence.back().file_index == index && sequence.back().line == line_number)
      return;
    sequence.push_back(Row{address, index, line_number, end ? 1u : 0u});
  };
  while (p.ok() && !p.at_end()) {
    const uint8_t op = static_cast<uint8_t>(p.Fixed(1));
    if (op >= opcode_base) {
      const uint32_t adjusted = op - opcode_base;
      address += uint64_t{adjusted / line_range} * min_inst_length;
      line += line_base + static_cast<int>(adjusted % line_range);
      emit(false);
      continue;
    }
    switch (op) {
      case 0: {
        const uint64_t length = p.Uleb();
        if (length == 0) break;
        const uint8_t* next = p.position() + length;
        const uint8_t sub = static_cast<uint8_t>(p.Fixed(1));
        if (sub == kLneEndSequence) {
          emit(true);
          // Rows at the end address cover nothing (g++ emits one before the end_sequence). Kept,
          // they would sort after this sequence's end and claim the next function's addresses
          // (seen: _start resolved to basic_string.h:795 from the function before it).
          while (sequence.size() >= 2 && sequence[sequence.size() - 2].address >= sequence.back().address)
            sequence.erase(sequence.end() - 2);
          // Sequences at 0 belong to functions the linker discarded; they would shadow real code.
          if (!sequence.empty() && sequence.front().address != 0) {
            sequences->push_back(Sequence{sequence.front().address, rows_.size(), rows_.size() + sequence.size()});
            rows_.insert(rows_.end(), sequence.begin(), sequence.end());
          }
          sequence.clear();
          address = 0;
          file = 1;
          line = 1;
        } else if (sub == kLneSetAddress) {
          address = p.Fixed(std::min<size_t>(length - 1, address_size));
        } else if (sub == kLneDefineFile && version < 5) {
          const char* name = p.CString();
          const uint64_t dir = p.Uleb();
          add_file(name, dir);
        }
        if (next > p.position()) p.Skip(static_cast<uint64_t>(next - p.position()));
        break;
      }
      case kLnsCopy: emit(false); break;
      case kLnsAdvancePc: address += p.Uleb() * min_inst_length; break;
      case kLnsAdvanceLine: line += p.Sleb(); break;
      case kLnsSetFile: file = p.Uleb(); break;
      case kLnsConstAddPc: address += uint64_t{(255u - opcode_base) / line_range} * min_inst_length; break;
      case kLnsFixedAdvancePc: address += p.Fixed(2); break;
      default:
        for (int i = 0; i < standard_lengths[op]; ++i) p.Uleb();
        break;
    }
  }
  return true;
}

Span DwarfLineTable::Unit(Span debug_line, uint64_t offset) {
  if (debug_line.data == nullptr || offset >= debug_line.size) return Span{};
  DwarfReader r(debug_line.data + offset, debug_line.data + debug_line.size);
  size_t offset_size = 4;
  r.Unit(&offset_size);
  if (!r.ok()) return Span{};
  return Span{debug_line.data + offset, static_cast<size_t>(r.position() - (debug_line.data + offset))};
}

const DwarfLineTable::Row* DwarfLineTable::Find(uint64_t address) const {
  auto it = std::upper_bound(rows_.begin(), rows_.end(), address,
                             [](uint64_t a, const Row& row) { return a < row.address; });
  if (it == rows_.begin()) return nullptr;
  const Row* row = &*(it - 1);
  return row->end_sequence ? nullptr : row;
}

}  // namespace gs
