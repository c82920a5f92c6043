#include "agent/host_stats/proc_parse.h"

#include <charconv>

namespace gs::host_stats {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Splits `text` at whitespace into at most `max` fields.
size_t SplitFields(std::string_view text, std::string_view* fields, size_t max) {
  size_t n = 0, i = 0;
  while (i < text.size() && n < max) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    if (i == text.size()) break;
    size_t start = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    fields[n++] = text.substr(start, i - start);
  }
  return n;
}

template <typename T>
bool ToNumber(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// "Name:\t  123 kB" lines: the number after `key` at the start of a line.
bool FindKeyNumber(std::string_view text, std::string_view key, uint64_t* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key) {
      std::string_view rest = line.substr(key.size());
      std::string_view f[2];
      return SplitFields(rest, f, 2) >= 1 && ToNumber(f[0], out);
    }
    pos = eol + 1;
  }
  return false;
}

}  // namespace

char ProcStatState(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return '?';
  for (size_t i = close + 1; i < text.size(); ++i)
    if (text[i] != ' ') return text[i];
  return '?';
}

bool ParseProcStat(std::string_view text, ProcStat* out) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return false;
  if (!ToNumber(text.substr(0, open > 0 ? open - 1 : 0), &out->pid)) return false;
  out->comm.assign(text.data() + open + 1, close - open - 1);
  // After ") ": field 3 (state) onwards; fields[k] is proc(5)'s field k + 3.
  std::string_view fields[40];
  const size_t n = SplitFields(text.substr(close + 1), fields, 40);
  if (n < 22 || fields[0].size() != 1) return false;
  out->state = fields[0][0];
  auto field = [&](int number, auto* value) { return ToNumber(fields[number - 3], value); };
  if (!field(4, &out->ppid) || !field(14, &out->utime_ticks) || !field(15, &out->stime_ticks) ||
      !field(20, &out->num_threads) || !field(22, &out->start_ticks) || !field(24, &out->rss_pages))
    return false;
  out->blkio_ticks = 0;
  if (n >= 40) field(42, &out->blkio_ticks);  // since Linux 2.6.18; absent in odd kernels
  return true;
}

bool ParseProcStatus(std::string_view text, ProcStatus* out) {
  bool ok = FindKeyNumber(text, "voluntary_ctxt_switches:", &out->voluntary_switches);
  ok &= FindKeyNumber(text, "nonvoluntary_ctxt_switches:", &out->involuntary_switches);
  // VmRSS is absent for kernel threads and zombies: not an error.
  if (!FindKeyNumber(text, "VmRSS:", &out->vm_rss_kib)) out->vm_rss_kib = 0;
  return ok;
}

bool ParseProcIo(std::string_view text, ProcIo* out) {
  return FindKeyNumber(text, "rchar:", &out->rchar) && FindKeyNumber(text, "wchar:", &out->wchar) &&
         FindKeyNumber(text, "read_bytes:", &out->read_bytes) &&
         FindKeyNumber(text, "write_bytes:", &out->write_bytes);
}

bool ParseLoadAvg(std::string_view text, LoadAvg* out) {
  std::string_view f[5];
  if (SplitFields(text, f, 5) < 4) return false;
  if (!ToNumber(f[0], &out->load_1m) || !ToNumber(f[1], &out->load_5m) || !ToNumber(f[2], &out->load_15m))
    return false;
  const size_t slash = f[3].find('/');
  if (slash == std::string_view::npos) return false;
  return ToNumber(f[3].substr(0, slash), &out->runnable) && ToNumber(f[3].substr(slash + 1), &out->total);
}

bool ParseProcStatCpu(std::string_view text, CpuTotals* out) {
  if (text.substr(0, 4) != "cpu ") return false;
  const size_t eol = text.find('\n');
  std::string_view f[11];
  const size_t n = SplitFields(text.substr(0, eol), f, 11);
  if (n < 5) return false;  // user nice system idle: always there; later columns by kernel age
  uint64_t* columns[] = {&out->user, &out->nice, &out->system, &out->idle, &out->iowait,
                         &out->irq, &out->softirq, &out->steal};
  for (size_t i = 0; i < 8; ++i) {
    *columns[i] = 0;
    if (i + 1 < n && !ToNumber(f[i + 1], columns[i])) return false;
  }
  uint64_t running = 0, blocked = 0;
  FindKeyNumber(text, "procs_running ", &running);
  FindKeyNumber(text, "procs_blocked ", &blocked);
  out->procs_running = static_cast<uint32_t>(running);
  out->procs_blocked = static_cast<uint32_t>(blocked);
  return true;
}

bool ParseChildren(std::string_view text, std::vector<int64_t>* out) {
  std::string_view f[64];
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t n = SplitFields(text.substr(pos), f, 64);
    if (n == 0) break;
    for (size_t i = 0; i < n; ++i) {
      int64_t pid = 0;
      if (!ToNumber(f[i], &pid) || pid <= 0) return false;
      out->push_back(pid);
    }
    pos = static_cast<size_t>(f[n - 1].data() + f[n - 1].size() - text.data());
  }
  return true;
}

int64_t ParsePidName(const char* name) {
  int64_t pid = 0;
  std::string_view s(name);
  return ToNumber(s, &pid) && pid > 0 ? pid : -1;
}

StateClass ClassifyState(char state) {
  switch (state) {
    case 'R':
      return StateClass::kRunning;
    case 'D':
      return StateClass::kDiskWait;
    case 'S':
    case 'I':  // idle kernel thread; for a user thread, an uninterruptible-but-idle wait
      return StateClass::kSleeping;
    default:   // stopped, traced, zombie, dead
      return StateClass::kOther;
  }
}

}  // namespace gs::host_stats
