// line_table.cc — the three table formats, following CPython's own decoders
// (3.9 PyCode_Addr2Line; 3.10 and 3.11+ Objects/codeobject.c advance()/_PyCode_CheckLineNumber).
#include "agent/python/line_table.h"

namespace gs {
namespace {

// 3.9 co_lnotab: pairs (unsigned byte delta, signed line delta); the line of addrq is the sum of
// the line deltas of every pair whose cumulative byte offset is <= addrq.
int LnotabLine(const uint8_t* p, size_t size, int firstlineno, int addrq) {
  int line = firstlineno;
  int addr = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    addr += p[i];
    if (addr > addrq) break;
    line += static_cast<int8_t>(p[i + 1]);
  }
  return line;
}

// 3.10 co_linetable (PEP 626): pairs (unsigned byte delta, signed line delta); each pair covers
// [end, end + delta) bytes; a line delta of -128 means "no line" for that range only.
int Linetable310Line(const uint8_t* p, size_t size, int firstlineno, int addrq) {
  int computed = firstlineno;
  int end = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const int start = end;
    end += p[i];
    const int8_t ldelta = static_cast<int8_t>(p[i + 1]);
    int line = -1;
    if (ldelta != -128) {
      computed += ldelta;
      line = computed;
    }
    if (start <= addrq && addrq < end) return line;
  }
  return -1;
}

// 3.11+ location table (PEP 657). Each entry starts with a byte with bit 7 set:
// bits 3-6 = code, bits 0-2 = length in code units - 1; payload bytes have bit 7 clear.
//   code 0-9: short form, same line; 10-12: one-line form, line += code - 10;
//   13: no columns, line += svarint; 14: long form, line += svarint (then more varints);
//   15: no location (line None). Varints: 6 bits per byte, LSB first, bit 6 = more.
int ReadVarint(const uint8_t* p, const uint8_t* end, const uint8_t** next) {
  unsigned value = 0;
  int shift = 0;
  while (p < end) {
    const uint8_t b = *p++;
    value |= static_cast<unsigned>(b & 63) << shift;
    shift += 6;
    if (!(b & 64) || shift > 30) break;
  }
  *next = p;
  return static_cast<int>(value);
}

int ReadSvarint(const uint8_t* p, const uint8_t* end) {
  const uint8_t* next;
  const unsigned u = static_cast<unsigned>(ReadVarint(p, end, &next));
  return (u & 1) ? -static_cast<int>(u >> 1) : static_cast<int>(u >> 1);
}

int LocationsLine(const uint8_t* p, size_t size, int firstlineno, int addrq) {
  const uint8_t* const end = p + size;
  int line = firstlineno;
  int start = 0;
  while (p < end) {
    const uint8_t first = *p;
    if (!(first & 0x80)) return -1;  // lost sync: damaged table
    const int code = (first >> 3) & 15;
    const int units = (first & 7) + 1;
    if (code == 13 || code == 14) {
      line += ReadSvarint(p + 1, end);
    } else if (code >= 10 && code <= 12) {
      line += code - 10;
    }
    const int stop = start + units * 2;
    if (addrq < stop) return code == 15 ? -1 : line;
    start = stop;
    ++p;
    while (p < end && !(*p & 0x80)) ++p;  // payload: skip by the start-of-entry marker
  }
  return -1;
}

}  // namespace

int PythonLineForOffset(PyLineTableFormat format, const uint8_t* table, size_t size,
                        int firstlineno, int addrq) {
  if (addrq < 0) return firstlineno;
  if (table == nullptr) return -1;
  switch (format) {
    case PyLineTableFormat::kLnotab:
      return LnotabLine(table, size, firstlineno, addrq);
    case PyLineTableFormat::kLinetable310:
      return Linetable310Line(table, size, firstlineno, addrq);
    case PyLineTableFormat::kLocations:
      return LocationsLine(table, size, firstlineno, addrq);
  }
  return -1;
}

}  // namespace gs
