#include "agent/host_stats/host_stats_collector.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <utility>

#include "agent/core/clock.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;
using host_stats::ClassifyState;
using host_stats::StateClass;

uint64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

uint32_t AffinityCores(int64_t pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(static_cast<pid_t>(pid), sizeof(set), &set) != 0) return 0;
  return static_cast<uint32_t>(CPU_COUNT(&set));
}

}  // namespace

bool IsPythonHelperCommandLine(const std::string& cmdline) {
  for (const char* module : {"multiprocessing.resource_tracker", "multiprocessing.forkserver",
                             "multiprocessing.semaphore_tracker"})
    if (cmdline.find(module) != std::string::npos) return true;
  return false;
}

HostStatsCollector::HostStatsCollector(const Options& options) : options_(options) {
  if (options_.period_ms == 0) options_.period_ms = 500;
  if (options_.max_processes == 0) options_.max_processes = 1;
  self_pid_ = options_.self_pid != 0 ? options_.self_pid : static_cast<int64_t>(getpid());
  // Five probes a period: over a run of minutes, hundreds of probes per worker (the shares are
  // what the analysis uses), at half the cost of ten.
  probe_ms_ = options_.probe_ms != 0 ? options_.probe_ms : std::max<uint32_t>(10, options_.period_ms / 5);
  const long hz = sysconf(_SC_CLK_TCK);
  if (hz > 0) tick_ns_ = 1000000000ull / static_cast<uint64_t>(hz);
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) page_bytes_ = static_cast<uint64_t>(page);
  char path[256];
  snprintf(path, sizeof(path), "%s/%lld/task/%lld/children", options_.proc_root.c_str(),
           static_cast<long long>(self_pid_), static_cast<long long>(self_pid_));
  use_children_files_ = !options_.force_scan && access(path, R_OK) == 0;
  buffer_.reserve(8192);
}

bool HostStatsCollector::ReadFile(const char* path, size_t max_bytes) {
  buffer_.clear();
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char chunk[4096];
  while (buffer_.size() < max_bytes) {
    const ssize_t n = read(fd, chunk, std::min(sizeof(chunk), max_bytes - buffer_.size()));
    if (n <= 0) break;
    buffer_.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
  return !buffer_.empty();
}

std::string HostStatsCollector::ReadCmdline(int64_t pid) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%lld/cmdline", options_.proc_root.c_str(), static_cast<long long>(pid));
  return ReadFile(path, 4096) ? buffer_ : std::string();
}

size_t HostStatsCollector::DrainInto(ChunkBuilder* builder) { return CollectAt(MonotonicNs(), builder); }

size_t HostStatsCollector::CollectAt(uint64_t now_ns, ChunkBuilder* builder) {
  const bool probe_due = !started_ || now_ns >= next_probe_ns_;
  const bool record_due = !started_ || now_ns >= next_record_ns_;
  if (!probe_due && !record_due) return 0;
  const uint64_t cpu0 = ThreadCpuNs();
  if (!started_) {
    started_ = true;
    next_probe_ns_ = next_record_ns_ = now_ns;
  }
  // The search first, so that a process found now is probed (and recorded) at once.
  if (record_due) Discover();
  if (probe_due) {
    Probe();
    ++collections_;
    // Next due time on the grid, not relative to a late call: the rate stays the configured one.
    const uint64_t step = uint64_t{probe_ms_} * 1000000u;
    next_probe_ns_ = now_ns - (now_ns - next_probe_ns_) % step + step;
  }
  collection_ns_ += ThreadCpuNs() - cpu0;
  if (!record_due) return 0;
  ++collections_;
  const uint64_t step = uint64_t{options_.period_ms} * 1000000u;
  next_record_ns_ = now_ns - (now_ns - next_record_ns_) % step + step;
  return Record(now_ns, builder);
}

void HostStatsCollector::ListChildren(int64_t pid, std::vector<int64_t>* out, std::vector<int64_t>* tids) {
  tids->clear();
  if (!use_children_files_) {
    auto it = scan_children_.find(pid);
    if (it != scan_children_.end()) out->insert(out->end(), it->second.begin(), it->second.end());
  }
  // A child's parent is the thread that forked it: every thread's `children` file is read.
  char path[256];
  snprintf(path, sizeof(path), "%s/%lld/task", options_.proc_root.c_str(), static_cast<long long>(pid));
  DIR* dir = opendir(path);
  if (dir == nullptr) return;
  size_t threads = 0;
  while (dirent* e = readdir(dir)) {
    const int64_t tid = host_stats::ParsePidName(e->d_name);
    if (tid < 0) continue;
    if (++threads > kMaxThreadsSearched) break;
    if (tids->size() < kMaxThreadsProbed) tids->push_back(tid);
    if (!use_children_files_) continue;
    char file[320];
    snprintf(file, sizeof(file), "%s/%lld/children", path, static_cast<long long>(tid));
    if (ReadFile(file, 65536)) host_stats::ParseChildren(buffer_, out);
  }
  closedir(dir);
}

void HostStatsCollector::ScanParents() {
  scan_children_.clear();
  DIR* dir = opendir(options_.proc_root.c_str());
  if (dir == nullptr) return;
  size_t entries = 0;
  host_stats::ProcStat stat;
  while (dirent* e = readdir(dir)) {
    if (++entries > kMaxScannedEntries) break;
    const int64_t pid = host_stats::ParsePidName(e->d_name);
    if (pid < 0 || pid == self_pid_) continue;
    char path[256];
    snprintf(path, sizeof(path), "%s/%lld/stat", options_.proc_root.c_str(), static_cast<long long>(pid));
    if (ReadFile(path, 4096) && host_stats::ParseProcStat(buffer_, &stat))
      scan_children_[stat.ppid].push_back(pid);
  }
  closedir(dir);
}

void HostStatsCollector::Discover() {
  if (!use_children_files_) ScanParents();
  for (Tracked& t : tracked_) t.seen = false;
  auto find = [this](int64_t pid) -> Tracked* {
    for (Tracked& t : tracked_)
      if (t.pid == pid) return &t;
    return nullptr;
  };
  std::vector<Tracked> next;
  next.reserve(tracked_.size() + 4);
  uint32_t untracked = 0;
  // Breadth-first from the traced process: (pid, parent pid, depth).
  std::deque<std::pair<int64_t, uint32_t>> queue{{self_pid_, 0}};
  host_stats::ProcStat stat;
  while (!queue.empty()) {
    auto [pid, depth] = queue.front();
    queue.pop_front();
    char path[256];
    snprintf(path, sizeof(path), "%s/%lld/stat", options_.proc_root.c_str(), static_cast<long long>(pid));
    if (!ReadFile(path, 4096) || !host_stats::ParseProcStat(buffer_, &stat)) continue;  // gone
    if (next.size() >= options_.max_processes) {
      ++untracked;
      continue;
    }
    Tracked* old = find(pid);
    Tracked t;
    if (old != nullptr && old->start_ticks == stat.start_ticks) {
      t = std::move(*old);  // the same process (a reused pid has another start time)
    } else {
      t.pid = pid;
      t.start_ticks = stat.start_ticks;
    }
    // Read every period: exec keeps the pid and the start time, and a search that ran between
    // a helper's fork and its exec saw its parent's command line.
    t.cmdline = ReadCmdline(pid);
    if (depth > 0) {
      const Tracked* parent = nullptr;
      for (const Tracked& n : next)
        if (n.pid == stat.ppid) parent = &n;
      t.helper = IsPythonHelperCommandLine(t.cmdline) && (parent == nullptr || parent->cmdline != t.cmdline);
    }
    t.ppid = stat.ppid;
    t.depth = depth;
    t.seen = true;
    children_scratch_.clear();
    ListChildren(pid, &children_scratch_, &t.tids);
    if (depth >= kMaxDepth) children_scratch_.clear();
    std::sort(children_scratch_.begin(), children_scratch_.end());
    children_scratch_.erase(std::unique(children_scratch_.begin(), children_scratch_.end()), children_scratch_.end());
    t.has_children = !children_scratch_.empty();
    for (int64_t child : children_scratch_) queue.emplace_back(child, depth + 1);
    next.push_back(std::move(t));
  }
  tracked_ = std::move(next);
  untracked_ = untracked;
}

void HostStatsCollector::Probe() {
  // Launchers and helpers (forkserver, resource tracker) are not probed: their state says
  // nothing about input, and probes are most of the cost.
  for (Tracked& t : tracked_)
    if (t.depth == 0 || !(t.helper || t.has_children)) ProbeOne(&t);
}

void HostStatsCollector::ProbeOne(Tracked* t) {
  char path[256];
  bool running = false, disk = false, sleeping = false, any = false;
  auto count = [&](char letter) {
    any = true;
    switch (ClassifyState(letter)) {
      case StateClass::kRunning: running = true; break;
      case StateClass::kDiskWait: disk = true; break;
      case StateClass::kSleeping: sleeping = true; break;
      case StateClass::kOther: break;
    }
  };
  if (t->depth == 0) {
    // The traced process: its main thread only (the writer thread probing would always be R).
    snprintf(path, sizeof(path), "%s/%lld/stat", options_.proc_root.c_str(), static_cast<long long>(t->pid));
    if (ReadFile(path, 4096)) count(host_stats::ProcStatState(buffer_));
  } else {
    // The threads listed at the last search (a thread started since is seen from the next).
    for (int64_t tid : t->tids) {
      snprintf(path, sizeof(path), "%s/%lld/task/%lld/stat", options_.proc_root.c_str(),
               static_cast<long long>(t->pid), static_cast<long long>(tid));
      if (ReadFile(path, 4096)) count(host_stats::ProcStatState(buffer_));
    }
  }
  if (!any) return;
  ++t->probes;
  if (running) ++t->running;
  else if (disk) ++t->disk_wait;
  else if (sleeping) ++t->sleeping;
}

size_t HostStatsCollector::Record(uint64_t now_ns, ChunkBuilder* builder) {
  uint64_t cpu_mark = ThreadCpuNs();
  pb::Chunk* chunk = builder->chunk();
  size_t records = 0;
  host_stats::ProcStat stat;
  host_stats::ProcStatus status;
  host_stats::ProcIo io;
  for (const Tracked& t : tracked_) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%lld/stat", options_.proc_root.c_str(), static_cast<long long>(t.pid));
    if (!ReadFile(path, 4096) || !host_stats::ParseProcStat(buffer_, &stat)) continue;  // exited
    if (stat.start_ticks != t.start_ticks) continue;  // pid reused since the search
    pb::ProcessStats* ps = chunk->add_process_stats();
    ps->set_time_ns(now_ns);
    ps->set_pid(t.pid);
    ps->set_role(t.depth == 0                    ? pb::PROCESS_ROLE_MAIN
                 : t.helper || t.has_children    ? pb::PROCESS_ROLE_OTHER_CHILD
                                                 : pb::PROCESS_ROLE_DATA_WORKER);
    ps->set_utime_ns(stat.utime_ticks * tick_ns_);
    ps->set_stime_ns(stat.stime_ticks * tick_ns_);
    ps->set_rss_bytes(stat.rss_pages * page_bytes_);
    ps->set_num_threads(static_cast<uint32_t>(stat.num_threads));
    ps->set_iowait_ns(stat.blkio_ticks * tick_ns_);
    ps->set_ppid(stat.ppid);
    ps->set_comm(stat.comm);
    ps->set_depth(t.depth);
    ps->set_start_time_ns(stat.start_ticks * tick_ns_);
    ps->set_state_probes(t.probes);
    ps->set_probes_running(t.running);
    ps->set_probes_disk_wait(t.disk_wait);
    ps->set_probes_sleeping(t.sleeping);
    snprintf(path, sizeof(path), "%s/%lld/status", options_.proc_root.c_str(), static_cast<long long>(t.pid));
    if (ReadFile(path, 16384) && host_stats::ParseProcStatus(buffer_, &status)) {
      ps->set_voluntary_switches(status.voluntary_switches);
      ps->set_involuntary_switches(status.involuntary_switches);
    }
    snprintf(path, sizeof(path), "%s/%lld/io", options_.proc_root.c_str(), static_cast<long long>(t.pid));
    if (ReadFile(path, 4096) && host_stats::ParseProcIo(buffer_, &io)) {
      ps->set_read_bytes(io.read_bytes);
      ps->set_write_bytes(io.write_bytes);
      ps->set_read_chars(io.rchar);
    }
    if (t.depth == 0) {
      pb::HostStats* host = ps->mutable_host();
      const long online = sysconf(_SC_NPROCESSORS_ONLN);
      host->set_online_cores(online > 0 ? static_cast<uint32_t>(online) : 0);
      host->set_affinity_cores(AffinityCores(options_.self_pid != 0 ? 0 : t.pid));
      host_stats::LoadAvg load;
      if (ReadFile((options_.proc_root + "/loadavg").c_str(), 4096) && host_stats::ParseLoadAvg(buffer_, &load)) {
        host->set_load_1m(load.load_1m);
        host->set_load_5m(load.load_5m);
        host->set_load_15m(load.load_15m);
        host->set_runnable_tasks(load.runnable);
      }
      host_stats::CpuTotals cpu;
      if (ReadFile((options_.proc_root + "/stat").c_str(), 1 << 20) && host_stats::ParseProcStatCpu(buffer_, &cpu)) {
        host->set_cpu_user_ns((cpu.user + cpu.nice) * tick_ns_);
        host->set_cpu_system_ns((cpu.system + cpu.irq + cpu.softirq) * tick_ns_);
        host->set_cpu_idle_ns(cpu.idle * tick_ns_);
        host->set_cpu_iowait_ns(cpu.iowait * tick_ns_);
        host->set_cpu_steal_ns(cpu.steal * tick_ns_);
        host->set_procs_blocked(cpu.procs_blocked);
      }
      host->set_tracked_processes(static_cast<uint32_t>(tracked_.size()));
      host->set_untracked_processes(untracked_);
      host->set_period_ms(options_.period_ms);
      host->set_probe_ms(probe_ms_);
      // Cost so far, this record's reads included; the workers' reads after it count next time.
      const uint64_t cpu_now = ThreadCpuNs();
      collection_ns_ += cpu_now - cpu_mark;
      cpu_mark = cpu_now;
      host->set_collection_ns(collection_ns_);
      host->set_collections(collections_);
    }
    ++records;
  }
  collection_ns_ += ThreadCpuNs() - cpu_mark;
  builder->CountRecords(records);
  return records;
}

}  // namespace gs
