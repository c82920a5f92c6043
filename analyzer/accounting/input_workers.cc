// Why these thresholds: a probe counts a worker "running" when any of its threads is R (on a CPU
// or runnable), so a worker that computes its batches shows R in nearly every probe whatever
// else runs on the host; 60% leaves room for the queue hand-over and start-up. Disk wait is
// rarer by nature (a D state lasts a request's service time), so 30% of probes in D already
// means the worker spends about a third of its time waiting for storage.
#include "analyzer/accounting/input_workers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/units/units.h"

namespace gs::analyzer {

const char* WorkerVerdictName(WorkerVerdict v) {
  switch (v) {
    case WorkerVerdict::kCpuBound: return "cpu_bound";
    case WorkerVerdict::kStorageBound: return "storage_bound";
    case WorkerVerdict::kWaiting: return "waiting";
    case WorkerVerdict::kMixed: return "mixed";
    default: return "";
  }
}

namespace {

std::string Cores(double n) {
  return n >= 10 || n == static_cast<int>(n) ? absl::StrCat(static_cast<int>(n + 0.5))
                                              : absl::StrFormat("%.1f", n);
}

std::string Range(double lo, double hi) {
  // "each 97%" when the workers agree within 5 points, "52–97%" otherwise.
  if (hi - lo < 0.05) return absl::StrCat("each ", FormatPercent((lo + hi) / 2));
  return absl::StrCat(FormatPercent(lo), "–", FormatPercent(hi));
}

}  // namespace

InputWorkersSummary SummarizeInputWorkers(const std::vector<TraceInfo>& traces) {
  InputWorkersSummary s;
  double main_busy = 0;
  int mains = 0;
  for (const TraceInfo& t : traces) {
    const ProcessActivityTable& table = t.processes;
    if (table.empty()) continue;
    s.present = true;
    for (const ProcessActivity& p : table.processes()) {
      switch (p.last.role) {
        case ProcessRole::kMain:
          if (p.span_ns() > 0) {
            main_busy += p.CpuBusy();
            ++mains;
          }
          break;
        case ProcessRole::kOtherChild:
          ++s.other_children;
          break;
        case ProcessRole::kDataWorker: {
          if (p.records < 2 || p.span_ns() <= 0) break;  // seen once: nothing to measure
          WorkerEvidence w;
          w.pid = p.last.pid;
          w.comm = p.last.comm;
          w.trace = t.Label();
          w.depth = p.last.depth;
          w.span_ns = p.span_ns();
          w.cpu_ns = p.last.cpu_ns - p.first.cpu_ns;
          w.cpu_busy = p.CpuBusy();
          w.probes = p.Probes();
          w.running = p.RunningShare();
          w.disk_wait = p.DiskWaitShare();
          w.sleeping = p.SleepingShare();
          w.read_bytes = p.last.read_bytes - p.first.read_bytes;
          w.read_chars = p.last.read_chars - p.first.read_chars;
          s.workers.push_back(std::move(w));
          break;
        }
        default:
          break;
      }
    }
    // Host: the first trace with host samples (traces of one job usually share the host).
    const ProcessSample* first = table.first_host();
    const ProcessSample* last = table.last_host();
    if (s.host.online_cores == 0 && last != nullptr) {
      HostEvidence& h = s.host;
      h.online_cores = last->host.online_cores;
      h.affinity_cores = last->host.affinity_cores;
      h.load_1m = last->host.load_1m;
      h.span_ns = last->time_ns - first->time_ns;
      const TimeNs busy = last->host.cpu_busy_ns - first->host.cpu_busy_ns;
      const TimeNs idle = last->host.cpu_idle_ns - first->host.cpu_idle_ns;
      const TimeNs iowait = last->host.cpu_iowait_ns - first->host.cpu_iowait_ns;
      const TimeNs all = busy + idle + iowait;
      if (all > 0) {
        h.busy = static_cast<double>(busy) / all;
        h.iowait = static_cast<double>(iowait) / all;
        h.idle_cores = h.online_cores * static_cast<double>(idle + iowait) / all;
      }
      // Over the same span as the rest (the cumulative counters' difference).
      h.collection_ns = last->host.collection_ns - first->host.collection_ns;
      h.collections = last->host.collections - first->host.collections;
      h.period_ms = last->host.period_ms;
      h.untracked = last->host.untracked;
    }
  }
  if (mains > 0) s.main_cpu_busy = main_busy / mains;
  std::sort(s.workers.begin(), s.workers.end(),
            [](const WorkerEvidence& a, const WorkerEvidence& b) { return a.pid < b.pid; });
  if (s.workers.empty()) return s;

  s.cpu_busy_min = s.workers.front().cpu_busy;
  s.cpu_busy_max = s.cpu_busy_min;
  for (const WorkerEvidence& w : s.workers) {
    s.cpu_busy_mean += w.cpu_busy;
    s.cpu_busy_min = std::min(s.cpu_busy_min, w.cpu_busy);
    s.cpu_busy_max = std::max(s.cpu_busy_max, w.cpu_busy);
    s.running_mean += w.running;
    s.disk_wait_mean += w.disk_wait;
    s.sleeping_mean += w.sleeping;
    s.read_bytes += w.read_bytes;
    s.span_ns = std::max(s.span_ns, w.span_ns);
  }
  const double n = static_cast<double>(s.workers.size());
  s.cpu_busy_mean /= n;
  s.running_mean /= n;
  s.disk_wait_mean /= n;
  s.sleeping_mean /= n;

  const size_t count = s.workers.size();
  const std::string who = absl::StrCat(count, count == 1 ? " input worker" : " input workers");
  std::string host;
  if (s.host.online_cores > 0)
    host = absl::StrCat(" on a ", s.host.online_cores, "-core host (", s.host.affinity_cores,
                        " in the affinity mask, ", Cores(s.host.idle_cores), " idle on average)");
  if (s.disk_wait_mean >= kWorkerDiskWaitShare) {
    s.verdict = WorkerVerdict::kStorageBound;
    s.evidence = absl::StrCat(who, " in disk wait in ", FormatPercent(s.disk_wait_mean), " of state probes, CPU-busy ",
                              Range(s.cpu_busy_min, s.cpu_busy_max), ", reading ", FormatBytes(s.read_bytes),
                              " from storage in ", FormatDuration(s.span_ns));
  } else if (s.running_mean >= kWorkerCpuBoundShare) {
    s.verdict = WorkerVerdict::kCpuBound;
    s.evidence = absl::StrCat(who, ", ", Range(s.cpu_busy_min, s.cpu_busy_max), " CPU-busy (running in ",
                              FormatPercent(s.running_mean), " of state probes)", host);
  } else if (s.sleeping_mean >= kWorkerWaitingShare) {
    s.verdict = WorkerVerdict::kWaiting;
    s.evidence = absl::StrCat(who, " sleeping in ", FormatPercent(s.sleeping_mean), " of state probes, CPU-busy ",
                              Range(s.cpu_busy_min, s.cpu_busy_max), host);
  } else {
    s.verdict = WorkerVerdict::kMixed;
    s.evidence = absl::StrCat(who, ", CPU-busy ", Range(s.cpu_busy_min, s.cpu_busy_max), "; probes: running ",
                              FormatPercent(s.running_mean), ", disk wait ", FormatPercent(s.disk_wait_mean),
                              ", sleeping ", FormatPercent(s.sleeping_mean), host);
  }
  return s;
}

}  // namespace gs::analyzer
