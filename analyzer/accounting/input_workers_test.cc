// Input-worker evidence (input_workers.cc) and its recommendation (recommendations.cc): process
// records built in memory, a host-bound (or healthy) device timeline from SyntheticTrace.
#include "analyzer/accounting/input_workers.h"

#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::SyntheticTrace;
constexpr TimeNs kUs = 1'000, kMs = 1'000'000, kS = 1'000'000'000;

struct Shares {
  double cpu, running, disk, sleeping;
};

// Two records of one process, `span` apart, with the given activity in between.
void AddProcess(ProcessActivityTable* t, int64_t pid, ProcessRole role, TimeNs span, Shares s,
                uint64_t read_bytes = 0) {
  ProcessSample a;
  a.pid = pid;
  a.role = role;
  a.depth = role == ProcessRole::kMain ? 0 : 1;
  a.comm = "python3";
  a.time_ns = 10 * kS;
  a.cpu_ns = 3 * kS;
  a.probes = 7;
  ProcessSample b = a;
  b.time_ns = a.time_ns + span;
  b.cpu_ns = a.cpu_ns + static_cast<TimeNs>(s.cpu * span);
  b.probes = a.probes + 100;
  b.probes_running = static_cast<uint64_t>(s.running * 100 + 0.5);
  b.probes_disk_wait = static_cast<uint64_t>(s.disk * 100 + 0.5);
  b.probes_sleeping = static_cast<uint64_t>(s.sleeping * 100 + 0.5);
  b.read_bytes = read_bytes;
  if (role == ProcessRole::kMain) {
    a.has_host = b.has_host = true;
    a.host.online_cores = b.host.online_cores = 16;
    a.host.affinity_cores = b.host.affinity_cores = 16;
    // 16 cores over `span`: 4 busy, 12 idle.
    b.host.cpu_busy_ns = 4 * span;
    b.host.cpu_idle_ns = 12 * span;
    b.host.collection_ns = 2 * kMs;
    b.host.collections = 40;
    b.host.period_ms = 500;
  }
  t->Add(a);
  t->Add(b);
}

// The GPU waits for input: 30 ms of host time before every 5 ms step.
SyntheticTrace HostBound() {
  SyntheticTrace t;
  TimeNs now = 0;
  for (int i = 0; i < 20; ++i) {
    now += 30 * kMs;
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 5 * kMs);
    now += 5 * kMs;
  }
  return t;
}

const Recommendation* Find(const Analysis& a, const std::string& kind) {
  for (const Recommendation& r : a.recommendations)
    if (r.kind == kind) return &r;
  return nullptr;
}

TEST(InputWorkersTest, CpuBoundWorkersOnAHostWithIdleCores) {
  SyntheticTrace t = HostBound();
  ProcessActivityTable& p = t.info().processes;
  AddProcess(&p, 100, ProcessRole::kMain, 2 * kS, {0.1, 0.1, 0, 0.9});
  AddProcess(&p, 101, ProcessRole::kDataWorker, 2 * kS, {0.98, 0.99, 0, 0.01});
  AddProcess(&p, 102, ProcessRole::kDataWorker, 2 * kS, {0.96, 0.97, 0, 0.03});
  AddProcess(&p, 103, ProcessRole::kOtherChild, 2 * kS, {0, 0, 0, 0});  // resource tracker
  Analysis a = t.Analyze();
  const InputWorkersSummary& s = a.input_workers;
  ASSERT_TRUE(s.present);
  ASSERT_EQ(s.workers.size(), 2u);
  EXPECT_EQ(s.other_children, 1u);
  EXPECT_NEAR(s.cpu_busy_mean, 0.97, 1e-9);
  EXPECT_NEAR(s.workers[0].cpu_busy, 0.98, 1e-9);
  EXPECT_NEAR(s.workers[0].running, 0.99, 1e-9);
  EXPECT_NEAR(s.main_cpu_busy, 0.1, 1e-9);
  EXPECT_EQ(s.host.online_cores, 16u);
  EXPECT_NEAR(s.host.idle_cores, 12.0, 1e-9);
  EXPECT_NEAR(s.host.busy, 0.25, 1e-9);
  EXPECT_EQ(s.host.collection_ns, 2 * kMs);
  EXPECT_EQ(s.verdict, WorkerVerdict::kCpuBound);
  const Recommendation* r = Find(a, "input_workers");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->text.find("2 input workers, each 97.0% CPU-busy"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("16-core host"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("input is CPU-bound — more workers would help (12.0 cores idle)"), std::string::npos)
      << r->text;
  // The more specific advice comes before the generic host-bound one.
  ASSERT_GE(a.recommendations.size(), 2u);
  EXPECT_EQ(a.recommendations[0].kind, "input_workers");
  EXPECT_EQ(a.recommendations[1].kind, "input_pipeline");
}

TEST(InputWorkersTest, DiskWaitMeansStorage) {
  SyntheticTrace t = HostBound();
  ProcessActivityTable& p = t.info().processes;
  AddProcess(&p, 100, ProcessRole::kMain, 2 * kS, {0.1, 0.1, 0, 0.9});
  AddProcess(&p, 101, ProcessRole::kDataWorker, 2 * kS, {0.2, 0.2, 0.7, 0.1}, 512 << 20);
  Analysis a = t.Analyze();
  EXPECT_EQ(a.input_workers.verdict, WorkerVerdict::kStorageBound);
  EXPECT_EQ(a.input_workers.read_bytes, 512u << 20);
  const Recommendation* r = Find(a, "input_workers");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->text.find("1 input worker in disk wait in 70.0% of state probes"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("storage is the bottleneck"), std::string::npos) << r->text;
}

TEST(InputWorkersTest, SleepingWorkersAreNotTheBottleneck) {
  SyntheticTrace t = HostBound();
  ProcessActivityTable& p = t.info().processes;
  AddProcess(&p, 100, ProcessRole::kMain, 2 * kS, {0.1, 0.1, 0, 0.9});
  AddProcess(&p, 101, ProcessRole::kDataWorker, 2 * kS, {0.02, 0.05, 0, 0.95});
  AddProcess(&p, 102, ProcessRole::kDataWorker, 2 * kS, {0.30, 0.30, 0, 0.70});
  Analysis a = t.Analyze();
  EXPECT_EQ(a.input_workers.verdict, WorkerVerdict::kWaiting);
  const Recommendation* r = Find(a, "input_workers");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->text.find("2 input workers sleeping in 82.5% of state probes, CPU-busy 2.0%–30.0%"),
            std::string::npos) << r->text;
  EXPECT_NE(r->text.find("not the bottleneck"), std::string::npos) << r->text;
}

TEST(InputWorkersTest, NoAdviceWhenTheGpuIsNotWaitingForInput) {
  SyntheticTrace t;
  TimeNs now = 0;
  for (int i = 0; i < 100; ++i) {  // queued ahead: a busy device
    t.Launch(1, now, now + 5 * kUs, now + 10 * kUs, now + 10 * kMs);
    now += 10 * kMs + 10 * kUs;
  }
  AddProcess(&t.info().processes, 101, ProcessRole::kDataWorker, 2 * kS, {0.98, 0.99, 0, 0.01});
  Analysis a = t.Analyze();
  EXPECT_EQ(a.input_workers.verdict, WorkerVerdict::kCpuBound);  // evidence still reported
  EXPECT_EQ(Find(a, "input_workers"), nullptr);
}

TEST(InputWorkersTest, WorkerSeenOnceAndTracesWithoutRecords) {
  SyntheticTrace t = HostBound();
  Analysis none = t.Analyze();
  EXPECT_FALSE(none.input_workers.present);
  EXPECT_EQ(Find(none, "input_workers"), nullptr);
  ProcessSample once;
  once.pid = 7;
  once.role = ProcessRole::kDataWorker;
  t.info().processes.Add(once);
  Analysis a = t.Analyze();
  EXPECT_TRUE(a.input_workers.present);
  EXPECT_TRUE(a.input_workers.workers.empty());
  EXPECT_EQ(a.input_workers.verdict, WorkerVerdict::kNone);
}

TEST(ProcessActivityTableTest, PidReuseIsAnotherProcessAndOrderIsFree) {
  ProcessActivityTable t;
  ProcessSample s;
  s.pid = 5;
  s.start_time_ns = 100;
  s.time_ns = 2 * kS;
  s.cpu_ns = 2 * kS;
  t.Add(s);
  s.time_ns = 1 * kS;  // an earlier record, read later
  s.cpu_ns = 1 * kS;
  t.Add(s);
  s.start_time_ns = 999;  // the pid reused
  t.Add(s);
  ASSERT_EQ(t.processes().size(), 2u);
  EXPECT_EQ(t.processes()[0].records, 2u);
  EXPECT_EQ(t.processes()[0].span_ns(), 1 * kS);
  EXPECT_NEAR(t.processes()[0].CpuBusy(), 1.0, 1e-12);
  EXPECT_EQ(t.processes()[1].records, 1u);
}

}  // namespace
}  // namespace gs::analyzer
