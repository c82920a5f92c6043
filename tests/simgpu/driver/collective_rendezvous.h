// collective_rendezvous.h — where the processes of a simulated job meet for simgpuCollective.
//
// The k-th launch of a collective of group G in every rank completes only when every rank's k-th
// launch has started on its device (README.md, "Collectives"). Each process publishes the
// modelled start time of its k-th launch into a POSIX shared-memory segment named after the group
// and a job key; once all SIMGPU_WORLD ranks have published, every rank reads the latest start
// and ends its collective at latest start + duration. Start times are modelled (known when the
// op is scheduled), so publishing early is the same as publishing when the device reaches it:
// all ranks of one host share CLOCK_MONOTONIC.
//
// Failure: a rank that is not there within SIMGPU_COLLECTIVE_TIMEOUT (a dead or hung rank) fails
// the collective: the waiting rank marks the segment aborted (so the other ranks fail at once
// rather than after their own timeout) and its device gets a sticky error.
//
// Segment name: "/simgpu-<job>-<group>", job = SIMGPU_JOB, else "ppid<parent pid>" (the ranks of
// one launcher share it; two concurrent test runs have different launchers). The segment is
// unlinked by the last process to leave it (at exit).
//
// Thread safety: every function may be called from any thread. Groups live until exit.
#ifndef GPUSTALL_TESTS_SIMGPU_DRIVER_COLLECTIVE_RENDEZVOUS_H_
#define GPUSTALL_TESTS_SIMGPU_DRIVER_COLLECTIVE_RENDEZVOUS_H_

#include <cstdint>
#include <string>

namespace simgpu {

class CollectiveGroup;

// This process's rank and the world size, from SIMGPU_WORLD (default 1) and RANK or SLURM_PROCID
// (default 0). A rank outside [0, world) stops the process with a message naming the variable.
struct RankPlacement {
  int rank = 0;
  int world = 1;
};
const RankPlacement& Placement();

// The group's rendezvous, attached on first use; NULL when the world has one rank (a collective
// then waits for nobody). Exits with a message when the segment cannot be created or opened.
CollectiveGroup* AttachCollectiveGroup(const std::string& group);

// The next launch index of this process in `group` (0, 1, ...), in submission order.
uint64_t NextCollectiveIndex(CollectiveGroup* group);

// Publishes that this rank's launch `index` starts (or started) at `start_ns`.
void PublishCollectiveStart(CollectiveGroup* group, uint64_t index, uint64_t start_ns);

enum class RendezvousState { kPending, kComplete, kFailed };
// Waits at most `wait_ns` for launch `index` to be started by every rank. kComplete: all have,
// *latest_start_ns is the latest start. kFailed: the segment was aborted (some rank timed out).
RendezvousState AwaitCollective(CollectiveGroup* group, uint64_t index, uint64_t wait_ns,
                                uint64_t* latest_start_ns);
// Marks the group failed for every rank (a rank did not arrive in time).
void AbortCollectiveGroup(CollectiveGroup* group, uint64_t index);

// SIMGPU_COLLECTIVE_TIMEOUT (default 60 s): how long a collective waits for the other ranks.
uint64_t CollectiveTimeoutNs();

}  // namespace simgpu

#endif  // GPUSTALL_TESTS_SIMGPU_DRIVER_COLLECTIVE_RENDEZVOUS_H_
