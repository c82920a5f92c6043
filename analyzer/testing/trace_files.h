// trace_files.h — small .gstrace files written with TraceBuilder, shared by the golden test, the
// file-level tests, the CLI exit-code table (make_test_traces) and the benchmark.
//
// The "starved" trace is a training loop whose answer is known: per step the main thread prepares
// a batch on the CPU (`load_batch`, 30 ms, no CUDA calls), copies it to the device from pageable
// memory, launches three 2 ms kernels back to back and reads the loss with a blocking D2H copy
// (`.item()`), so the GPU idles ~30 ms per step after a sync, mostly in host work charged to
// load_batch's stack.
#ifndef GPUSTALL_ANALYZER_TESTING_TRACE_FILES_H_
#define GPUSTALL_ANALYZER_TESTING_TRACE_FILES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/testing/trace_builder.h"

namespace gs::analyzer::testing {

// Each returns "" on success, else the error.
std::string WriteStarvedTrace(const std::string& path, int steps = 12);
// The same with the NVTX ranges of a loop that marks its steps: "train_step N" around each step
// (outermost, tiling the loop), "load" and "forward" inside, and an outermost "setup" once.
std::string WriteStarvedTraceWithStepRanges(const std::string& path, int steps = 12);
// Kernels queued far ahead: utilisation near 100%, no recommendation.
std::string WriteHealthyTrace(const std::string& path, int steps = 50);
// The starved trace cut in the middle of its last frame (a killed process).
std::string WriteTruncatedTrace(const std::string& path);
// A valid trace whose header says schema version kSchemaVersion + 1.
std::string WriteNewerSchemaTrace(const std::string& path);
// A text file.
std::string WriteNotATrace(const std::string& path);

// An H100 SXM's DeviceInfo, SM limits included, as the agent writes a device (ordinal `index`).
gpustall::trace::DeviceInfo H100Device(uint32_t index);
// A one-dimensional launch configuration (grid_x × 1 × 1 blocks of block_x × 1 × 1 threads) whose
// registers and shared memory are known, as the agent interns one (Chunk.launch_configs).
gpustall::trace::LaunchConfig LaunchConfigMessage(uint32_t id, uint32_t grid_x, uint32_t block_x,
                                                  uint32_t registers, uint32_t static_shared,
                                                  uint32_t dynamic_shared);

// Kernels that say how full they keep the device: an agent trace of an H100 (132 SMs, compute
// capability 9.0, its SM limits written as the agent writes them, 1 KiB reserved shared memory a
// block) whose kernels carry launch configurations. Step s (s = 0..steps-1) starts at
// 5 s + 3 ms·s: a launch (5 µs) of `tiny_kernel` that runs [10 µs, 1010 µs) — 1 block of 256
// threads, 32 registers, 2 KiB static + 4 KiB dynamic shared memory: 1/132 of the SMs, 8 blocks
// an SM (warps and registers), est. occupancy 1/1056 —, then at 1010 µs a launch of
// `register_bound` that runs [1500 µs, 2500 µs) — 264 blocks of 1024 threads, 64 registers: one
// block an SM (registers), two full waves, coverage 1, est. occupancy 0.5. With `rank` >= 0 the
// header says rank `rank` of 2 and the pid is 4242 + rank.
std::string WriteSizedTrace(const std::string& path, int steps = 10, int rank = -1);

// Adds a copy-bound loop to `b`: thread 100 (`thread_name`, the main thread) spends 20 ms per
// step outside CUDA, then calls cudaMemcpyAsync (1 MiB, pageable source, stream 7, correlation =
// step, 0.1 ms) whose copy runs from 0.2 to 5 ms after the call; step s's call has stack
// stacks[s % stacks.size()]. So each step's ~20 ms of idle is host work charged by those stacks.
// Steps first_step .. first_step + steps - 1, step s starting at 5 s + 25 ms·(s - 1): a second
// call with the next first step continues the loop (after a chunk flushed between, say).
void AddCopyLoop(gs::trace::testing::TraceBuilder* b, const std::vector<uint32_t>& stacks, uint32_t steps,
                 std::string_view thread_name = "main", uint32_t first_step = 1);

// The benchmark's trace, at least `min_events` records: steps of 4 API calls + 4 activities (an
// async pinned 1 MiB copy and three 20 µs kernels 1 µs apart, then 100 µs of host work), one
// thread. Deliberately gap-dense (4 idle gaps per step, one per 2 records): the classifier's
// worst case. Returns the number of events written in *events. `host_detail`: each step's host
// work also holds a recorded wait (60 of its 100 µs) and every fourth step a sample, so the
// classifier's wait and sample paths run on every host-late gap (waits are 1 ms or longer in
// real traces, far sparser).
std::string WriteLargeTrace(const std::string& path, uint64_t min_events, uint64_t* events,
                            bool host_detail = false);

}  // namespace gs::analyzer::testing

#endif  // GPUSTALL_ANALYZER_TESTING_TRACE_FILES_H_
