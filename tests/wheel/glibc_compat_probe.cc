// glibc_compat_probe — agent/core/glibc_compat.c at work in a file linked like the shipped ones
// (gs_portable: static C++ runtime): a C++ exception thrown and caught through several frames
// (libgcc's unwinder asks _dl_find_object for the .eh_frame_hdr) and std::random_device (whose
// code references arc4random). Exit 0 when both work; wheel.glibc_compat then checks that the
// file imports neither symbol from glibc.
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>

namespace {

__attribute__((noinline)) void Deep(int n) {
  if (n == 0) throw std::runtime_error("from the bottom");
  Deep(n - 1);
  asm volatile("");  // not a tail call: keep every frame for the unwinder
}

}  // namespace

int main() {
  int caught = 0;
  for (int i = 0; i < 100; ++i) {
    try {
      Deep(8);
    } catch (const std::runtime_error& e) {
      caught += std::string(e.what()) == "from the bottom";
    }
  }
  std::random_device device;
  unsigned mixed = 0;
  for (int i = 0; i < 8; ++i) mixed |= device();
  std::printf("caught %d of 100, random bits %s\n", caught, mixed != 0 ? "yes" : "no");
  return caught == 100 && mixed != 0 ? 0 : 1;
}
