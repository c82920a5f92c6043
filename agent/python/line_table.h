// line_table.h — CPython line-number tables, decoded from a copy of their bytes.
//
// Pure functions over bytes: no Python objects, no allocation; unit-tested with tables written
// by hand and checked against the real interpreters by the probe tests.
//
// `addrq` is PyCode_Addr2Line's argument: the byte offset of the instruction in the code
// (3.9: f_lasti; 3.10: f_lasti * 2; 3.11+: (instruction pointer - co_code_adaptive) in bytes).
// As in CPython, a negative addrq means "not started yet" and yields co_firstlineno.
#ifndef GPUSTALL_AGENT_PYTHON_LINE_TABLE_H_
#define GPUSTALL_AGENT_PYTHON_LINE_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "agent/python/python_layout.h"

namespace gs {

// Line number for `addrq`, or -1 where CPython says "no line" (None) or the table is damaged.
int PythonLineForOffset(PyLineTableFormat format, const uint8_t* table, size_t size,
                        int firstlineno, int addrq);

}  // namespace gs

#endif  // GPUSTALL_AGENT_PYTHON_LINE_TABLE_H_
