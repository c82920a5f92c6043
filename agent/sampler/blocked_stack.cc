#include "agent/sampler/blocked_stack.h"

#include <libunwind.h>  // gs_libunwind_pic: local unwinding only (UNW_LOCAL_ONLY)
#include <setjmp.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/python/fault_guard.h"
#include "agent/python/raw_memory.h"

namespace gs {
namespace {

constexpr size_t kPage = 4096;
// Zeroed words after the copy: an unwind that reaches the end of a truncated copy reads a zero
// return address there (end of stack) instead of whatever follows the buffer.
constexpr size_t kSlackBytes = kPage;
// The innermost frame record lies just above the blocked libc frames: look no further than this.
constexpr size_t kFrameRecordScanBytes = 8192;
// The first copy: enough for most blocked stacks (a C++ loop, CPython's eval loop a few calls
// deep); a walk that runs off its end copies the whole window.
constexpr size_t kFirstWindow = 32 * 1024;

}  // namespace

bool BlockedStackUnwinder::Init(size_t window) {
  if (buffer_ != nullptr) return true;
  if (window < kPage) window = kPage;
  if (window > 4 * kDefaultWindow) window = 4 * kDefaultWindow;  // Copy's iovec array
  window_ = (window + kPage - 1) & ~(kPage - 1);
  // +16: the copy keeps SP's position modulo 16; + slack (see above).
  buffer_.reset(new uint64_t[(window_ + 16 + kSlackBytes) / sizeof(uint64_t)]());
  if (!InstallFaultGuard()) {
    buffer_.reset();
    return false;
  }
  // Asked for, not had: libunwind 1.6.2's configure never defines HAVE___THREAD, so
  // unw_set_caching_policy turns UNW_CACHE_PER_THREAD into the global cache. Its lock is taken
  // with every signal blocked (two sigprocmask calls per unw_step: see BENCHMARKS.md, sampler
  // with 8 threads) and held only while a PC's unwind info is looked up (find_reg_state), not
  // while the copied stack's words are read (apply_reg_state, after the release): a fault in a
  // garbage frame that jumps out of unw_step (Walk) leaves no lock held.
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  return true;
}

size_t BlockedStackUnwinder::Copy(uint64_t sp, size_t want, uint64_t stack_top) {
  uint8_t* dst = reinterpret_cast<uint8_t*>(buffer_.get()) + (sp & 15);
  if (stack_top > sp) {
    // Up to the thread's known stack top: all of it mapped (the thread's live frames, then its
    // TLS and thread descriptor), so plain loads; the FaultScope only covers a thread that
    // exited and had its stack unmapped meanwhile.
    const size_t bytes = GuardedCopy(dst, sp, want < stack_top - sp ? want : static_cast<size_t>(stack_top - sp));
    std::memset(dst + bytes, 0, kSlackBytes);
    return bytes;
  }
  // One remote iovec per page: process_vm_readv never splits an iovec, so the transfer stops
  // exactly at the first page that cannot be read.
  constexpr size_t kMaxIov = BlockedStackUnwinder::kDefaultWindow / kPage * 4 + 1;
  iovec remote[kMaxIov];
  size_t count = 0;
  uint64_t at = sp;
  const uint64_t end = sp + want;
  while (at < end && count < kMaxIov) {
    uint64_t next = (at & ~uint64_t{kPage - 1}) + kPage;
    if (next > end) next = end;
    remote[count].iov_base = reinterpret_cast<void*>(at);
    remote[count].iov_len = next - at;
    ++count;
    at = next;
  }
  ssize_t n = -1;
  if (method_ == CopyMethod::kProcessVmReadv) {
    iovec local{dst, static_cast<size_t>(at - sp)};
    n = process_vm_readv(getpid(), &local, 1, remote, count, 0);
    // Refused outright (a seccomp profile, a kernel without it): guarded loads from now on.
    if (n < 0 && (errno == ENOSYS || errno == EPERM || errno == EACCES)) method_ = CopyMethod::kGuardedLoads;
  }
  if (method_ == CopyMethod::kGuardedLoads) n = static_cast<ssize_t>(GuardedCopy(dst, sp, at - sp));
  if (n <= 0) return 0;
  std::memset(dst + n, 0, kSlackBytes);
  return static_cast<size_t>(n) & ~size_t{7};
}

// Word loads from the thread's stack under a FaultScope: the copy ends at the first page that
// faults. Not instrumented (GS_RACY_READ): the words belong to another thread's live stack, redzones
// and all.
GS_RACY_READ size_t BlockedStackUnwinder::GuardedCopy(uint8_t* dst, uint64_t src, size_t bytes) {
  volatile size_t done = 0;
  FaultScope scope;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    auto* out = reinterpret_cast<uint64_t*>(dst);
    while (done < bytes) {
      uint64_t page_end = ((src + done) & ~uint64_t{kPage - 1}) + kPage;
      if (page_end > src + bytes) page_end = src + bytes;
      const size_t words = static_cast<size_t>(page_end - (src + done)) / 8;
      const volatile uint64_t* in = reinterpret_cast<const volatile uint64_t*>(src + done);
      uint64_t* to = out + done / 8;
      for (size_t i = 0; i < words; ++i) to[i] = in[i];
      done = page_end - src;
    }
    FaultScopeEnd(&scope);
  }
  return done & ~size_t{7};
}

uint64_t BlockedStackUnwinder::GuessFramePointer(uint64_t base, size_t bytes, uint64_t from) const {
  const auto* words = reinterpret_cast<const uint64_t*>(base);
  const size_t first = (from - base) / 8;
  size_t limit = first + kFrameRecordScanBytes / 8;
  if (limit > bytes / 8) limit = bytes / 8;
  for (size_t i = first; i + 1 < limit; ++i) {
    const uint64_t saved = words[i];
    const uint64_t at = base + i * 8;
    // The saved RBP points upward inside the copy, or is 0: the caller keeps no frame pointer
    // (a thread's entry, code built without them), and the chain of records ends here.
    if (saved != 0 && (saved <= at || saved >= base + bytes || (saved & 7) != 0)) continue;
    const uint64_t ret = words[i + 1];
    if (ret < 4096 || ret >= (uint64_t{1} << 47)) continue;
    unw_proc_info_t info;
    if (unw_get_proc_info_by_ip(unw_local_addr_space, ret - 1, &info, nullptr) == 0) return at;
  }
  return 0;
}

int BlockedStackUnwinder::Unwind(uint64_t sp, uint64_t pc, uint64_t* pcs, int max, size_t* copied,
                                 uint64_t stack_top) {
  if (copied != nullptr) *copied = 0;
  if (max <= 0) return 0;
  pcs[0] = pc;
  if (buffer_ == nullptr || max == 1 || sp == 0 || (sp & 7) != 0) return 1;
  // Most blocked stacks are a few KiB deep: copy a small window first, and the whole window only
  // when the walk ran off the end of the small one.
  for (size_t want = window_ < kFirstWindow ? window_ : kFirstWindow;; want *= 8) {
    if (want > window_) want = window_;
    const size_t bytes = Copy(sp, want, stack_top);
    if (copied != nullptr) *copied = bytes;
    if (bytes < 16) return 1;
    const uint64_t base = reinterpret_cast<uint64_t>(buffer_.get()) + (sp & 15);
    const uint64_t delta = base - sp;
    auto* words = reinterpret_cast<uint64_t*>(base);
    for (size_t i = 0; i < bytes / 8; ++i) {
      if (words[i] >= sp && words[i] < sp + bytes) words[i] += delta;
    }
    // Pass 1: RBP unknown; it points at zeros outside the copy, so a frame that needs it
    // unwinds to an SP outside the copy and the walk stops there.
    WalkEnd end;
    int n = Walk(sp, base, bytes, pc, reinterpret_cast<uint64_t>(zeros_), pcs, max, &end);
    if (end.needs_rbp && n < max) {
      // Pass 2: that frame's RBP is the live one, and its frame record lies at or above its SP
      // (below it are the frames already unwound, whose dead locals may hold stale records).
      const uint64_t rbp = GuessFramePointer(base, bytes, end.last_sp);
      if (rbp != 0) n = Walk(sp, base, bytes, pc, rbp, pcs, max, &end);
    }
    if (!end.beyond_copy || n >= max || bytes < want || want >= window_) return n;
  }
}

int BlockedStackUnwinder::Walk(uint64_t origin, uint64_t base, size_t bytes, uint64_t pc, uint64_t rbp,
                               uint64_t* pcs, int max, WalkEnd* end) {
  ucontext_t uc;
  std::memset(&uc, 0, sizeof uc);
  uc.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(base);
  uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(pc);
  uc.uc_mcontext.gregs[REG_RBP] = static_cast<greg_t>(rbp);
  const uint64_t sentinel_sp = reinterpret_cast<uint64_t>(zeros_) + 16;
  volatile int n = 1;
  volatile uint64_t last_sp = base;
  volatile bool needs_rbp = false, beyond = false;
  FaultScope scope;
  FaultScopeBegin(&scope);
  if (sigsetjmp(scope.env, 0) == 0) {
    FaultScopeArm(&scope);
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, &uc, UNW_INIT_SIGNAL_FRAME) == 0) {
      while (n < max) {
        const int stepped = unw_step(&cursor);
        unw_word_t ip = 0, frame_sp = 0;
        if (unw_get_reg(&cursor, UNW_REG_SP, &frame_sp) != 0) break;
        // The caller's frame starts past the copy: its return address came from the zeroed
        // slack, or its CFA from a saved RBP that points past the copied part of the original
        // stack (not relocated); a larger copy may go further.
        beyond = (frame_sp > base + bytes && frame_sp <= base + bytes + kSlackBytes) ||
                 (frame_sp >= origin + bytes && frame_sp < origin + window_);
        // The frame's CFA came from the sentinel RBP (pass 1): its return address read as 0,
        // which libunwind takes for the end of the stack.
        needs_rbp = frame_sp == sentinel_sp;
        if (stepped <= 0) break;
        // A frame outside the copy: the sentinel RBP was used (pass 1), or a garbage word was
        // followed. Either way, stop here.
        if (frame_sp < base || frame_sp > base + bytes) break;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        pcs[n] = ip;
        n = n + 1;
        last_sp = frame_sp;
      }
    }
    FaultScopeEnd(&scope);
  }
  end->last_sp = last_sp;
  end->needs_rbp = needs_rbp;
  end->beyond_copy = beyond;
  return n;
}

}  // namespace gs
