// Tests of agent/host_stats: the /proc parsers on fixtures (lines as the kernel writes them), the
// collector over a fake /proc tree (roles, depth, probes, limits, the scan fallback, pid reuse),
// and over the real /proc with forked children that spin, sleep, or are not ours.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/core/clock.h"
#include "agent/host_stats/host_stats_collector.h"
#include "agent/host_stats/proc_parse.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

namespace pb = gpustall::trace;
using namespace host_stats;

// A stat line in the kernel's format (proc(5) fields 1..52).
std::string StatLine(int64_t pid, const std::string& comm, char state, int64_t ppid, uint64_t utime,
                     uint64_t stime, uint64_t threads, uint64_t start, uint64_t rss, uint64_t blkio = 0) {
  char line[1024];
  snprintf(line, sizeof(line),
           "%lld (%s) %c %lld %lld %lld 0 -1 4194304 100 0 0 0 %llu %llu 0 0 20 0 %llu 0 %llu "
           "12345678 %llu 18446744073709551615 1 1 0 0 0 0 0 16781312 16386 0 0 0 17 1 0 0 %llu 0 0 "
           "0 0 0 0 0 0 0\n",
           static_cast<long long>(pid), comm.c_str(), state, static_cast<long long>(ppid),
           static_cast<long long>(pid), static_cast<long long>(pid), static_cast<unsigned long long>(utime),
           static_cast<unsigned long long>(stime), static_cast<unsigned long long>(threads),
           static_cast<unsigned long long>(start), static_cast<unsigned long long>(rss),
           static_cast<unsigned long long>(blkio));
  return line;
}

TEST(ProcParse, StatWithParenthesesAndSpacesInComm) {
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(StatLine(4242, "pt_data (1) x", 'D', 17, 250, 30, 3, 98765, 2048, 7), &s));
  EXPECT_EQ(s.pid, 4242);
  EXPECT_EQ(s.comm, "pt_data (1) x");
  EXPECT_EQ(s.state, 'D');
  EXPECT_EQ(s.ppid, 17);
  EXPECT_EQ(s.utime_ticks, 250u);
  EXPECT_EQ(s.stime_ticks, 30u);
  EXPECT_EQ(s.num_threads, 3u);
  EXPECT_EQ(s.start_ticks, 98765u);
  EXPECT_EQ(s.rss_pages, 2048u);
  EXPECT_EQ(s.blkio_ticks, 7u);
}

TEST(ProcParse, StateLetterAloneComesAfterTheLastParenthesis) {
  EXPECT_EQ(ProcStatState("42 (a) b) R 1 2 3"), 'R');  // a comm with ") " in it
  EXPECT_EQ(ProcStatState("42 (sleepy)  S 1"), 'S');
  EXPECT_EQ(ProcStatState("42 (io) D"), 'D');
  EXPECT_EQ(ProcStatState("no parenthesis here"), '?');
  EXPECT_EQ(ProcStatState("42 (cut)"), '?');
}

TEST(ProcParse, StatOfThisProcessParses) {
  std::ifstream f("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(text, &s)) << text;
  EXPECT_EQ(s.pid, getpid());
  EXPECT_EQ(s.ppid, getppid());
  EXPECT_EQ(s.state, 'R');  // reading its own stat
}

TEST(ProcParse, StatRejectsJunk) {
  ProcStat s;
  EXPECT_FALSE(ParseProcStat("", &s));
  EXPECT_FALSE(ParseProcStat("12 (x) R 1 2 3", &s));            // cut
  EXPECT_FALSE(ParseProcStat("12 x R 1 2 3 4 5 6 7 8 9", &s));  // no parentheses
  EXPECT_FALSE(ParseProcStat(StatLine(1, "a", 'R', 0, 1, 1, 1, 1, 1).replace(0, 1, "z"), &s));
}

TEST(ProcParse, Status) {
  const char* text =
      "Name:\tpython3\nState:\tS (sleeping)\nVmRSS:\t   10240 kB\nThreads:\t2\n"
      "voluntary_ctxt_switches:\t1500\nnonvoluntary_ctxt_switches:\t42\n";
  ProcStatus s;
  ASSERT_TRUE(ParseProcStatus(text, &s));
  EXPECT_EQ(s.voluntary_switches, 1500u);
  EXPECT_EQ(s.involuntary_switches, 42u);
  EXPECT_EQ(s.vm_rss_kib, 10240u);
  EXPECT_FALSE(ParseProcStatus("Name:\tx\n", &s));
}

TEST(ProcParse, Io) {
  const char* text =
      "rchar: 115843574\nwchar: 92717090\nsyscr: 52321\nsyscw: 11278\nread_bytes: 2744320\n"
      "write_bytes: 64372736\ncancelled_write_bytes: 917504\n";
  ProcIo io;
  ASSERT_TRUE(ParseProcIo(text, &io));
  EXPECT_EQ(io.rchar, 115843574u);
  EXPECT_EQ(io.wchar, 92717090u);
  EXPECT_EQ(io.read_bytes, 2744320u);
  EXPECT_EQ(io.write_bytes, 64372736u);
  EXPECT_FALSE(ParseProcIo("rchar: x\n", &io));
}

TEST(ProcParse, LoadAvg) {
  LoadAvg l;
  ASSERT_TRUE(ParseLoadAvg("4.48 2.01 1.06 7/128 18427\n", &l));
  EXPECT_FLOAT_EQ(l.load_1m, 4.48f);
  EXPECT_FLOAT_EQ(l.load_5m, 2.01f);
  EXPECT_FLOAT_EQ(l.load_15m, 1.06f);
  EXPECT_EQ(l.runnable, 7u);
  EXPECT_EQ(l.total, 128u);
  EXPECT_FALSE(ParseLoadAvg("4.48 2.01 1.06 7 18427\n", &l));
}

TEST(ProcParse, ProcStatCpuLineAndBlocked) {
  const char* text =
      "cpu  1085759 144791 232926 816368 2594 0 940 2523 0 0\n"
      "cpu0 542879 72395 116463 408184 1297 0 470 1261 0 0\n"
      "intr 1 2 3\nctxt 99\nprocs_running 3\nprocs_blocked 2\n";
  CpuTotals c;
  ASSERT_TRUE(ParseProcStatCpu(text, &c));
  EXPECT_EQ(c.user, 1085759u);
  EXPECT_EQ(c.nice, 144791u);
  EXPECT_EQ(c.system, 232926u);
  EXPECT_EQ(c.idle, 816368u);
  EXPECT_EQ(c.iowait, 2594u);
  EXPECT_EQ(c.softirq, 940u);
  EXPECT_EQ(c.steal, 2523u);
  EXPECT_EQ(c.procs_running, 3u);
  EXPECT_EQ(c.procs_blocked, 2u);
  // An old kernel's four columns: the rest reads 0.
  ASSERT_TRUE(ParseProcStatCpu("cpu  10 20 30 40\n", &c));
  EXPECT_EQ(c.idle, 40u);
  EXPECT_EQ(c.iowait, 0u);
  EXPECT_FALSE(ParseProcStatCpu("cpu0 1 2 3 4\n", &c));
}

TEST(ProcParse, ChildrenAndPidNames) {
  std::vector<int64_t> pids;
  ASSERT_TRUE(ParseChildren("18443 18444 ", &pids));
  ASSERT_TRUE(ParseChildren("", &pids));
  EXPECT_EQ(pids, (std::vector<int64_t>{18443, 18444}));
  EXPECT_FALSE(ParseChildren("12 x", &pids));
  EXPECT_EQ(ParsePidName("123"), 123);
  EXPECT_EQ(ParsePidName("self"), -1);
  EXPECT_EQ(ParsePidName("12a"), -1);
  EXPECT_EQ(ClassifyState('R'), StateClass::kRunning);
  EXPECT_EQ(ClassifyState('D'), StateClass::kDiskWait);
  EXPECT_EQ(ClassifyState('S'), StateClass::kSleeping);
  EXPECT_EQ(ClassifyState('Z'), StateClass::kOther);
}

TEST(ProcParse, PythonHelperCommandLines) {
  using std::string_literals::operator""s;
  EXPECT_TRUE(IsPythonHelperCommandLine(
      "/usr/bin/python3\0-c\0from multiprocessing.resource_tracker import main;main(7)\0"s));
  EXPECT_TRUE(IsPythonHelperCommandLine(
      "python3\0-c\0from multiprocessing.forkserver import main; main(8, 9, ['__main__'], **{})\0"s));
  EXPECT_FALSE(IsPythonHelperCommandLine(
      "python3\0-c\0from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5)\0"s));
}

// The pending chunk, as the writer hands it over.
class FakeBuilder final : public ChunkBuilder {
 public:
  pb::Chunk* chunk() override { return &chunk_; }
  uint32_t InternString(const std::string&) override { return 0; }
  uint32_t InternStack(const StackView&) override { return 0; }
  void CountRecords(size_t n) override { counted += n; }
  pb::Chunk chunk_;
  size_t counted = 0;
};

// A fake /proc in a temporary folder.
class FakeProc {
 public:
  FakeProc() {
    char tmpl[] = "/tmp/gs-fakeproc-XXXXXX";
    root_ = mkdtemp(tmpl);
    Write("loadavg", "1.50 1.00 0.50 3/200 999\n");
    Write("stat", "cpu  100 0 50 1000 20 0 0 0 0 0\nprocs_running 2\nprocs_blocked 1\n");
  }
  ~FakeProc() { std::system(("rm -rf " + root_).c_str()); }
  const std::string& root() const { return root_; }
  void Write(const std::string& rel, const std::string& text) {
    std::string path = root_ + "/" + rel;
    for (size_t i = root_.size() + 1; (i = path.find('/', i)) != std::string::npos; ++i)
      mkdir(path.substr(0, i).c_str(), 0755);
    std::ofstream(path) << text;
  }
  // A process with threads; `children[tid]` lists the children each thread forked.
  void Process(int64_t pid, int64_t ppid, const std::string& comm, const std::string& cmdline,
               const std::vector<std::pair<int64_t, char>>& threads, uint64_t start = 1000,
               std::map<int64_t, std::string> children = {}) {
    const std::string p = std::to_string(pid);
    Write(p + "/stat", StatLine(pid, comm, threads[0].second, ppid, 100 + pid, 10, threads.size(), start, 500));
    Write(p + "/status", "voluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t6\n");
    Write(p + "/io", "rchar: 700\nwchar: 0\nread_bytes: 4096\nwrite_bytes: 0\n");
    Write(p + "/cmdline", cmdline);
    for (const auto& [tid, state] : threads) {
      const std::string t = p + "/task/" + std::to_string(tid);
      Write(t + "/stat", StatLine(tid, comm, state, ppid, 1, 1, 1, start, 500));
      Write(t + "/children", children.count(tid) ? children[tid] : "");
    }
  }
  void Remove(int64_t pid) { std::system(("rm -rf " + root_ + "/" + std::to_string(pid)).c_str()); }

 private:
  std::string root_;
};

std::map<int64_t, const pb::ProcessStats*> ByPid(const pb::Chunk& chunk, size_t from = 0) {
  std::map<int64_t, const pb::ProcessStats*> out;
  for (int i = static_cast<int>(from); i < chunk.process_stats_size(); ++i) out[chunk.process_stats(i).pid()] = &chunk.process_stats(i);
  return out;
}

// main 100 (threads 100, 101); 101 spawned 200 (a worker); 100 started 300, a forkserver, which
// forked 301 and 302 (workers with its command line) and 303, which forked 304 (a launcher).
void BuildTree(FakeProc* proc) {
  using std::string_literals::operator""s;
  const std::string fs_cmd = "python3\0-c\0from multiprocessing.forkserver import main; main()\0"s;
  proc->Process(100, 1, "python3", "python3\0train.py\0"s, {{100, 'S'}, {101, 'R'}}, 1000,
                {{100, "300 "}, {101, "200 "}});
  proc->Process(200, 100, "python3", "python3\0-c\0from multiprocessing.spawn import spawn_main\0"s,
                {{200, 'R'}, {210, 'S'}});
  proc->Process(300, 100, "python3", fs_cmd, {{300, 'S'}}, 1000, {{300, "301 302 303"}});
  proc->Process(301, 300, "python3", fs_cmd, {{301, 'D'}, {311, 'S'}});
  proc->Process(302, 300, "python3", fs_cmd, {{302, 'S'}, {312, 'S'}});
  proc->Process(303, 300, "sh", "sh\0-c\0x\0"s, {{303, 'S'}}, 1000, {{303, "304"}});
  proc->Process(304, 303, "tool", "tool\0"s, {{304, 'R'}});
}

class CollectorOnFakeProc : public ::testing::TestWithParam<bool> {};

TEST_P(CollectorOnFakeProc, RolesDepthsStatesAndHost) {
  FakeProc proc;
  BuildTree(&proc);
  HostStatsCollector::Options o;
  o.period_ms = 100;
  o.probe_ms = 10;
  o.proc_root = proc.root();
  o.self_pid = 100;
  o.force_scan = GetParam();
  HostStatsCollector c(o);
  EXPECT_EQ(c.uses_children_files(), !GetParam());
  FakeBuilder b;
  const uint64_t t0 = 5000000000ull;
  EXPECT_EQ(c.CollectAt(t0, &b), 7u);             // first call: search, probe, record
  EXPECT_EQ(c.CollectAt(t0 + 5000000, &b), 0u);   // nothing due
  for (int i = 1; i < 10; ++i) EXPECT_EQ(c.CollectAt(t0 + i * 10000000ull, &b), 0u);  // probes
  const int first = b.chunk_.process_stats_size();
  EXPECT_EQ(c.CollectAt(t0 + 100000000, &b), 7u);  // a period: probe + record
  EXPECT_EQ(b.counted, 14u);
  auto by_pid = ByPid(b.chunk_, first);
  ASSERT_EQ(by_pid.size(), 7u);
  EXPECT_EQ(by_pid[100]->role(), pb::PROCESS_ROLE_MAIN);
  EXPECT_EQ(by_pid[200]->role(), pb::PROCESS_ROLE_DATA_WORKER);
  EXPECT_EQ(by_pid[300]->role(), pb::PROCESS_ROLE_OTHER_CHILD);  // forkserver: helper + children
  EXPECT_EQ(by_pid[301]->role(), pb::PROCESS_ROLE_DATA_WORKER);  // its copy of the command line
  EXPECT_EQ(by_pid[302]->role(), pb::PROCESS_ROLE_DATA_WORKER);
  EXPECT_EQ(by_pid[303]->role(), pb::PROCESS_ROLE_OTHER_CHILD);  // has a child
  EXPECT_EQ(by_pid[304]->role(), pb::PROCESS_ROLE_DATA_WORKER);
  EXPECT_EQ(by_pid[100]->depth(), 0u);
  EXPECT_EQ(by_pid[200]->depth(), 1u);
  EXPECT_EQ(by_pid[301]->depth(), 2u);
  EXPECT_EQ(by_pid[304]->depth(), 3u);
  EXPECT_EQ(by_pid[301]->ppid(), 300);
  // 11 probes (t0 and ten on the 10 ms grid) of each process but the launchers (not probed).
  for (const auto& [pid, ps] : by_pid)
    EXPECT_EQ(ps->state_probes(), ps->role() == pb::PROCESS_ROLE_OTHER_CHILD ? 0u : 11u) << pid;
  EXPECT_EQ(by_pid[200]->probes_running(), 11u);    // one thread R
  EXPECT_EQ(by_pid[301]->probes_disk_wait(), 11u);  // D and S
  EXPECT_EQ(by_pid[302]->probes_sleeping(), 11u);
  EXPECT_EQ(by_pid[100]->probes_sleeping(), 11u);   // the main thread only (101 is R)
  const long hz = sysconf(_SC_CLK_TCK);
  EXPECT_EQ(by_pid[200]->utime_ns(), 300u * (1000000000ull / hz));
  EXPECT_EQ(by_pid[200]->read_bytes(), 4096u);
  EXPECT_EQ(by_pid[200]->read_chars(), 700u);
  EXPECT_EQ(by_pid[200]->voluntary_switches(), 5u);
  EXPECT_EQ(by_pid[200]->num_threads(), 2u);
  EXPECT_EQ(by_pid[200]->comm(), "python3");
  ASSERT_TRUE(by_pid[100]->has_host());
  EXPECT_FALSE(by_pid[200]->has_host());
  const pb::HostStats& h = by_pid[100]->host();
  EXPECT_EQ(h.online_cores(), static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(h.affinity_cores(), static_cast<uint32_t>(CPU_COUNT(&set)));
  EXPECT_FLOAT_EQ(h.load_1m(), 1.5f);
  EXPECT_EQ(h.runnable_tasks(), 3u);
  EXPECT_EQ(h.cpu_idle_ns(), 1000u * (1000000000ull / hz));
  EXPECT_EQ(h.procs_blocked(), 1u);
  EXPECT_EQ(h.tracked_processes(), 7u);
  EXPECT_EQ(h.untracked_processes(), 0u);
  EXPECT_EQ(h.period_ms(), 100u);
  EXPECT_EQ(h.probe_ms(), 10u);
  EXPECT_EQ(h.collections(), 13u);  // 11 probes + 2 records
  EXPECT_GT(h.collection_ns(), 0u);
}

INSTANTIATE_TEST_SUITE_P(ChildrenFilesAndScan, CollectorOnFakeProc, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "ProcScan" : "ChildrenFiles"; });

TEST(Collector, TracksAtMostTheLimitAndCountsTheRest) {
  FakeProc proc;
  BuildTree(&proc);
  HostStatsCollector::Options o;
  o.proc_root = proc.root();
  o.self_pid = 100;
  o.max_processes = 3;
  HostStatsCollector c(o);
  FakeBuilder b;
  EXPECT_EQ(c.CollectAt(1, &b), 3u);
  auto by_pid = ByPid(b.chunk_);
  EXPECT_EQ(by_pid.count(100) + by_pid.count(200) + by_pid.count(300), 3u);  // breadth first
  EXPECT_EQ(by_pid[100]->host().tracked_processes(), 3u);
  // 301, 302, 303 were found (as 300's children) but not tracked; 304 is never reached.
  EXPECT_EQ(by_pid[100]->host().untracked_processes(), 3u);
}

TEST(Collector, ExitedProcessDropsOutAndReusedPidStartsAfresh) {
  FakeProc proc;
  BuildTree(&proc);
  HostStatsCollector::Options o;
  o.period_ms = 100;
  o.probe_ms = 50;
  o.proc_root = proc.root();
  o.self_pid = 100;
  HostStatsCollector c(o);
  FakeBuilder b;
  c.CollectAt(0, &b);
  c.CollectAt(50000000, &b);
  // 302 exits; 200 is now another process (another start time) with the same pid.
  proc.Remove(302);
  using std::string_literals::operator""s;
  proc.Process(200, 100, "other", "other\0"s, {{200, 'S'}}, 2000);
  const int first = b.chunk_.process_stats_size();
  c.CollectAt(100000000, &b);
  auto by_pid = ByPid(b.chunk_, first);
  EXPECT_EQ(by_pid.count(302), 0u);
  ASSERT_EQ(by_pid.count(200), 1u);
  EXPECT_EQ(by_pid[200]->comm(), "other");
  EXPECT_EQ(by_pid[200]->state_probes(), 1u);  // only this period's probe: counters restarted
  EXPECT_EQ(by_pid[301]->state_probes(), 3u);
}

// The real /proc: this process forks a child that spins and one that sleeps, and a grandchild
// through an intermediate process (forkserver-like). CPU time and probe fractions must say so.
TEST(CollectorOnRealProc, SpinningAndSleepingChildren) {
  const pid_t spinner = fork();
  if (spinner == 0) {
    const uint64_t end = MonotonicNs() + 3000000000ull;
    volatile uint64_t x = 0;
    while (MonotonicNs() < end) x = x + 1;
    _exit(0);
  }
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      sleep(3);
      _exit(0);
    }
    waitpid(grandchild, nullptr, 0);
    _exit(0);
  }
  ASSERT_GT(spinner, 0);
  ASSERT_GT(sleeper, 0);
  HostStatsCollector::Options o;
  o.period_ms = 200;
  o.probe_ms = 10;
  HostStatsCollector c(o);
  FakeBuilder b;
  const uint64_t start = MonotonicNs();
  // Let the children start before the first search (a search is also done every period).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  while (MonotonicNs() - start < 1100000000ull) {
    c.DrainInto(&b);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(spinner, SIGKILL);
  kill(sleeper, SIGKILL);
  waitpid(spinner, nullptr, 0);
  waitpid(sleeper, nullptr, 0);
  ASSERT_GE(b.chunk_.process_stats_size(), 4);
  const pb::ProcessStats* first_spin = nullptr;
  const pb::ProcessStats* last_spin = nullptr;
  const pb::ProcessStats* last_sleep = nullptr;
  const pb::ProcessStats* last_grand = nullptr;
  const pb::ProcessStats* last_main = nullptr;
  for (const pb::ProcessStats& ps : b.chunk_.process_stats()) {
    if (ps.pid() == spinner) (first_spin == nullptr ? first_spin : last_spin) = &ps;
    if (ps.pid() == spinner && first_spin != &ps) last_spin = &ps;
    if (ps.pid() == sleeper) last_sleep = &ps;
    if (ps.depth() == 2) last_grand = &ps;
    if (ps.pid() == getpid()) last_main = &ps;
  }
  ASSERT_NE(first_spin, nullptr);
  ASSERT_NE(last_spin, nullptr);
  ASSERT_NE(last_sleep, nullptr);
  ASSERT_NE(last_grand, nullptr);
  ASSERT_NE(last_main, nullptr);
  EXPECT_EQ(last_main->role(), pb::PROCESS_ROLE_MAIN);
  EXPECT_EQ(last_spin->role(), pb::PROCESS_ROLE_DATA_WORKER);
  EXPECT_EQ(last_sleep->role(), pb::PROCESS_ROLE_OTHER_CHILD);  // it has a child
  EXPECT_EQ(last_grand->role(), pb::PROCESS_ROLE_DATA_WORKER);
  EXPECT_EQ(last_grand->ppid(), sleeper);
  EXPECT_EQ(last_spin->ppid(), getpid());
  // The spinner: runnable all the time, so R in most probes, and its CPU time far above the
  // sleeper's. Not "close to wall time": on a loaded machine (this one's load reaches 15 on 2
  // cores) a spinner gets a fifth of a core, but it stays runnable.
  const double wall = static_cast<double>(last_spin->time_ns() - first_spin->time_ns());
  const double cpu = static_cast<double>(last_spin->utime_ns() + last_spin->stime_ns() -
                                         first_spin->utime_ns() - first_spin->stime_ns());
  EXPECT_GT(cpu / wall, 0.03) << "cpu " << cpu << " wall " << wall;
  EXPECT_GT(cpu, 5.0 * (last_grand->utime_ns() + last_grand->stime_ns()));
  ASSERT_GT(last_spin->state_probes(), 20u);
  EXPECT_GT(static_cast<double>(last_spin->probes_running()) / last_spin->state_probes(), 0.6);
  ASSERT_GT(last_grand->state_probes(), 20u);
  EXPECT_GT(static_cast<double>(last_grand->probes_sleeping()) / last_grand->state_probes(), 0.9);
  const pb::HostStats& h = last_main->host();
  EXPECT_EQ(h.online_cores(), static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(h.tracked_processes(), 4u);
  EXPECT_GT(h.cpu_user_ns() + h.cpu_system_ns() + h.cpu_idle_ns(), 0u);
  // Cost: what the collector measured of itself, per collection (generous bound: 2 ms).
  EXPECT_LT(h.collection_ns() / std::max<uint64_t>(1, h.collections()), 2000000u);
}

}  // namespace
}  // namespace gs
