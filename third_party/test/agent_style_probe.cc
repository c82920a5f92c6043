// The body of the test library for deps.agent_style_link: uses protobuf-lite (generated message,
// CodedOutputStream over an ArrayOutputStream) and libunwind (unw_backtrace and a cursor walk)
// the way libgsagent.so does, so that the link below exercises the same archives and flags.
#include <libunwind.h>

#include <cstdint>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "third_party/test/agent_style_probe.pb.h"

namespace {

// Names of the frames above this library, innermost first, as libunwind's cursor API sees them.
// Returns how many names were written into `names` (each NUL-terminated, `name_size` bytes).
int WalkWithCursor(char (*names)[64], int max_names) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return -1;
  int n = 0;
  while (n < max_names && unw_step(&cursor) > 0) {
    unw_word_t ip = 0;
    unw_word_t offset = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    if (unw_get_proc_name(&cursor, names[n], sizeof(names[n]), &offset) != 0) names[n][0] = '\0';
    ++n;
  }
  return n;
}

}  // namespace

// Encodes Probe{id, name} length-delimited into `out` and fills the unwinding results. Returns the
// number of bytes written, or -1. `*backtrace_frames` is unw_backtrace's count; `*found_caller` is
// 1 when the cursor walk named `caller` among the frames above. Default visibility, as the agent's
// wrappers: -fvisibility=hidden would otherwise keep the version script from exporting it.
extern "C" __attribute__((visibility("default"))) int gs_deps_probe(uint64_t id, const char* name, unsigned char* out, int out_size,
                             const char* caller, int* backtrace_frames, int* found_caller) {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  void* pcs[64];
  *backtrace_frames = unw_backtrace(pcs, 64);

  char names[32][64];
  const int walked = WalkWithCursor(names, 32);
  *found_caller = 0;
  for (int i = 0; i < walked; ++i) {
    if (std::strcmp(names[i], caller) == 0) *found_caller = 1;
  }

  gs::deps_test::Probe probe;
  probe.set_id(id);
  probe.set_name(name);
  google::protobuf::io::ArrayOutputStream array(out, out_size);
  google::protobuf::io::CodedOutputStream coded(&array);
  coded.WriteVarint32(static_cast<uint32_t>(probe.ByteSizeLong()));
  if (!probe.SerializeToCodedStream(&coded)) return -1;
  coded.Trim();
  return coded.HadError() ? -1 : static_cast<int>(coded.ByteCount());
}
