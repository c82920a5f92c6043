#include "analyzer/reader/dump.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "proto/testing/trace_builder.h"

namespace gs::reader {
namespace {

namespace pb = gpustall::trace;
using trace::testing::TraceBuilder;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/gs_dump_test_" + std::to_string(::getpid()) + "_" + name;
}

// Two launches with their kernels, one copy; returns the path.
std::string WriteTrace(const std::string& name) {
  const std::string path = TempPath(name);
  pb::TraceHeader header;
  header.set_host_name("box");
  header.set_pid(77);
  header.set_rank(1);
  header.add_command_line("./train");
  auto b = TraceBuilder::Create(path, header);
  const uint32_t launch = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
  const uint32_t copy = b->InternApiFunction("cudaMemcpy", pb::API_CLASS_MEMCPY);
  const uint32_t stack =
      b->InternStackOfFunctions({"load_batch@workload.cc:42", "train_step@workload.cc:80", "main"});
  const uint32_t kernel = b->InternString("saxpy");
  for (int i = 0; i < 2; ++i) {
    trace::ApiCallRecord call;
    call.thread_id = 9;
    call.enter_ns = 1000 + i * 100000;
    call.exit_ns = call.enter_ns + 5000;
    call.function = launch;
    call.correlation_id = 10 + i;
    call.stack = stack;
    b->AddApiCall(call);
    trace::GpuActivityRecord k;
    k.start_ns = call.exit_ns + 1000;
    k.end_ns = k.start_ns + 20000;
    k.correlation_id = call.correlation_id;
    k.kind = pb::ACTIVITY_KIND_KERNEL;
    k.source = pb::ACTIVITY_SOURCE_CUPTI;
    k.stream = 7;
    k.name = kernel;
    b->AddActivity(k);
  }
  trace::ApiCallRecord c;
  c.thread_id = 9;
  c.enter_ns = 500000;
  c.exit_ns = 900000;
  c.function = copy;
  c.correlation_id = 12;
  c.bytes = 1 << 20;
  c.copy_kind = 2;
  c.src_kind = pb::MEM_KIND_DEVICE;
  c.dst_kind = pb::MEM_KIND_PAGEABLE;
  b->AddApiCall(c);
  EXPECT_TRUE(b->Finish());
  return path;
}

TEST(DumpTest, PrintsHeaderAndOneLinePerRecordWithResolvedStacks) {
  const std::string path = WriteTrace("ok");
  std::ostringstream out;
  ASSERT_TRUE(DumpTrace(path, out).ok());
  const std::string text = out.str();
  EXPECT_TRUE(absl::StrContains(text, "header.host \"box\"")) << text;
  EXPECT_TRUE(absl::StrContains(text, "rank=1"));
  int api = 0, gpu = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "api ")) ++api;
    if (absl::StartsWith(line, "gpu ")) ++gpu;
  }
  EXPECT_EQ(api, 3);
  EXPECT_EQ(gpu, 2);
  EXPECT_TRUE(absl::StrContains(
      text, "cudaLaunchKernel class=LAUNCH dur=5000 corr=10 stack=#1 [load_batch (workload.cc:42) "
            "<- train_step (workload.cc:80) <- main]"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "KERNEL src=CUPTI corr=11 name=\"saxpy\""));
  EXPECT_TRUE(absl::StrContains(text, "bytes=1048576 copy_kind=2 src=DEVICE dst=PAGEABLE"));
  EXPECT_TRUE(absl::StrContains(text, "end reason=EXIT"));
  EXPECT_TRUE(absl::StrContains(text, "# damage: 0 reports"));
  std::remove(path.c_str());
}

TEST(DumpTest, PrintsDamageInlineAndErrorsOnNonTraces) {
  const std::string path = WriteTrace("cut");
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 7));  // cut the end frame
  }
  std::ostringstream out;
  ASSERT_TRUE(DumpTrace(path, out).ok());
  EXPECT_TRUE(absl::StrContains(out.str(), "damage @")) << out.str();
  EXPECT_TRUE(absl::StrContains(out.str(), "truncated"));
  EXPECT_TRUE(absl::StrContains(out.str(), "no end record"));

  {
    std::ofstream text(path, std::ios::trunc);
    text << "hello\n";
  }
  std::ostringstream ignored;
  const absl::Status s = DumpTrace(path, ignored);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gs::reader
