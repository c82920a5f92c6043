// Loads the agent-style test library with dlopen, as LD_PRELOAD/CUDA_INJECTION64_PATH would, and
// checks what its one export does. Usage: gs_deps_agent_style_loader LIBRARY. Exit 0 = pass.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

using ProbeFn = int (*)(uint64_t, const char*, unsigned char*, int, const char*, int*, int*);

// Kept out of line so that the unwinder has a named frame of ours to find above the library.
extern "C" __attribute__((noinline)) int gs_deps_loader_caller(ProbeFn probe, unsigned char* out,
                                                                int size, int* frames, int* found) {
  const int n = probe(150, "gs", out, size, "gs_deps_loader_caller", frames, found);
  __asm__ volatile("" ::: "memory");  // no tail call: this frame stays on the stack
  return n;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  auto probe = reinterpret_cast<ProbeFn>(dlsym(lib, "gs_deps_probe"));
  if (probe == nullptr) {
    std::fprintf(stderr, "dlsym gs_deps_probe: %s\n", dlerror());
    return 1;
  }
  unsigned char out[32];
  int frames = 0;
  int found = 0;
  const int n = gs_deps_loader_caller(probe, out, sizeof(out), &frames, &found);

  int failures = 0;
  // Wire format (protobuf encoding spec): length 7, then field 1 varint 150 = 08 96 01, field 2
  // length-delimited "gs" = 12 02 67 73.
  const unsigned char expected[] = {0x07, 0x08, 0x96, 0x01, 0x12, 0x02, 0x67, 0x73};
  if (n != static_cast<int>(sizeof(expected)) || std::memcmp(out, expected, sizeof(expected)) != 0) {
    std::fprintf(stderr, "encoding: got %d bytes:", n);
    for (int i = 0; i < n && i < static_cast<int>(sizeof(out)); ++i) std::fprintf(stderr, " %02x", out[i]);
    std::fprintf(stderr, "\n");
    ++failures;
  }
  // probe -> gs_deps_loader_caller -> main -> libc start: at least 3 frames.
  if (frames <= 2) {
    std::fprintf(stderr, "unw_backtrace returned %d frames (want > 2)\n", frames);
    ++failures;
  }
  if (!found) {
    std::fprintf(stderr, "the cursor walk did not name gs_deps_loader_caller\n");
    ++failures;
  }
  if (failures == 0) std::printf("ok: %d bytes, %d frames\n", n, frames);
  return failures == 0 ? 0 : 1;
}
