// collective_rendezvous.cc — POSIX shared memory, a process-shared robust mutex and condvar.
#include "driver/collective_rendezvous.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "driver/internal.h"

namespace simgpu {

namespace {

constexpr uint64_t kMagic = 0x7367636f6c6c3031ull;  // "sgcoll01"
constexpr int kMaxRanks = 256;
// A rank publishes launch k+1 only after launch k completed (a collective occupies its stream,
// and the next one on the stream is scheduled after it), so ranks are at most one launch apart
// per group and stream: a small ring of slots suffices.
constexpr int kSlots = 16;

struct Slot {
  uint64_t index_plus_one;  // which launch this slot holds (0: none yet)
  uint32_t arrived;
  uint64_t latest_start_ns;
};

struct Segment {
  std::atomic<uint64_t> magic;  // set last by the creator: the rest is initialised
  uint32_t world;
  pthread_mutex_t mu;  // robust: a rank that dies holding it does not wedge the others
  pthread_cond_t cv;   // broadcast on every publication and on abort
  uint32_t attached;
  uint32_t aborted;
  uint64_t aborted_index;
  Slot slots[kSlots];
};

[[noreturn]] void Fatal(const std::string& what) {
  std::fprintf(stderr, "simgpu: %s\n", what.c_str());
  std::exit(2);
}

int ParseRankVar(const char* var, int fallback) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1000000) {
    Fatal(std::string(var) + "=\"" + v + "\" is not a non-negative integer");
  }
  return static_cast<int>(n);
}

std::string SanitizedName(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  return out.substr(0, 200);
}

void Lock(Segment* s) {
  if (pthread_mutex_lock(&s->mu) == EOWNERDEAD) pthread_mutex_consistent(&s->mu);
}

void SleepMs(int ms) {
  timespec ts{0, ms * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

class CollectiveGroup {
 public:
  std::string shm_name;
  Segment* seg = nullptr;
  std::atomic<uint64_t> next_index{0};
};

namespace {

std::mutex g_mu;
std::map<std::string, CollectiveGroup*>* g_groups = new std::map<std::string, CollectiveGroup*>;

// At exit, the last process attached to a segment removes its name. The mapping itself stays
// (the device thread may still be completing a collective).
void DetachAll() {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto& [name, g] : *g_groups) {
    Lock(g->seg);
    bool last = --g->seg->attached == 0;
    pthread_mutex_unlock(&g->seg->mu);
    if (last) shm_unlink(g->shm_name.c_str());
  }
}

Segment* CreateOrOpen(const std::string& name, uint32_t world) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  bool creator = fd >= 0;
  if (!creator) {
    if (errno != EEXIST) Fatal("shm_open(" + name + "): " + std::strerror(errno));
    fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) Fatal("shm_open(" + name + "): " + std::strerror(errno));
    // The creator sizes it right after creating it; wait for that before mapping.
    for (int i = 0;; ++i) {
      struct stat st {};
      if (fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(sizeof(Segment))) break;
      if (i > 5000) Fatal("shared memory " + name + " has the wrong size (another simgpu?)");
      SleepMs(1);
    }
  } else if (ftruncate(fd, sizeof(Segment)) != 0) {
    Fatal("ftruncate(" + name + "): " + std::strerror(errno));
  }
  void* p = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) Fatal("mmap(" + name + "): " + std::strerror(errno));
  auto* seg = static_cast<Segment*>(p);
  if (creator) {
    seg->world = world;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&seg->mu, &ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&seg->cv, &ca);
    seg->magic.store(kMagic, std::memory_order_release);
  } else {
    for (int i = 0; seg->magic.load(std::memory_order_acquire) != kMagic; ++i) {
      if (i > 5000) Fatal("shared memory " + name + " was never initialised");
      SleepMs(1);
    }
  }
  if (seg->world != world) {
    Fatal("shared memory " + name + " belongs to a job of " + std::to_string(seg->world) +
          " ranks, not SIMGPU_WORLD=" + std::to_string(world) + " (set SIMGPU_JOB)");
  }
  Lock(seg);
  ++seg->attached;
  pthread_mutex_unlock(&seg->mu);
  return seg;
}

}  // namespace

const RankPlacement& Placement() {
  static const RankPlacement placement = [] {
    RankPlacement p;
    p.world = ParseRankVar("SIMGPU_WORLD", 1);
    if (p.world < 1 || p.world > kMaxRanks) {
      Fatal("SIMGPU_WORLD must be 1.." + std::to_string(kMaxRanks));
    }
    const char* var = std::getenv("RANK") && *std::getenv("RANK") ? "RANK" : "SLURM_PROCID";
    p.rank = ParseRankVar(var, 0);
    if (p.rank >= p.world) {
      Fatal(std::string(var) + "=" + std::to_string(p.rank) + " is not below SIMGPU_WORLD=" +
            std::to_string(p.world));
    }
    return p;
  }();
  return placement;
}

uint64_t CollectiveTimeoutNs() {
  static const uint64_t ns = [] {
    const char* v = std::getenv("SIMGPU_COLLECTIVE_TIMEOUT");
    return v && *v ? ParseDurationNs("SIMGPU_COLLECTIVE_TIMEOUT", v) : 60ull * 1000000000ull;
  }();
  return ns;
}

CollectiveGroup* AttachCollectiveGroup(const std::string& group) {
  const RankPlacement& p = Placement();
  if (p.world == 1) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_groups->find(group);
  if (it != g_groups->end()) return it->second;
  const char* job = std::getenv("SIMGPU_JOB");
  std::string key = job && *job ? std::string(job) : "ppid" + std::to_string(getppid());
  auto* g = new CollectiveGroup;  // lives until exit
  g->shm_name = "/simgpu-" + SanitizedName(key) + "-" + SanitizedName(group);
  g->seg = CreateOrOpen(g->shm_name, static_cast<uint32_t>(p.world));
  if (g_groups->empty()) std::atexit(DetachAll);
  (*g_groups)[group] = g;
  return g;
}

uint64_t NextCollectiveIndex(CollectiveGroup* group) { return group->next_index++; }

void PublishCollectiveStart(CollectiveGroup* group, uint64_t index, uint64_t start_ns) {
  Segment* s = group->seg;
  Lock(s);
  Slot& slot = s->slots[index % kSlots];
  if (slot.index_plus_one != index + 1) {
    slot.index_plus_one = index + 1;
    slot.arrived = 0;
    slot.latest_start_ns = 0;
  }
  ++slot.arrived;
  if (start_ns > slot.latest_start_ns) slot.latest_start_ns = start_ns;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

RendezvousState AwaitCollective(CollectiveGroup* group, uint64_t index, uint64_t wait_ns,
                                uint64_t* latest_start_ns) {
  Segment* s = group->seg;
  uint64_t deadline = NowNs() + wait_ns;
  timespec ts{static_cast<time_t>(deadline / 1000000000ull),
              static_cast<long>(deadline % 1000000000ull)};
  Lock(s);
  RendezvousState state = RendezvousState::kPending;
  for (;;) {
    const Slot& slot = s->slots[index % kSlots];
    if (slot.index_plus_one == index + 1 && slot.arrived >= s->world) {
      *latest_start_ns = slot.latest_start_ns;
      state = RendezvousState::kComplete;
      break;
    }
    if (s->aborted) {
      state = RendezvousState::kFailed;
      break;
    }
    int rc = pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    if (rc == EOWNERDEAD) pthread_mutex_consistent(&s->mu);
    if (rc == ETIMEDOUT) break;
  }
  pthread_mutex_unlock(&s->mu);
  return state;
}

void AbortCollectiveGroup(CollectiveGroup* group, uint64_t index) {
  Segment* s = group->seg;
  Lock(s);
  if (!s->aborted) {
    s->aborted = 1;
    s->aborted_index = index;
  }
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

}  // namespace simgpu
