// truth_test.cc — runs probe_program (and, when nvcc exists, an nvcc --cudart=shared program
// linked against the REAL libcudart) on simgpu and checks what they left behind: the truth log
// (complete after exit, exact model timing, ordering, correlation) and the CUDA_INJECTION64_PATH
// library's view (InitializeInjection once, before any work; hooks with real cbids and params).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "tests/ptxas_log.h"
#include "tests/test_util.h"

using simgpu_test::JsonRaw;
using simgpu_test::JsonU64;
using simgpu_test::OfKind;
using simgpu_test::ReadLines;
using simgpu_test::RunProgram;
using simgpu_test::TempPath;

namespace {

const std::string kKernelNs = "2000000";  // SIMGPU_KERNEL_NS for the probe: 2 ms

TEST(SimgpuTruth, LogsEveryOperationWithModelTimesEvenWhenUnsyncedAtExit) {
  std::string truth = TempPath("truth");
  ASSERT_EQ(RunProgram({PROBE_PROGRAM}, {"SIMGPU_TRUTH=" + truth, "SIMGPU_KERNEL_NS=" + kKernelNs,
                                         "SIMGPU_TRUTH_API=1", "CUDA_INJECTION64_PATH=none"}),
            0);
  auto lines = ReadLines(truth);
  auto kernels = OfKind(lines, "kernel");
  auto copies = OfKind(lines, "memcpy");
  ASSERT_EQ(kernels.size(), 2u) << "the unsynchronised last kernel must be there too";
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(OfKind(lines, "sync").size(), 1u);
  EXPECT_EQ(JsonRaw(kernels[0], "name"), "_Z6squarePfi");
  EXPECT_EQ(JsonRaw(kernels[0], "demangled"), "square(float*, int)");
  EXPECT_EQ(JsonRaw(kernels[1], "name"), "_Z4tailv");
  for (const auto& k : kernels) {
    EXPECT_EQ(JsonU64(k, "end_ns") - JsonU64(k, "start_ns"), 2000000u) << k;
    EXPECT_LE(JsonU64(k, "submit_ns"), JsonU64(k, "start_ns"));
    EXPECT_EQ(JsonRaw(k, "grid").empty(), false);
  }
  EXPECT_EQ(JsonRaw(kernels[0], "grid"), "[8");  // flat parser stops at the comma
  // H2D pageable 1 MiB on the legacy stream, then the kernel after it, then D2H pinned async.
  const std::string& h2d = copies[0];
  const std::string& d2h = copies[1];
  EXPECT_EQ(JsonRaw(h2d, "copy_kind"), "HtoD");
  EXPECT_EQ(JsonRaw(h2d, "src_kind"), "pageable");
  EXPECT_EQ(JsonRaw(h2d, "dst_kind"), "device");
  EXPECT_EQ(JsonRaw(h2d, "async"), "false");
  EXPECT_EQ(JsonU64(h2d, "bytes"), 1u << 20);
  EXPECT_EQ(JsonRaw(d2h, "copy_kind"), "DtoH");
  EXPECT_EQ(JsonRaw(d2h, "dst_kind"), "pinned");
  EXPECT_EQ(JsonRaw(d2h, "async"), "true");
  // Default model: 1.5 us + bytes / bandwidth (8 GB/s pageable H2D, 24 GB/s pinned D2H).
  EXPECT_EQ(JsonU64(h2d, "end_ns") - JsonU64(h2d, "start_ns"), 1500u + (1u << 20) * 1000000000ull / 8000000000ull);
  EXPECT_EQ(JsonU64(d2h, "end_ns") - JsonU64(d2h, "start_ns"), 1500u + (1u << 20) * 1000000000ull / 24000000000ull);
  // Ordering: H2D -> square (legacy stream) -> D2H (blocking stream waits for legacy) -> tail.
  EXPECT_GE(JsonU64(kernels[0], "start_ns"), JsonU64(h2d, "end_ns"));
  EXPECT_GE(JsonU64(d2h, "start_ns"), JsonU64(kernels[0], "end_ns"));
  EXPECT_GE(JsonU64(kernels[1], "start_ns"), JsonU64(d2h, "end_ns"));
  EXPECT_EQ(JsonRaw(kernels[0], "stream"), "7") << "legacy default stream";
  EXPECT_EQ(JsonRaw(d2h, "stream"), JsonRaw(kernels[1], "stream"));
  // Correlation ids: non-zero, one per submitting call.
  std::set<uint64_t> ids;
  for (const auto* v : {&kernels, &copies}) {
    for (const auto& l : *v) {
      EXPECT_NE(JsonU64(l, "correlation_id"), 0u);
      ids.insert(JsonU64(l, "correlation_id"));
      EXPECT_NE(JsonU64(l, "pid"), 0u);
      EXPECT_NE(JsonU64(l, "tid"), 0u);
    }
  }
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_GE(OfKind(lines, "alloc").size(), 2u) << "cudaMalloc and cudaMallocHost";
  // SIMGPU_TRUTH_API=1: every runtime call, each op submitted inside the call that owns its id.
  std::map<uint64_t, std::string> api_by_corr;
  for (const auto& a : OfKind(lines, "api")) api_by_corr[JsonU64(a, "correlation_id")] = a;
  for (const auto* v : {&kernels, &copies}) {
    for (const auto& op : *v) {
      auto it = api_by_corr.find(JsonU64(op, "correlation_id"));
      ASSERT_NE(it, api_by_corr.end()) << op;
      EXPECT_LE(JsonU64(it->second, "start_ns"), JsonU64(op, "submit_ns"));
      EXPECT_GE(JsonU64(it->second, "end_ns"), JsonU64(op, "submit_ns"));
    }
  }
  const std::string& memcpy_api = api_by_corr[JsonU64(h2d, "correlation_id")];
  EXPECT_EQ(JsonRaw(memcpy_api, "name"), "cudaMemcpy_v3020");
  EXPECT_EQ(JsonU64(memcpy_api, "cbid"), 31u);
  EXPECT_GE(JsonU64(memcpy_api, "end_ns"), JsonU64(h2d, "end_ns")) << "cudaMemcpy blocked the host";
  EXPECT_EQ(JsonRaw(api_by_corr[JsonU64(kernels[0], "correlation_id")], "name"),
            "__cudaLaunchKernel_v13000");
  std::remove(truth.c_str());
}

TEST(SimgpuInjection, InitializeInjectionRunsOnceBeforeAnyWorkAndSeesEveryCall) {
  std::string truth = TempPath("inj-truth");
  std::string log = TempPath("inj-log");
  ASSERT_EQ(RunProgram({PROBE_PROGRAM}, {"SIMGPU_TRUTH=" + truth, "SIMGPU_KERNEL_NS=" + kKernelNs,
                                  "CUDA_INJECTION64_PATH=" TEST_INJECTION_LIBRARY,
                                  "SIMGPU_TEST_INJECTION_LOG=" + log,
                                  "SIMGPU_TEST_INJECTION_CALLS_CUDA=1"}),
            0);
  auto lines = ReadLines(log);
  ASSERT_FALSE(lines.empty());
  int inits = 0;
  uint64_t init_ns = 0;
  std::map<uint32_t, std::string> enter_by_corr;  // correlation id -> function name
  std::set<uint32_t> exits, records, op_corrs;
  bool saw_memcpy_params = false, saw_launch = false, saw_first_malloc_first = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::string what;
    in >> what;
    if (what == "init") {
      ++inits;
      in >> init_ns;
      EXPECT_EQ(i, 0u) << "InitializeInjection precedes every callback";
    } else if (what == "api") {
      int site;
      uint32_t cbid, corr;
      std::string name, symbol;
      in >> site >> cbid >> name >> corr >> symbol;
      EXPECT_EQ(lines[i].find("correlation_data_lost"), std::string::npos);
      if (site == 0) {
        if (enter_by_corr.empty()) saw_first_malloc_first = name == "cudaMalloc_v3020" && cbid == 20;
        enter_by_corr[corr] = name;
      } else {
        exits.insert(corr);
      }
      if (name == "cudaMemcpy_v3020") {
        EXPECT_EQ(cbid, 31u);
        saw_memcpy_params = lines[i].find("count=1048576 kind=1") != std::string::npos;
      }
      if (name == "__cudaLaunchKernel_v13000") {
        EXPECT_EQ(cbid, 505u);
        EXPECT_TRUE(symbol == "_Z6squarePfi" || symbol == "_Z4tailv") << symbol;
        saw_launch = true;
      }
    } else if (what == "record") {
      uint32_t cbid, corr;
      in >> cbid >> corr;
      records.insert(corr);
    } else if (what == "op") {
      int kind;
      uint32_t corr;
      in >> kind >> corr;
      if (kind >= 1 && kind <= 3) op_corrs.insert(corr);
    }
  }
  EXPECT_EQ(inits, 1);
  EXPECT_TRUE(saw_first_malloc_first) << "the call that initialised the driver is reported";
  EXPECT_TRUE(saw_memcpy_params) << "functionParams points at cudaMemcpy_v3020_params";
  EXPECT_TRUE(saw_launch);
  EXPECT_EQ(op_corrs.size(), 4u) << "kernels and copies reach on_op, even the unsynced one";
  for (uint32_t c : op_corrs) EXPECT_TRUE(enter_by_corr.count(c)) << "op corr " << c;
  for (const auto& [corr, name] : enter_by_corr) {
    EXPECT_TRUE(exits.count(corr)) << name;
    EXPECT_TRUE(records.count(corr)) << name;
  }
  auto truth_lines = ReadLines(truth);
  ASSERT_FALSE(truth_lines.empty());
  for (const auto& l : truth_lines) {
    EXPECT_LT(init_ns, JsonU64(l, "submit_ns")) << "no work before InitializeInjection: " << l;
  }
  std::remove(truth.c_str());
  std::remove(log.c_str());
}

TEST(SimgpuInjection, NoneMeansNoInjection) {
  std::string log = TempPath("none-log");
  ASSERT_EQ(RunProgram({PROBE_PROGRAM}, {"CUDA_INJECTION64_PATH=none", "SIMGPU_TEST_INJECTION_LOG=" + log}),
            0);
  EXPECT_TRUE(ReadLines(log).empty());
}

#ifdef NVCC_PROGRAM
// nvcc_program.cu, built by nvcc --cudart=shared against the real toolkit, run unchanged.
TEST(SimgpuNvcc, RealNvccProgramRunsOnSimgpu) {
  std::string truth = TempPath("nvcc-truth");
  ASSERT_EQ(RunProgram({NVCC_PROGRAM}, {"LD_LIBRARY_PATH=" SIMGPU_LIB_DIR, "SIMGPU_TRUTH=" + truth,
                                 "SIMGPU_KERNEL_DURATIONS=scale=4ms", "SIMGPU_KERNEL_NS=1ms",
                                 "CUDA_INJECTION64_PATH=none"}),
            0);
  auto kernels = OfKind(ReadLines(truth), "kernel");
  ASSERT_EQ(kernels.size(), 5u);
  // Registers and static shared memory: what ptxas said of the sm_90 cubin in the program's
  // fatbinary (the build keeps -Xptxas -v's output), read by simgpu at __cudaRegisterFatBinary.
  const auto ptxas = simgpu_test::ReadPtxasLog(NVCC_PROGRAM_PTXAS, "sm_90");
  ASSERT_EQ(ptxas.count("_Z5scalePffi"), 1u);
  ASSERT_EQ(ptxas.count("_Z4tilePfi"), 1u);
  int scale = 0, shift = 0, tile = 0;
  for (const auto& k : kernels) {
    uint64_t d = JsonU64(k, "end_ns") - JsonU64(k, "start_ns");
    const std::string name = JsonRaw(k, "name");
    if (name == "_Z5scalePffi") {
      ++scale;
      EXPECT_EQ(d, 4000000u);
      EXPECT_EQ(JsonU64(k, "registers_per_thread"),
                static_cast<uint64_t>(ptxas.at(name).registers));
      EXPECT_EQ(JsonU64(k, "static_shared_bytes"), 0u);
      EXPECT_EQ(JsonU64(k, "dynamic_shared_bytes"), 0u);
    } else if (name == "_Z4tilePfi") {
      ++tile;
      EXPECT_EQ(JsonU64(k, "registers_per_thread"),
                static_cast<uint64_t>(ptxas.at(name).registers));
      EXPECT_EQ(JsonU64(k, "static_shared_bytes"), 4000u) << "__shared__ float buf[1000]";
      EXPECT_EQ(ptxas.at(name).static_shared_bytes, 4000);
      EXPECT_EQ(JsonU64(k, "dynamic_shared_bytes"), 512u) << "<<<..., 512, s>>>";
    } else {
      ++shift;
      EXPECT_EQ(JsonRaw(k, "demangled"), "void shift<int>(int*, int)");
      EXPECT_EQ(d, 1000000u);
    }
  }
  EXPECT_EQ(scale, 3);
  EXPECT_EQ(shift, 1);
  EXPECT_EQ(tile, 1);
  std::remove(truth.c_str());
}
#endif

}  // namespace
