// Compiled with -gdwarf-4 (see CMakeLists.txt) so the symboliser's DWARF 4 path is tested too.
#include <cstdint>

namespace gs_test_dwarf4 {

__attribute__((noinline)) uint64_t CallerPc() { return reinterpret_cast<uint64_t>(__builtin_return_address(0)); }

__attribute__((noinline)) uint64_t FunctionInDwarf4(int* line) {
  *line = __LINE__ + 1;
  const uint64_t pc = CallerPc();
  __asm__ volatile("" ::: "memory");
  return pc;
}

}  // namespace gs_test_dwarf4
