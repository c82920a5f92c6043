// reporting.cc — tool hooks, correlation ids, and the ground-truth log (SIMGPU_TRUTH).
//
// Truth log: one JSON object per line, appended (O_APPEND, so forked or cooperating processes may
// share a file; "%p" in the path is replaced by the pid). Lines are buffered in memory and written
// by the device thread when it goes idle, and at exit, never by the submitting thread's hot path.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver/internal.h"

namespace simgpu {
namespace {

std::atomic<const SimgpuToolHooks*> g_hooks{nullptr};
std::atomic<uint32_t> g_next_correlation{1};

struct TruthLog {
  std::mutex mu;
  int fd = -1;
  std::string buffer;
};

TruthLog& Truth() {
  static TruthLog* t = new TruthLog;  // never freed: written during exit
  return *t;
}

// Whether the log is open (set once, under the lock, by TruthOpen at initialisation). Asked without
// the lock: the device thread asks for every op and the submitting thread for every API call, and
// NVIDIA's runtime and CUPTI take no process-wide lock per op for a log that does not exist, so a
// tool measured on simgpu must not pay one either (the agent's cost on launch-bound loops,
// BENCHMARKS.md). Only a true answer leads to the lock, which then checks the fd again.
std::atomic<bool> g_truth_open{false};

void AppendEscaped(std::string* out, const char* s) {
  out->push_back('"');
  for (; s && *s; ++s) {
    unsigned char ch = static_cast<unsigned char>(*s);
    if (ch == '"' || ch == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(ch));
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      *out += buf;
    } else {
      out->push_back(static_cast<char>(ch));
    }
  }
  out->push_back('"');
}

void Field(std::string* out, const char* key, uint64_t v) {
  *out += ",\"";
  *out += key;
  *out += "\":";
  *out += std::to_string(v);
}

void Field(std::string* out, const char* key, const char* v) {
  *out += ",\"";
  *out += key;
  *out += "\":";
  AppendEscaped(out, v);
}

const char* OpKindName(SimgpuOpKind k) {
  switch (k) {
    case SIMGPU_OP_KERNEL: return "kernel";
    case SIMGPU_OP_MEMCPY: return "memcpy";
    case SIMGPU_OP_MEMSET: return "memset";
    case SIMGPU_OP_SYNC: return "sync";
    case SIMGPU_OP_MEMORY_ALLOC: return "alloc";
    case SIMGPU_OP_MEMORY_FREE: return "free";
    case SIMGPU_OP_STREAM_CREATED: return "stream_created";
    case SIMGPU_OP_COLLECTIVE: return "collective";
  }
  return "unknown";
}

const char* CopyKindName(uint8_t k) {
  switch (k) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
  }
  return "unknown";
}

const char* MemKindName(uint32_t k) {
  switch (k) {
    case 1: return "pageable";
    case 2: return "pinned";
    case 3: return "device";
    case 5: return "managed";
  }
  return "unknown";
}

const char* SyncTypeName(uint32_t t) {
  switch (t) {
    case 1: return "event_synchronize";
    case 2: return "stream_wait_event";
    case 3: return "stream_synchronize";
    case 4: return "context_synchronize";
  }
  return "unknown";
}

std::string TruthLine(const SimgpuOpRecord& r, const OpTruthExtra& x) {
  std::string s = "{\"kind\":";
  AppendEscaped(&s, OpKindName(r.kind));
  if (r.name) Field(&s, "name", r.name);
  if (x.demangled) Field(&s, "demangled", x.demangled);
  if (x.api) Field(&s, "api", x.api);
  if (x.submit_api) {
    Field(&s, "submit_api", x.submit_api);
    Field(&s, "submit_domain", x.submit_domain == 1 ? "driver" : "runtime");
  }
  Field(&s, "device", r.device_id);
  Field(&s, "context", r.context_id);
  if (r.stream_id != 0xFFFFFFFFu) Field(&s, "stream", r.stream_id);
  Field(&s, "start_ns", r.start_ns);
  Field(&s, "end_ns", r.end_ns);
  Field(&s, "submit_ns", x.submit_ns);
  Field(&s, "correlation_id", r.correlation_id);
  Field(&s, "pid", static_cast<uint64_t>(getpid()));
  Field(&s, "tid", x.submit_tid);
  switch (r.kind) {
    case SIMGPU_OP_KERNEL:
    case SIMGPU_OP_COLLECTIVE: {
      char buf[160];
      std::snprintf(buf, sizeof buf, ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"fault\":%s",
                    r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2],
                    x.fault ? "true" : "false");
      s += buf;
      Field(&s, "registers_per_thread", r.registers_per_thread);
      Field(&s, "static_shared_bytes", r.static_shared_bytes);
      Field(&s, "dynamic_shared_bytes", r.dynamic_shared_bytes);
      if (r.kind == SIMGPU_OP_COLLECTIVE) Field(&s, "wait_ns", r.wait_ns);
      if (r.graph_id != 0) {
        Field(&s, "graph_id", r.graph_id);
        Field(&s, "graph_node_id", r.graph_node_id);
      }
      break;
    }
    case SIMGPU_OP_MEMCPY:
      Field(&s, "bytes", r.bytes);
      Field(&s, "copy_kind", CopyKindName(r.copy_kind));
      Field(&s, "src_kind", MemKindName(r.src_kind));
      Field(&s, "dst_kind", MemKindName(r.dst_kind));
      s += (r.flags & 1) ? ",\"async\":true" : ",\"async\":false";
      break;
    case SIMGPU_OP_MEMSET:
      Field(&s, "bytes", r.bytes);
      Field(&s, "value", r.memset_value);
      Field(&s, "memory_kind", MemKindName(r.memory_kind));
      s += (r.flags & 1) ? ",\"async\":true" : ",\"async\":false";
      break;
    case SIMGPU_OP_SYNC:
      Field(&s, "sync_type", SyncTypeName(r.sync_type));
      if (r.event_id != 0xFFFFFFFFu) Field(&s, "event", r.event_id);
      break;
    case SIMGPU_OP_MEMORY_ALLOC:
    case SIMGPU_OP_MEMORY_FREE:
      Field(&s, "address", r.address);
      Field(&s, "bytes", r.bytes);
      Field(&s, "memory_kind", MemKindName(r.memory_kind));
      break;
    case SIMGPU_OP_STREAM_CREATED:
      Field(&s, "flags", r.flags);
      break;
  }
  s += "}";
  return s;
}

}  // namespace

const SimgpuToolHooks* CurrentHooks() { return g_hooks.load(std::memory_order_acquire); }

void ReportOp(const SimgpuOpRecord& rec, const OpTruthExtra& extra) {
  const SimgpuToolHooks* h = CurrentHooks();
  if (h && h->on_op) h->on_op(&rec);
  if (TruthEnabled()) TruthAppend(TruthLine(rec, extra));
}

void TruthOpen(const std::string& path) {
  std::string p = path;
  for (size_t pos; (pos = p.find("%p")) != std::string::npos;) {
    p.replace(pos, 2, std::to_string(getpid()));
  }
  TruthLog& t = Truth();
  std::lock_guard<std::mutex> lock(t.mu);
  t.fd = open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (t.fd < 0) std::fprintf(stderr, "simgpu: cannot open SIMGPU_TRUTH=%s\n", p.c_str());
  g_truth_open.store(t.fd >= 0, std::memory_order_release);
}

bool TruthApiEnabled() { return GetConfig().truth_api && TruthEnabled(); }

bool TruthEnabled() { return g_truth_open.load(std::memory_order_acquire); }

void TruthAppend(const std::string& json_object) {
  TruthLog& t = Truth();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.fd < 0) return;
  t.buffer += json_object;
  t.buffer += '\n';
}

bool TruthFlushDue() {
  if (!TruthEnabled()) return false;  // nothing is ever buffered without a log
  TruthLog& t = Truth();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.buffer.size() >= (256u << 10);  // a device that never idles still writes its log
}

void TruthFlush() {
  TruthLog& t = Truth();
  std::lock_guard<std::mutex> lock(t.mu);
  size_t done = 0;
  while (t.fd >= 0 && done < t.buffer.size()) {
    ssize_t n = write(t.fd, t.buffer.data() + done, t.buffer.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  t.buffer.clear();
}

}  // namespace simgpu

extern "C" {

__attribute__((visibility("default"))) void simgpuDriverSetToolHooks(const SimgpuToolHooks* hooks) {
  // Each installation gets its own copy that is never freed: a device thread may be inside an
  // old hook while it is replaced. All of them stay on a list (reachable, not a leak).
  const SimgpuToolHooks* copy = nullptr;
  if (hooks != nullptr) {
    static std::mutex mu;
    static auto* all = new std::vector<std::unique_ptr<SimgpuToolHooks>>;
    std::lock_guard<std::mutex> lock(mu);
    all->push_back(std::make_unique<SimgpuToolHooks>(*hooks));
    copy = all->back().get();
  }
  simgpu::g_hooks.store(copy, std::memory_order_release);
}

__attribute__((visibility("default"))) void simgpuDriverReportEnded(void) { simgpu::ReportEndedOps(); }

__attribute__((visibility("default"))) uint32_t simgpuDriverNextCorrelationId(void) {
  uint32_t id;
  do {
    id = simgpu::g_next_correlation.fetch_add(1, std::memory_order_relaxed);
  } while (id == 0);
  return id;
}

}  // extern "C"
