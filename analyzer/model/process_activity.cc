#include "analyzer/model/process_activity.h"

namespace gs::analyzer {

const char* ProcessRoleName(ProcessRole role) {
  switch (role) {
    case ProcessRole::kMain: return "main";
    case ProcessRole::kDataWorker: return "data_worker";
    case ProcessRole::kOtherChild: return "other_child";
    default: return "unspecified";
  }
}

namespace {
double Share(uint64_t part, uint64_t whole) { return whole > 0 ? static_cast<double>(part) / whole : 0; }
}  // namespace

double ProcessActivity::CpuBusy() const {
  const TimeNs span = span_ns();
  return span > 0 ? static_cast<double>(last.cpu_ns - first.cpu_ns) / span : 0;
}
double ProcessActivity::RunningShare() const { return Share(last.probes_running - first.probes_running, Probes()); }
double ProcessActivity::DiskWaitShare() const { return Share(last.probes_disk_wait - first.probes_disk_wait, Probes()); }
double ProcessActivity::SleepingShare() const { return Share(last.probes_sleeping - first.probes_sleeping, Probes()); }

void ProcessActivityTable::Add(const ProcessSample& s) {
  if (s.has_host) {
    if (!first_host_.has_host || s.time_ns < first_host_.time_ns) first_host_ = s;
    if (!last_host_.has_host || s.time_ns >= last_host_.time_ns) last_host_ = s;
  }
  // A pid is one process while its start time stays; a reused pid is another process.
  auto it = index_.find(std::make_pair(s.pid, s.start_time_ns));
  if (it != index_.end()) {
    ProcessActivity& p = processes_[it->second];
    if (s.time_ns >= p.last.time_ns) p.last = s;
    else if (s.time_ns < p.first.time_ns) p.first = s;
    ++p.records;
    return;
  }
  if (processes_.size() >= kMaxProcesses) {
    ++dropped_;
    return;
  }
  ProcessActivity p;
  p.first = p.last = s;
  p.records = 1;
  index_.emplace(std::make_pair(s.pid, s.start_time_ns), processes_.size());
  processes_.push_back(std::move(p));
}

}  // namespace gs::analyzer
