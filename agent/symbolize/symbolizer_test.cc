#include "agent/symbolize/elf_symbolizer.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "agent/symbolize/dwarf_lines.h"
#include "agent/symbolize/module_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gs_test_dwarf4 {
uint64_t FunctionInDwarf4(int* line);
}

namespace gs_test {

__attribute__((noinline)) uint64_t CallerPc() { return reinterpret_cast<uint64_t>(__builtin_return_address(0)); }

// The function the symboliser must name: returns a return address inside itself, and the line
// of the call that produced it.
__attribute__((noinline)) uint64_t SymbolizeMe(int* line) {
  *line = __LINE__ + 1;
  const uint64_t pc = CallerPc();
  __asm__ volatile("" ::: "memory");
  return pc;
}

}  // namespace gs_test

namespace gs {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(ModuleMapTest, FindsTheProgramWithItsBuildId) {
  ModuleMap map;
  const auto added = map.Refresh();
  EXPECT_GE(added.size(), 3u);  // the test, libc, the loader at least
  const ModuleInfo* self = map.Find(reinterpret_cast<uint64_t>(&gs_test::SymbolizeMe));
  ASSERT_NE(self, nullptr);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  EXPECT_EQ(self->path, std::string(exe, static_cast<size_t>(n)));
  EXPECT_EQ(self->build_id.size(), 20u);  // GNU ld's default sha1 build-id
  EXPECT_LE(self->start, reinterpret_cast<uint64_t>(&gs_test::SymbolizeMe));
  // gnu_get_libc_version: in libc and intercepted by no sanitizer (under ASan, &::write would be
  // the interceptor in libasan).
  const ModuleInfo* libc = map.Find(reinterpret_cast<uint64_t>(&::gnu_get_libc_version));
  ASSERT_NE(libc, nullptr);
  EXPECT_THAT(libc->path, HasSubstr("libc.so"));
  EXPECT_NE(libc->id, self->id);
  EXPECT_EQ(map.Find(16), nullptr);  // not in any module
}

TEST(ModuleMapTest, LateDlopenIsFoundByRescanning) {
  ModuleMap map;
  map.Refresh();
  // libz is not linked into this test: dlopen it after the first scan.
  void* handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  void* fn = dlsym(handle, "zlibVersion");
  ASSERT_NE(fn, nullptr);
  std::vector<const ModuleInfo*> discovered;
  const ModuleInfo* m = map.Find(reinterpret_cast<uint64_t>(fn), &discovered);
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->path, HasSubstr("libz.so"));
  EXPECT_FALSE(discovered.empty());
  dlclose(handle);
}

TEST(SymbolizerTest, NamesAFunctionOfTheTestBinaryWithFileAndLine) {
  ModuleMap map;
  map.Refresh();
  int line = 0;
  const uint64_t pc = gs_test::SymbolizeMe(&line);
  const ModuleInfo* m = map.Find(pc);
  ASSERT_NE(m, nullptr);
  ElfSymbolizer symbolizer;
  const SymbolInfo info = symbolizer.Symbolize(m->id, m->path, pc - 1 - m->bias);
  EXPECT_EQ(info.function, "gs_test::SymbolizeMe(int*)");
  EXPECT_GT(info.function_offset, 0u);
  EXPECT_THAT(info.file, EndsWith("agent/symbolize/symbolizer_test.cc"));
  EXPECT_EQ(info.line, static_cast<uint32_t>(line));
}

// g++ can emit a row AT a sequence's end address, just before the end_sequence. That row covers
// nothing; kept, it sorted after the end marker and lent its file:line to the code that follows
// (seen: _start, which has no debug info, resolved to basic_string.h:795).
TEST(DwarfLineTableTest, RowAtTheEndAddressCoversNothing) {
  const uint8_t program[] = {
      // DWARF 4 line program header (after unit_length): version, header_length, then fields.
      4, 0,                                     // version 4
      0, 0, 0, 0,                               // header_length (patched below)
      1, 1, 1,                                  // min_inst_length, max_ops, default_is_stmt
      static_cast<uint8_t>(-5), 14, 13,         // line_base, line_range, opcode_base
      0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,       // standard_opcode_lengths
      0,                                        // include_directories: none
      'a', '.', 'c', 0, 0, 0, 0,                // file 1: "a.c", dir 0, mtime 0, length 0
      0,                                        // end of file_names
      // program
      0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0,    // DW_LNE_set_address 0x1000
      3, 9,                                     // advance_line +9 -> 10
      1,                                        // copy: row (0x1000, 10)
      2, 0x10,                                  // advance_pc 16
      3, 1,                                     // advance_line +1 -> 11
      1,                                        // copy: row (0x1010, 11) at the end address
      0, 1, 1,                                  // DW_LNE_end_sequence at 0x1010
  };
  std::vector<uint8_t> unit(4 + sizeof(program));
  const uint32_t unit_length = sizeof(program);
  memcpy(unit.data(), &unit_length, 4);
  memcpy(unit.data() + 4, program, sizeof(program));
  const uint32_t header_length = 6 + 12 + 1 + 7 + 1;  // bytes after header_length up to the program
  memcpy(unit.data() + 4 + 2, &header_length, 4);
  DwarfLineTable table;
  table.Load(Span{unit.data(), unit.size()}, Span{}, Span{});
  const DwarfLineTable::Row* inside = table.Find(0x1004);
  ASSERT_NE(inside, nullptr);
  EXPECT_EQ(inside->line, 10u);
  EXPECT_EQ(table.file(inside->file_index), "a.c");
  EXPECT_EQ(table.Find(0x1014), nullptr) << "code after the sequence got line " << table.Find(0x1014)->line;
}

// Sequences out of address order are put in order as wholes, and a row that repeats its
// predecessor's file:line is not kept (the row before answers for its addresses).
TEST(DwarfLineTableTest, SequencesOutOfOrderAndRepeatedRows) {
  const uint8_t program[] = {
      4, 0,                                     // version 4
      0, 0, 0, 0,                               // header_length (patched below)
      1, 1, 1,                                  // min_inst_length, max_ops, default_is_stmt
      static_cast<uint8_t>(-5), 14, 13,         // line_base, line_range, opcode_base
      0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,       // standard_opcode_lengths
      0,                                        // include_directories: none
      'a', '.', 'c', 0, 0, 0, 0,                // file 1: "a.c"
      0,                                        // end of file_names
      0, 9, 2, 0x00, 0x20, 0, 0, 0, 0, 0, 0,    // DW_LNE_set_address 0x2000
      3, 9, 1,                                  // line 10, row (0x2000, 10)
      2, 8, 1,                                  // row (0x2008, 10): repeats, not kept
      2, 8, 3, 2, 1,                            // row (0x2010, 12)
      2, 0x10, 0, 1, 1,                         // end_sequence at 0x2020
      0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0,    // DW_LNE_set_address 0x1000 (a lower address)
      3, 4, 1,                                  // line 5, row (0x1000, 5)
      2, 0x10, 0, 1, 1,                         // end_sequence at 0x1010
  };
  std::vector<uint8_t> unit(4 + sizeof(program));
  const uint32_t unit_length = sizeof(program);
  memcpy(unit.data(), &unit_length, 4);
  memcpy(unit.data() + 4, program, sizeof(program));
  const uint32_t header_length = 6 + 12 + 1 + 7 + 1;
  memcpy(unit.data() + 4 + 2, &header_length, 4);
  DwarfLineTable table;
  table.Load(Span{unit.data(), unit.size()}, Span{}, Span{});
  EXPECT_EQ(table.row_count(), 5u);  // (0x1000, 5), end, (0x2000, 10), (0x2010, 12), end
  ASSERT_NE(table.Find(0x1004), nullptr);
  EXPECT_EQ(table.Find(0x1004)->line, 5u);
  EXPECT_EQ(table.Find(0x1014), nullptr);
  ASSERT_NE(table.Find(0x200c), nullptr);
  EXPECT_EQ(table.Find(0x200c)->line, 10u);
  ASSERT_NE(table.Find(0x2014), nullptr);
  EXPECT_EQ(table.Find(0x2014)->line, 12u);
  EXPECT_EQ(table.file(table.Find(0x2014)->file_index), "a.c");
  EXPECT_EQ(table.Find(0x2020), nullptr);
}

// Also: asked without lines first (the agent's own frames, trace_writer.cc), the function alone,
// and the line table still read when a later lookup asks for it.
TEST(SymbolizerTest, ReadsDwarf4LineTablesAndLeavesThemOutWhenAsked) {
  ModuleMap map;
  map.Refresh();
  int line = 0;
  const uint64_t pc = gs_test_dwarf4::FunctionInDwarf4(&line);
  const ModuleInfo* m = map.Find(pc);
  ASSERT_NE(m, nullptr);
  ElfSymbolizer symbolizer;
  const SymbolInfo bare = symbolizer.Symbolize(m->id, m->path, pc - 1 - m->bias, /*with_line=*/false);
  EXPECT_EQ(bare.function, "gs_test_dwarf4::FunctionInDwarf4(int*)");
  EXPECT_TRUE(bare.file.empty());
  EXPECT_EQ(bare.line, 0u);
  const SymbolInfo info = symbolizer.Symbolize(m->id, m->path, pc - 1 - m->bias);
  EXPECT_EQ(info.function, "gs_test_dwarf4::FunctionInDwarf4(int*)");
  EXPECT_THAT(info.file, EndsWith("symbolizer_test_dwarf4.cc"));
  EXPECT_EQ(info.line, static_cast<uint32_t>(line));
}

TEST(SymbolizerTest, NamesSharedLibraryFunctionsFromDynsym) {
  ModuleMap map;
  map.Refresh();
  const uint64_t address = reinterpret_cast<uint64_t>(&::getppid);
  const ModuleInfo* m = map.Find(address);
  ASSERT_NE(m, nullptr);
  ElfSymbolizer symbolizer;
  const SymbolInfo info = symbolizer.Symbolize(m->id, m->path, address - m->bias);
  EXPECT_THAT(info.function, HasSubstr("getppid"));
  EXPECT_EQ(info.function_offset, 0u);
}

TEST(SymbolizerTest, UnreadableFileGivesNothingAndNoCrash) {
  ElfSymbolizer symbolizer;
  EXPECT_TRUE(symbolizer.Symbolize(99, "/nonexistent/libfoo.so", 0x1234).function.empty());
  EXPECT_TRUE(symbolizer.Symbolize(98, "/proc/self/status", 0x10).function.empty());  // not ELF
}

TEST(SymbolizerTest, Demangles) {
  EXPECT_EQ(Demangle("_ZN2at6native12_GLOBAL__N_113launch_kernelEv"),
            "at::native::(anonymous namespace)::launch_kernel()");
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle("_Znot_mangled"), "_Znot_mangled");
}

}  // namespace
}  // namespace gs
