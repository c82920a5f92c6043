// glibc_compat.c — private definitions of two glibc functions that the static C++ runtime would
// otherwise import from a glibc newer than the oldest one gpustall's shipped files load on.
//
// Linked as an object library (cmake/GsPortable.cmake) into every shipped native file that carries
// the C++ runtime inside itself (libgsagent.so, simgpu's libraries, gs_agent_env). Both symbols are
// hidden: the references from libstdc++.a / libgcc_eh.a bind to these definitions at link time,
// nothing is exported, and the process's own glibc functions (if any) are untouched.
//
//   arc4random        GLIBC_2.36; referenced by libstdc++.a(random.o), std::random_device, which
//                     the static runtime pulls in through its COW-string instantiations. Never
//                     called by gpustall; implemented with getrandom(2) (glibc 2.25) all the same.
//   _dl_find_object   GLIBC_2.35; libgcc_eh's _Unwind_Find_FDE asks it for the .eh_frame_hdr of
//                     the object holding a PC when a C++ exception unwinds. Implemented the way
//                     libgcc did before 2.35: dl_iterate_phdr (glibc 2.2.5) and PT_GNU_EH_FRAME.
//
// Deliberately C: the definitions below take the glibc names through asm labels, so they neither
// clash with nor call glibc's declarations (<link.h> needs _GNU_SOURCE for dl_iterate_phdr).
#define _GNU_SOURCE 1
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define GS_HIDDEN __attribute__((visibility("hidden")))

// --- arc4random ----------------------------------------------------------------------------------

GS_HIDDEN uint32_t gs_arc4random(void) __asm__("arc4random");

uint32_t gs_arc4random(void) {
  uint32_t value = 0;
  if (getrandom(&value, sizeof(value), 0) == (ssize_t)sizeof(value)) return value;
  // No getrandom (a kernel older than 3.17): not a cryptographic need here, a seed is enough.
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec ^
               ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&value;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (uint32_t)x;
}

// --- _dl_find_object -----------------------------------------------------------------------------

// The layout of glibc's struct dl_find_object on x86-64 (<bits/dl_find_object.h>: no eh_dbase,
// no eh_count there).
struct gs_dl_find_object {
  unsigned long long dlfo_flags;
  void* dlfo_map_start;
  void* dlfo_map_end;
  struct link_map* dlfo_link_map;
  void* dlfo_eh_frame;
  unsigned long long dlfo_reserved[7];
};
#if defined(__x86_64__)
_Static_assert(sizeof(struct gs_dl_find_object) == 96, "glibc's struct dl_find_object on x86-64");
#else
#error "gs_dl_find_object mirrors the x86-64 layout only"
#endif

GS_HIDDEN int gs_dl_find_object(void* pc, struct gs_dl_find_object* result)
    __asm__("_dl_find_object");

struct gs_find_state {
  uintptr_t pc;
  struct gs_dl_find_object* result;
};

static int gs_find_callback(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct gs_find_state* state = (struct gs_find_state*)data;
  uintptr_t low = UINTPTR_MAX, high = 0;
  int contains = 0;
  void* eh_frame = NULL;
  for (size_t i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD) {
      const uintptr_t start = info->dlpi_addr + ph->p_vaddr;
      const uintptr_t end = start + ph->p_memsz;
      if (start < low) low = start;
      if (end > high) high = end;
      if (state->pc >= start && state->pc < end) contains = 1;
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      eh_frame = (void*)(info->dlpi_addr + ph->p_vaddr);
    }
  }
  if (!contains) return 0;
  state->result->dlfo_flags = 0;
  state->result->dlfo_map_start = (void*)low;
  state->result->dlfo_map_end = (void*)high;
  state->result->dlfo_link_map = NULL;  // libgcc's unwinder does not read it on x86-64
  state->result->dlfo_eh_frame = eh_frame;
  return 1;
}

int gs_dl_find_object(void* pc, struct gs_dl_find_object* result) {
  struct gs_find_state state = {(uintptr_t)pc, result};
  return dl_iterate_phdr(gs_find_callback, &state) == 1 ? 0 : -1;
}
