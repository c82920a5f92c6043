#include "analyzer/model/process_stats_import.h"

namespace gs::analyzer {

ProcessSample ProcessSampleFromProto(const gpustall::trace::ProcessStats& p) {
  ProcessSample s;
  s.time_ns = static_cast<TimeNs>(p.time_ns());
  s.pid = p.pid();
  s.ppid = p.ppid();
  s.role = p.role() >= 0 && p.role() <= 3 ? static_cast<ProcessRole>(p.role()) : ProcessRole::kUnspecified;
  s.depth = p.depth();
  s.comm = p.comm();
  s.cpu_ns = static_cast<TimeNs>(p.utime_ns() + p.stime_ns());
  s.iowait_ns = static_cast<TimeNs>(p.iowait_ns());
  s.read_bytes = p.read_bytes();
  s.read_chars = p.read_chars();
  s.probes = p.state_probes();
  s.probes_running = p.probes_running();
  s.probes_disk_wait = p.probes_disk_wait();
  s.probes_sleeping = p.probes_sleeping();
  s.threads = p.num_threads();
  s.start_time_ns = static_cast<TimeNs>(p.start_time_ns());
  if (p.has_host()) {
    const gpustall::trace::HostStats& h = p.host();
    s.has_host = true;
    s.host.online_cores = h.online_cores();
    s.host.affinity_cores = h.affinity_cores();
    s.host.load_1m = h.load_1m();
    s.host.cpu_busy_ns = static_cast<TimeNs>(h.cpu_user_ns() + h.cpu_system_ns() + h.cpu_steal_ns());
    s.host.cpu_idle_ns = static_cast<TimeNs>(h.cpu_idle_ns());
    s.host.cpu_iowait_ns = static_cast<TimeNs>(h.cpu_iowait_ns());
    s.host.tracked = h.tracked_processes();
    s.host.untracked = h.untracked_processes();
    s.host.collection_ns = static_cast<TimeNs>(h.collection_ns());
    s.host.collections = h.collections();
    s.host.period_ms = h.period_ms();
    s.host.probe_ms = h.probe_ms();
  }
  return s;
}

}  // namespace gs::analyzer
