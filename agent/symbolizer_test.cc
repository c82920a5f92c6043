#include "agent/elf_symbolizer.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "agent/module_map.h"
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
  const ModuleInfo* libc = map.Find(reinterpret_cast<uint64_t>(&::write));
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
  EXPECT_THAT(info.file, EndsWith("agent/symbolizer_test.cc"));
  EXPECT_EQ(info.line, static_cast<uint32_t>(line));
}

TEST(SymbolizerTest, ReadsDwarf4LineTables) {
  ModuleMap map;
  map.Refresh();
  int line = 0;
  const uint64_t pc = gs_test_dwarf4::FunctionInDwarf4(&line);
  const ModuleInfo* m = map.Find(pc);
  ASSERT_NE(m, nullptr);
  ElfSymbolizer symbolizer;
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
