#include "agent/nvtx/nvtx_collector.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "agent/core/clock.h"
#include "agent/record/ring.h"
#include "proto/batch_codec.h"

namespace gs {
namespace nvtx {

namespace pb = gpustall::trace;

namespace {

// A registered string or domain: allocated at registration, never freed (records and the
// application keep the handles; NVTX has no "unregister string"). Every one is on g_registered's
// list, so it stays reachable (no leak-checker report) without anyone else holding it.
struct Registered {
  std::string text;
  const Registered* next = nullptr;
};
std::atomic<const Registered*> g_registered{nullptr};

const Registered* Register(const char* text, size_t len) {
  auto* r = new (std::nothrow) Registered{std::string(text != nullptr ? text : "", text != nullptr ? len : 0)};
  if (r == nullptr) return nullptr;
  r->next = g_registered.load(std::memory_order_relaxed);
  while (!g_registered.compare_exchange_weak(r->next, r, std::memory_order_release, std::memory_order_relaxed)) {
  }
  return r;
}

enum NvtxRecordType : uint8_t {
  kRecordRange = 1,       // NvtxRangeRecordBody + name bytes
  kRecordThreadName = 2,  // NvtxThreadNameBody + name bytes
};

struct NvtxRangeRecordBody {
  uint64_t tid;
  uint64_t start_ns;
  uint64_t end_ns;
  const void* registered;
  const void* domain;
  uint32_t category;
  uint32_t color;
  uint32_t depth;
  uint32_t name_len;
};
static_assert(sizeof(NvtxRangeRecordBody) == 56, "fixed-size range record");

struct NvtxThreadNameBody {
  uint64_t tid;
  uint32_t name_len;
  uint32_t reserved;
};
static_assert(sizeof(NvtxThreadNameBody) == 16, "fixed-size thread-name record");

// An open range: its attributes with the message copied (the caller's buffer may be gone by the
// time the range closes).
struct OpenRange {
  uint64_t start_ns;
  const void* registered;
  const void* domain;
  uint32_t category;
  uint32_t color;
  uint32_t name_len;
  char name[kMaxNameBytes];
};

RangeAttributes AttributesOf(const OpenRange& r) {
  RangeAttributes a;
  a.name = r.name;
  a.name_len = r.name_len;
  a.registered = r.registered;
  a.domain = r.domain;
  a.category = r.category;
  a.color = r.color;
  return a;
}

void CopyInto(OpenRange* r, const RangeAttributes& a, uint64_t start_ns) {
  r->start_ns = start_ns;
  r->registered = a.registered;
  r->domain = a.domain;
  r->category = a.category;
  r->color = a.color;
  const size_t n = std::min<size_t>(a.name_len, kMaxNameBytes);
  if (n > 0) std::memcpy(r->name, a.name, n);
  r->name_len = static_cast<uint32_t>(n);
}

// The calling thread's slot. initial-exec: no lazy TLS allocation on first access (that would
// malloc inside the application's NVTX call); the agent already relies on static TLS surplus for
// a few words when dlopen'ed.
__attribute__((tls_model("initial-exec"))) thread_local void* t_slot = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool t_no_slot = false;

uint64_t CurrentTid() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

}  // namespace

struct NvtxCollector::ThreadSlot {
  enum State : int { kFree = 0, kClaiming = 1, kOwned = 2, kExited = 3 };
  std::atomic<int> state{kFree};
  uint64_t tid = 0;            // written while kClaiming
  NvtxCollector* owner = nullptr;
  // Producer-only.
  int depth = 0;               // entries of `open` in use
  uint32_t overflow = 0;       // pushes beyond kMaxDepth still open
  OpenRange open[kMaxDepth];
  SpscRing ring;
  // Producer-written, writer-read (cumulative).
  alignas(64) std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> ring_full{0};
  std::atomic<uint64_t> too_deep{0};
  std::atomic<uint64_t> unmatched{0};
  alignas(64) uint8_t ring_memory[kRingBytes];
};

struct StartedRange {
  std::atomic<uint64_t> id{0};  // 0 free, kBusy being written or read, else the open range's id
  uint64_t tid = 0;
  OpenRange range;
};

struct NvtxCollector::Pool {
  static constexpr uint64_t kBusy = ~uint64_t{0};
  pthread_key_t key;
  ThreadSlot slots[kMaxThreads];
  StartedRange started[kStartEndSlots];
};

struct NvtxCollector::WriterState {
  std::vector<std::pair<uint64_t, std::vector<trace::NvtxRangeRecord>>> by_thread;
  std::unordered_map<uint64_t, std::string> thread_names;  // names given by nvtxNameOsThread
  std::string scratch;
};

namespace {
// Static storage, constant-initialised (no constructor-order question with other libraries'
// constructors that may call NVTX) and never destroyed: the union's destructor does not run the
// collector's, so nothing is torn down at exit while other threads may still call NVTX.
union CollectorStorage {
  constexpr CollectorStorage() : collector() {}
  ~CollectorStorage() {}
  NvtxCollector collector;
};
#if defined(__clang__)
[[clang::require_constant_initialization]]
#elif defined(__GNUC__) && __GNUC__ >= 10
__constinit
#endif
CollectorStorage g_storage;

void ForkChildHook() { NvtxCollector::Instance().OnForkChild(); }
}  // namespace

NvtxCollector& NvtxCollector::Instance() { return g_storage.collector; }

bool NvtxCollector::EnsureStarted() {
  if (started()) return true;
  bool expected = false;
  if (!starting_.compare_exchange_strong(expected, true)) {
    // Another module's NVTX is initialising at the same time: wait for it (bounded).
    for (int i = 0; i < 100000 && !started(); ++i) sched_yield();
    return started();
  }
  // One anonymous mapping, touched page by page as threads claim slots; never unmapped.
  void* memory = mmap(nullptr, sizeof(Pool), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return false;  // starting_ stays set: NVTX stays off for good
  Pool* pool = new (memory) Pool;  // default-init: the rings' pages stay untouched
  if (pthread_key_create(&pool->key, &NvtxCollector::ReleaseSlot) != 0) return false;
  for (ThreadSlot& s : pool->slots) {
    s.owner = this;
    s.ring.Init(s.ring_memory, kRingBytes);
  }
  pthread_atfork(nullptr, nullptr, &ForkChildHook);
  pool_.store(pool, std::memory_order_release);
  return true;
}

NvtxCollector::ThreadSlot* NvtxCollector::Slot() {
  if (__builtin_expect(t_slot != nullptr, 1)) return static_cast<ThreadSlot*>(t_slot);
  return ClaimSlot();
}

NvtxCollector::ThreadSlot* NvtxCollector::ClaimSlot() {
  Pool* pool = pool_.load(std::memory_order_acquire);
  if (pool == nullptr) return nullptr;
  if (t_no_slot) {  // this thread found the pool full before: do not scan on every call
    no_slot_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  for (ThreadSlot& s : pool->slots) {
    int expected = ThreadSlot::kFree;
    if (!s.state.compare_exchange_strong(expected, ThreadSlot::kClaiming, std::memory_order_acquire)) continue;
    s.tid = CurrentTid();
    s.depth = 0;
    s.overflow = 0;
    s.state.store(ThreadSlot::kOwned, std::memory_order_release);
    t_slot = &s;
    pthread_setspecific(pool->key, &s);
    return &s;
  }
  t_no_slot = true;
  no_slot_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void NvtxCollector::ReleaseSlot(void* slot) {
  // Thread exit: the writer drains the ring once more and frees the slot. Ranges still open are
  // lost (they never closed); a later NVTX call on this thread during TLS teardown gets no slot.
  auto* s = static_cast<ThreadSlot*>(slot);
  t_slot = nullptr;
  t_no_slot = true;
  s->state.store(ThreadSlot::kExited, std::memory_order_release);
}

bool NvtxCollector::WriteRange(ThreadSlot* slot, uint64_t tid, uint64_t start_ns, uint64_t end_ns,
                               const RangeAttributes& a, uint32_t depth) {
  // On demand, between windows: the range ended where no trace will have it.
  if (between_windows_.load(std::memory_order_relaxed)) return true;
  const size_t name_len = a.registered != nullptr ? 0 : std::min<size_t>(a.name_len, kMaxNameBytes);
  const size_t size = sizeof(RingRecordHeader) + sizeof(NvtxRangeRecordBody) + name_len;
  uint8_t* p = slot->ring.BeginWrite(size);
  if (p == nullptr) {
    slot->ring_full.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  auto* header = reinterpret_cast<RingRecordHeader*>(p);
  header->size = static_cast<uint32_t>((size + 7) & ~size_t{7});
  header->type = kRecordRange;
  header->flags = 0;
  header->count = 0;
  auto* body = reinterpret_cast<NvtxRangeRecordBody*>(p + sizeof(RingRecordHeader));
  body->tid = tid;
  body->start_ns = start_ns;
  body->end_ns = end_ns;
  body->registered = a.registered;
  body->domain = a.domain;
  body->category = a.category;
  body->color = a.color;
  body->depth = depth;
  body->name_len = static_cast<uint32_t>(name_len);
  if (name_len > 0) std::memcpy(p + sizeof(RingRecordHeader) + sizeof(NvtxRangeRecordBody), a.name, name_len);
  slot->ring.CommitWrite(size);
  slot->recorded.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int NvtxCollector::Push(const RangeAttributes& a) {
  ThreadSlot* s = Slot();
  if (s == nullptr) return -1;
  if (s->depth >= kMaxDepth) {
    ++s->overflow;
    s->too_deep.fetch_add(1, std::memory_order_relaxed);
    return s->depth + static_cast<int>(s->overflow) - 1;
  }
  CopyInto(&s->open[s->depth], a, MonotonicNs());
  return s->depth++;
}

int NvtxCollector::Pop(const void* domain) {
  const uint64_t now = MonotonicNs();
  ThreadSlot* s = Slot();
  if (s == nullptr) return -1;
  if (s->overflow > 0) {  // the innermost pushes were not recorded: they close first
    --s->overflow;
    return s->depth + static_cast<int>(s->overflow);
  }
  // The innermost open range of this domain (domains have their own push/pop stacks, which
  // interleave on one thread: e.g. a library's domain inside the application's ranges).
  int i = s->depth - 1;
  while (i >= 0 && s->open[i].domain != domain) --i;
  if (i < 0) {
    s->unmatched.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  WriteRange(s, s->tid, s->open[i].start_ns, now, AttributesOf(s->open[i]), static_cast<uint32_t>(i));
  if (i != s->depth - 1)  // rare: close a hole left by another domain's inner ranges
    std::memmove(&s->open[i], &s->open[i + 1], sizeof(OpenRange) * static_cast<size_t>(s->depth - 1 - i));
  --s->depth;
  return i;
}

uint64_t NvtxCollector::Start(const RangeAttributes& a) {
  const uint64_t now = MonotonicNs();
  // Ids are never 0 and never kBusy; the table is indexed by their low bits.
  const uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  Pool* pool = pool_.load(std::memory_order_acquire);
  ThreadSlot* s = Slot();
  if (pool == nullptr || s == nullptr) return id;
  constexpr int kProbes = 8;
  for (int k = 0; k < kProbes; ++k) {
    StartedRange& e = pool->started[(id + static_cast<uint64_t>(k)) & (kStartEndSlots - 1)];
    uint64_t expected = 0;
    if (!e.id.compare_exchange_strong(expected, Pool::kBusy, std::memory_order_acquire)) continue;
    e.tid = s->tid;
    CopyInto(&e.range, a, now);
    e.id.store(id, std::memory_order_release);
    return id;
  }
  start_table_full_.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void NvtxCollector::End(uint64_t id) {
  const uint64_t now = MonotonicNs();
  Pool* pool = pool_.load(std::memory_order_acquire);
  if (pool == nullptr || id == 0 || id == Pool::kBusy) return;
  constexpr int kProbes = 8;
  for (int k = 0; k < kProbes; ++k) {
    StartedRange& e = pool->started[(id + static_cast<uint64_t>(k)) & (kStartEndSlots - 1)];
    uint64_t expected = id;
    if (!e.id.compare_exchange_strong(expected, Pool::kBusy, std::memory_order_acquire)) continue;
    ThreadSlot* s = Slot();  // the ending thread's ring carries the record
    if (s != nullptr) WriteRange(s, e.tid, e.range.start_ns, now, AttributesOf(e.range), 0);
    e.id.store(0, std::memory_order_release);
    return;
  }
  unmatched_.fetch_add(1, std::memory_order_relaxed);
}

void NvtxCollector::Mark(const RangeAttributes& a) {
  const uint64_t now = MonotonicNs();
  ThreadSlot* s = Slot();
  if (s == nullptr) return;
  WriteRange(s, s->tid, now, now, a, static_cast<uint32_t>(s->depth));
}

void NvtxCollector::NameThread(uint32_t tid, const char* name, size_t name_len) {
  ThreadSlot* s = Slot();
  if (s == nullptr || name == nullptr) return;
  const size_t n = std::min<size_t>(name_len, kMaxNameBytes);
  const size_t size = sizeof(RingRecordHeader) + sizeof(NvtxThreadNameBody) + n;
  uint8_t* p = s->ring.BeginWrite(size);
  if (p == nullptr) {
    s->ring_full.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto* header = reinterpret_cast<RingRecordHeader*>(p);
  header->size = static_cast<uint32_t>((size + 7) & ~size_t{7});
  header->type = kRecordThreadName;
  header->flags = 0;
  header->count = 0;
  auto* body = reinterpret_cast<NvtxThreadNameBody*>(p + sizeof(RingRecordHeader));
  body->tid = tid;
  body->name_len = static_cast<uint32_t>(n);
  body->reserved = 0;
  std::memcpy(p + sizeof(RingRecordHeader) + sizeof(NvtxThreadNameBody), name, n);
  s->ring.CommitWrite(size);
}

size_t NvtxCollector::DrainInto(ChunkBuilder* builder) {
  Pool* pool = pool_.load(std::memory_order_acquire);
  if (pool == nullptr) return 0;
  if (writer_ == nullptr) writer_ = new WriterState();
  WriterState& w = *writer_;
  w.by_thread.clear();  // threads come and go: only this drain's
  std::vector<uint64_t> named;  // threads named in this drain
  // Strings: interned each time (the builder's table dedups; a new trace after fork starts empty).
  auto intern_handle = [&](const void* handle, bool domain) -> uint32_t {
    if (handle == nullptr) return 0;
    return builder->InternString(domain ? DomainName(handle) : RegisteredStringText(handle));
  };
  size_t moved = 0;
  for (ThreadSlot& s : pool->slots) {
    const int state = s.state.load(std::memory_order_acquire);
    if (state != ThreadSlot::kOwned && state != ThreadSlot::kExited) continue;
    s.ring.Drain([&](const RingRecordHeader& h) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&h) + sizeof(RingRecordHeader);
      if (h.type == kRecordRange) {
        const auto* body = reinterpret_cast<const NvtxRangeRecordBody*>(p);
        trace::NvtxRangeRecord r;
        r.thread_id = body->tid;
        r.start_ns = body->start_ns;
        r.end_ns = std::max(body->end_ns, body->start_ns);
        if (body->registered != nullptr) {
          r.name = intern_handle(body->registered, false);
        } else {
          w.scratch.assign(reinterpret_cast<const char*>(p + sizeof(*body)), body->name_len);
          r.name = builder->InternString(w.scratch);
        }
        r.domain = intern_handle(body->domain, true);
        r.category = body->category;
        r.color = body->color;
        r.depth = body->depth;
        auto it = std::find_if(w.by_thread.begin(), w.by_thread.end(),
                               [&](const auto& t) { return t.first == r.thread_id; });
        if (it == w.by_thread.end()) {
          w.by_thread.emplace_back(r.thread_id, std::vector<trace::NvtxRangeRecord>());
          it = w.by_thread.end() - 1;
        }
        it->second.push_back(r);
        ++moved;
      } else if (h.type == kRecordThreadName) {
        const auto* body = reinterpret_cast<const NvtxThreadNameBody*>(p);
        w.thread_names[body->tid].assign(reinterpret_cast<const char*>(p + sizeof(*body)), body->name_len);
        named.push_back(body->tid);
      }
    });
    // kExited was published after the owner's last record: the drain above saw everything.
    if (state == ThreadSlot::kExited) {
      s.ring.Init(s.ring_memory, kRingBytes);
      s.state.store(ThreadSlot::kFree, std::memory_order_release);
    }
  }
  pb::Chunk* chunk = builder->chunk();
  for (auto& [tid, records] : w.by_thread) {
    if (records.empty()) continue;
    trace::NvtxRangeBatchEncoder encoder;
    encoder.Begin(chunk->add_nvtx_ranges(), tid, records.front().start_ns);
    for (const trace::NvtxRangeRecord& r : records) encoder.Add(r);
  }
  // Thread names: ours win over the writer's /proc names. The writer describes a thread in the
  // chunk where it first drains its ring, possibly after we named it: repeat our name after any
  // ThreadInfo of a named thread in this chunk (the reader applies them in order).
  for (int i = 0; i < chunk->threads_size(); ++i) {
    const uint64_t tid = chunk->threads(i).tid();
    auto it = w.thread_names.find(tid);
    if (it != w.thread_names.end() && chunk->threads(i).name() != it->second) named.push_back(tid);
  }
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  for (uint64_t tid : named) {
    pb::ThreadInfo* info = chunk->add_threads();
    info->set_tid(tid);
    info->set_name(w.thread_names[tid]);
  }
  builder->CountRecords(moved + named.size());
  return moved + named.size();
}

NvtxCounters NvtxCollector::counters() const {
  NvtxCounters c;
  c.no_slot = no_slot_.load(std::memory_order_relaxed);
  c.start_table_full = start_table_full_.load(std::memory_order_relaxed);
  c.unmatched = unmatched_.load(std::memory_order_relaxed);
  Pool* pool = pool_.load(std::memory_order_acquire);
  if (pool == nullptr) return c;
  for (const ThreadSlot& s : pool->slots) {
    c.ranges += s.recorded.load(std::memory_order_relaxed);
    c.ring_full += s.ring_full.load(std::memory_order_relaxed);
    c.too_deep += s.too_deep.load(std::memory_order_relaxed);
    c.unmatched += s.unmatched.load(std::memory_order_relaxed);
  }
  return c;
}

void NvtxCollector::AddStats(pb::Stats* stats) {
  // Stats has no NVTX fields: NVTX losses are capture-side losses like any other.
  const NvtxCounters c = counters();
  stats->set_other_dropped(stats->other_dropped() + c.Dropped());
}

void NvtxCollector::OnForkChild() {
  Pool* pool = pool_.load(std::memory_order_acquire);
  if (pool == nullptr) return;
  // Only this thread survives. Its open ranges stay open; every ring's pending records belong to
  // the parent's trace; other threads' slots are free again. The writer state (names, ids) goes
  // with the parent's trace: leaked, a new one is made at the child's first drain.
  for (ThreadSlot& s : pool->slots) {
    s.ring.Init(s.ring_memory, kRingBytes);
    if (&s == t_slot) {
      s.tid = CurrentTid();
      continue;
    }
    s.state.store(ThreadSlot::kFree, std::memory_order_relaxed);
  }
  writer_ = nullptr;
}

const char* RegisteredStringText(const void* handle) {
  return handle == nullptr ? "" : static_cast<const Registered*>(handle)->text.c_str();
}
const char* DomainName(const void* domain) { return RegisteredStringText(domain); }

const void* RegisterString(const void* /*domain*/, const char* text, size_t len) { return Register(text, len); }

const void* CreateDomain(const char* name, size_t len) { return Register(name, len); }

}  // namespace nvtx

bool NvtxCaptureExpected() {
  if (nvtx::NvtxCollector::Instance().started()) return true;
  const char* path = getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr || path[0] == '\0') return false;
  // The file this code is in (libgsagent.so, where NVTX's loader would find
  // InitializeInjectionNvtx2 next to this function).
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&NvtxCaptureExpected), &info) == 0 || info.dli_fname == nullptr)
    return false;
  // The same file (dlopen dedups by inode too), whatever the spelling of the path.
  struct stat named, self;
  return stat(path, &named) == 0 && stat(info.dli_fname, &self) == 0 && named.st_dev == self.st_dev &&
         named.st_ino == self.st_ino;
}

}  // namespace gs
