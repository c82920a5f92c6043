// driver_truth_test.cc — runs driver_program (simgpu's libcuda.so.1 on a real cubin, plus one
// runtime launch) and checks the truth log: kernels launched through the driver API are on the
// device timeline with the model's durations (SIMGPU_KERNEL_DURATIONS by cubin symbol name), in
// stream order, named as launched by cuLaunchKernel / cuLaunchKernelEx (submit_api, driver
// domain), with the registers the cubin gives them (as ptxas said) and the launch's dynamic
// shared memory; every direct driver call has its own correlation id, and the runtime launch's
// nested cuLaunchKernel carries the runtime call's id, as does its kernel.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/ptxas_log.h"
#include "tests/test_util.h"

using simgpu_test::JsonRaw;
using simgpu_test::JsonU64;
using simgpu_test::OfKind;
using simgpu_test::ReadLines;
using simgpu_test::RunProgram;
using simgpu_test::TempPath;

namespace {

const std::string* Find(const std::vector<std::string>& lines, const std::string& key,
                        const std::string& value) {
  for (const auto& l : lines) {
    if (JsonRaw(l, key) == value) return &l;
  }
  return nullptr;
}

TEST(SimgpuDriverApi, CubinLaunchesAreOnTheTimelineAndInTheTruthLog) {
  std::string truth = TempPath("driver-truth");
  ASSERT_EQ(RunProgram({DRIVER_PROGRAM, DRIVER_CUBIN, DRIVER_FATBIN},
                       {"SIMGPU_TRUTH=" + truth, "SIMGPU_TRUTH_API=1", "CUDA_INJECTION64_PATH=none",
                        "SIMGPU_KERNEL_DURATIONS=triton_add=3ms,scale=5ms"}),
            0);
  auto lines = ReadLines(truth);
  auto kernels = OfKind(lines, "kernel");
  auto apis = OfKind(lines, "api");
  ASSERT_EQ(kernels.size(), 3u);

  const std::string* add = Find(kernels, "name", "triton_add");
  const std::string* scale = Find(kernels, "name", "_Z5scalePffi");
  const std::string* rt = Find(kernels, "name", "runtime_kernel");
  ASSERT_TRUE(add && scale && rt);
  // Durations by name, as for runtime launches: extern "C" name, and demangled base name.
  EXPECT_EQ(JsonU64(*add, "end_ns") - JsonU64(*add, "start_ns"), 3000000u);
  EXPECT_EQ(JsonU64(*scale, "end_ns") - JsonU64(*scale, "start_ns"), 5000000u);
  EXPECT_EQ(JsonRaw(*scale, "demangled"), "scale(float*, float, int)");
  EXPECT_EQ(JsonU64(*rt, "end_ns") - JsonU64(*rt, "start_ns"), 1000000u);
  // Stream order on the created stream.
  EXPECT_GE(JsonU64(*scale, "start_ns"), JsonU64(*add, "end_ns"));
  EXPECT_EQ(JsonRaw(*add, "stream"), JsonRaw(*scale, "stream"));
  EXPECT_EQ(JsonRaw(*add, "grid"), "[256");  // the flat reader stops at the first comma
  // Which API launched each kernel.
  EXPECT_EQ(JsonRaw(*add, "submit_api"), "cuLaunchKernel");
  EXPECT_EQ(JsonRaw(*add, "submit_domain"), "driver");
  EXPECT_EQ(JsonRaw(*scale, "submit_api"), "cuLaunchKernelEx");
  EXPECT_EQ(JsonRaw(*scale, "submit_domain"), "driver");
  EXPECT_EQ(JsonRaw(*rt, "submit_api"), "cudaLaunchKernel_v7000");
  EXPECT_EQ(JsonRaw(*rt, "submit_domain"), "runtime");
  // Registers and static shared memory from the loaded cubin, as ptxas said (the build keeps its
  // -Xptxas -v output); the dynamic shared memory cuLaunchKernelEx asked for; a synthetic
  // kernel's defaults.
  const auto ptxas = simgpu_test::ReadPtxasLog(std::string(DRIVER_CUBIN) + ".ptxas.txt", "sm_90");
  ASSERT_EQ(ptxas.size(), 2u);
  EXPECT_EQ(JsonU64(*add, "registers_per_thread"),
            static_cast<uint64_t>(ptxas.at("triton_add").registers));
  EXPECT_EQ(JsonU64(*scale, "registers_per_thread"),
            static_cast<uint64_t>(ptxas.at("_Z5scalePffi").registers));
  EXPECT_EQ(JsonU64(*add, "static_shared_bytes"), 0u);
  EXPECT_EQ(JsonU64(*add, "dynamic_shared_bytes"), 0u);
  EXPECT_EQ(JsonU64(*scale, "dynamic_shared_bytes"), 1024u);
  EXPECT_EQ(JsonU64(*rt, "registers_per_thread"), 32u);

  // Copies, the memset and allocations name their driver calls too.
  auto copies = OfKind(lines, "memcpy");
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_TRUE(Find(copies, "submit_api", "cuMemcpyHtoDAsync_v2"));
  EXPECT_TRUE(Find(copies, "submit_api", "cuMemcpyDtoHAsync_v2"));
  auto memsets = OfKind(lines, "memset");
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(JsonRaw(memsets[0], "submit_api"), "cuMemsetD32Async");
  EXPECT_EQ(JsonU64(memsets[0], "bytes"), 65536u * 4);
  EXPECT_GE(JsonU64(*add, "start_ns"), JsonU64(memsets[0], "end_ns"));
  auto allocs = OfKind(lines, "alloc");
  ASSERT_EQ(allocs.size(), 3u);
  for (const auto& a : allocs) EXPECT_EQ(JsonRaw(a, "api"), "cuMemAlloc_v2") << a;

  // API lines: each direct driver call has a correlation id of its own ...
  std::map<uint64_t, int> direct;
  for (const auto& a : apis) {
    if (JsonRaw(a, "domain") == "driver" && JsonRaw(a, "nested").empty()) {
      ++direct[JsonU64(a, "correlation_id")];
    }
  }
  EXPECT_GT(direct.size(), 20u);
  for (const auto& [corr, n] : direct) EXPECT_EQ(n, 1) << "correlation id " << corr;
  // ... which its kernel carries;
  const std::string* launch_api = nullptr;
  const std::string* launch_ex_api = nullptr;
  for (const auto& a : apis) {
    if (JsonRaw(a, "name") == "cuLaunchKernel" && JsonRaw(a, "result") == "0" &&
        JsonRaw(a, "nested").empty()) {
      launch_api = &a;
    }
    if (JsonRaw(a, "name") == "cuLaunchKernelEx") launch_ex_api = &a;
  }
  ASSERT_TRUE(launch_api && launch_ex_api);
  EXPECT_EQ(JsonU64(*launch_api, "correlation_id"), JsonU64(*add, "correlation_id"));
  EXPECT_EQ(JsonU64(*launch_ex_api, "correlation_id"), JsonU64(*scale, "correlation_id"));
  EXPECT_LE(JsonU64(*launch_api, "start_ns"), JsonU64(*add, "submit_ns"));
  EXPECT_GE(JsonU64(*launch_api, "end_ns"), JsonU64(*add, "submit_ns"));
  // the runtime launch: its nested cuLaunchKernel has the runtime call's id, and so does its
  // kernel; the nested call lies inside the runtime call.
  const std::string* rt_api = Find(apis, "name", "cudaLaunchKernel_v7000");
  ASSERT_TRUE(rt_api);
  EXPECT_EQ(JsonRaw(*rt_api, "domain"), "runtime");
  uint64_t rt_corr = JsonU64(*rt_api, "correlation_id");
  EXPECT_EQ(JsonU64(*rt, "correlation_id"), rt_corr);
  std::vector<std::string> nested;
  for (const auto& a : apis) {
    if (JsonRaw(a, "nested") == "true") nested.push_back(a);
  }
  // The runtime calls here that nest driver calls: the launch, and the entry-point query.
  ASSERT_EQ(nested.size(), 2u);
  const std::string* nested_launch = Find(nested, "name", "cuLaunchKernel");
  ASSERT_TRUE(nested_launch);
  EXPECT_EQ(JsonRaw(*nested_launch, "domain"), "driver");
  EXPECT_EQ(JsonU64(*nested_launch, "correlation_id"), rt_corr);
  EXPECT_GE(JsonU64(*nested_launch, "start_ns"), JsonU64(*rt_api, "start_ns"));
  EXPECT_LE(JsonU64(*nested_launch, "end_ns"), JsonU64(*rt_api, "end_ns"));
  EXPECT_EQ(direct.count(rt_corr), 0u);
  const std::string* nested_gpa = Find(nested, "name", "cuGetProcAddress_v2");
  const std::string* entry_api = Find(apis, "name", "cudaGetDriverEntryPointByVersion_v12050");
  ASSERT_TRUE(nested_gpa && entry_api);
  EXPECT_EQ(JsonU64(*nested_gpa, "correlation_id"), JsonU64(*entry_api, "correlation_id"));
  std::remove(truth.c_str());
}

}  // namespace
