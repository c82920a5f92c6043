#include "analyzer/summary/summary_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "proto/gssummary.pb.h"

namespace gs::analyzer {

namespace {
namespace ps = gpustall::summary;
constexpr uint32_t kSummaryVersion = 1;

Cause CauseFromName(const std::string& name, bool* ok) {
  for (int c = 0; c < kNumCauses; ++c) {
    if (name == CauseName(static_cast<Cause>(c))) {
      *ok = true;
      return static_cast<Cause>(c);
    }
  }
  *ok = false;
  return Cause::kOther;
}
}  // namespace

std::string EncodeRankSummary(const RankSummary& s) {
  ps::RankSummaryFile m;
  m.set_summary_version(kSummaryVersion);
  m.set_source(s.source);
  m.set_host_name(s.host_name);
  m.set_host_id(s.host_id);
  m.set_boot_id(s.boot_id);
  m.set_job_id(s.job_id);
  m.set_pid(s.pid);
  if (s.rank) m.set_rank(*s.rank);
  if (s.world_size) m.set_world_size(*s.world_size);
  m.set_trace_id(s.trace_id);
  m.set_capture_window(s.capture_window);
  m.set_clock_monotonic_ns(s.clock_monotonic_ns);
  m.set_clock_realtime_ns(s.clock_realtime_ns);
  m.set_clock_uncertainty_ns(s.clock_uncertainty_ns);
  m.set_clock(static_cast<uint32_t>(s.clock));
  m.set_devices(s.devices);
  m.set_wall_ns(s.wall_ns);
  m.set_compute_busy_ns(s.compute_busy_ns);
  m.set_steady_wall_ns(s.steady_wall_ns);
  m.set_steady_idle_ns(s.steady_idle_ns);
  m.set_collective_ns(s.collective_ns);
  for (int c = 0; c < kNumCauses; ++c) {
    if (s.idle_by_cause[c] == 0) continue;
    ps::CauseIdle* ci = m.add_idle_by_cause();
    ci->set_cause(CauseName(static_cast<Cause>(c)));
    ci->set_idle_ns(s.idle_by_cause[c]);
  }
  m.set_idle_intervals(s.idle_intervals);
  if (s.sm_coverage_busy_ns) m.set_sm_coverage_busy_ns(*s.sm_coverage_busy_ns);
  if (s.est_occupancy_busy_ns) m.set_est_occupancy_busy_ns(*s.est_occupancy_busy_ns);
  for (const RankStep& st : s.steps) {
    ps::RankStep* p = m.add_steps();
    p->set_collective_start_ns(st.collective_start_ns);
    p->set_collective_end_ns(st.collective_end_ns);
    p->set_idle_ns(st.idle_ns);
    p->set_host_bound_idle_ns(st.host_bound_idle_ns);
  }
  for (const RankStack& st : s.stacks) {
    ps::RankStack* p = m.add_stacks();
    for (const std::string& f : st.frames) p->add_frames(f);
    p->set_idle_ns(st.idle_ns);
    p->set_step_host_bound_ns(st.step_host_bound_ns);
    p->set_cause(static_cast<uint32_t>(st.cause));
  }
  return std::string(kSummaryMagic, sizeof(kSummaryMagic)) + m.SerializeAsString();
}

absl::StatusOr<RankSummary> DecodeRankSummary(const std::string& bytes, const std::string& name) {
  if (bytes.size() < sizeof(kSummaryMagic) ||
      std::memcmp(bytes.data(), kSummaryMagic, sizeof(kSummaryMagic)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a gpustall summary"));
  }
  ps::RankSummaryFile m;
  if (!m.ParseFromArray(bytes.data() + sizeof(kSummaryMagic),
                        static_cast<int>(bytes.size() - sizeof(kSummaryMagic)))) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": damaged summary (does not decode)"));
  }
  if (m.summary_version() > kSummaryVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, ": summary version ", m.summary_version(), " is newer than this gsanalyze's ",
        kSummaryVersion));
  }
  RankSummary s;
  s.source = m.source();
  s.host_name = m.host_name();
  s.host_id = m.host_id();
  s.boot_id = m.boot_id();
  s.job_id = m.job_id();
  s.pid = m.pid();
  if (m.has_rank()) s.rank = m.rank();
  if (m.has_world_size()) s.world_size = m.world_size();
  s.trace_id = m.trace_id();
  s.capture_window = m.capture_window();
  s.clock_monotonic_ns = m.clock_monotonic_ns();
  s.clock_realtime_ns = m.clock_realtime_ns();
  s.clock_uncertainty_ns = m.clock_uncertainty_ns();
  s.clock = m.clock() <= static_cast<uint32_t>(RankClock::kNone) ? static_cast<RankClock>(m.clock()) : RankClock::kNone;
  s.devices = m.devices();
  s.wall_ns = m.wall_ns();
  s.compute_busy_ns = m.compute_busy_ns();
  s.steady_wall_ns = m.steady_wall_ns();
  s.steady_idle_ns = m.steady_idle_ns();
  s.collective_ns = m.collective_ns();
  for (const ps::CauseIdle& ci : m.idle_by_cause()) {
    bool ok;
    Cause c = CauseFromName(ci.cause(), &ok);
    // A cause this gsanalyze does not know (a newer writer) is still idle time: count it as other.
    s.idle_by_cause[static_cast<int>(ok ? c : Cause::kOther)] += ci.idle_ns();
  }
  s.idle_intervals = m.idle_intervals();
  if (m.has_sm_coverage_busy_ns()) s.sm_coverage_busy_ns = m.sm_coverage_busy_ns();
  if (m.has_est_occupancy_busy_ns()) s.est_occupancy_busy_ns = m.est_occupancy_busy_ns();
  for (const ps::RankStep& p : m.steps()) {
    s.steps.push_back({p.collective_start_ns(), p.collective_end_ns(), p.idle_ns(),
                       p.host_bound_idle_ns()});
  }
  for (const ps::RankStack& p : m.stacks()) {
    RankStack st;
    st.frames.assign(p.frames().begin(), p.frames().end());
    st.idle_ns = p.idle_ns();
    st.step_host_bound_ns = p.step_host_bound_ns();
    st.cause = p.cause() < static_cast<uint32_t>(kNumCauses) ? static_cast<Cause>(p.cause())
                                                               : Cause::kOther;
    s.stacks.push_back(std::move(st));
  }
  return s;
}

absl::Status WriteRankSummary(const RankSummary& summary, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  out << EncodeRankSummary(summary);
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

absl::StatusOr<RankSummary> ReadRankSummary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return DecodeRankSummary(bytes.str(), path);
}

bool HasSummaryMagic(std::string_view head) {
  return head.size() >= sizeof(kSummaryMagic) && std::memcmp(head.data(), kSummaryMagic, sizeof(kSummaryMagic)) == 0;
}

}  // namespace gs::analyzer
