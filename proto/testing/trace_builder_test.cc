#include "proto/testing/trace_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace gs::trace::testing {
namespace {

namespace pb = gpustall::trace;

TEST(TraceBuilderTest, StreamsChunksInsteadOfHoldingTheTrace) {
  const std::string path = ::testing::TempDir() + "/gs_builder_test_" + std::to_string(::getpid());
  TraceBuilder::Options options;
  options.records_per_chunk = 100;
  auto b = TraceBuilder::Create(path, pb::TraceHeader(), options);
  ASSERT_NE(b, nullptr);
  const uint32_t f = b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH);
  EXPECT_EQ(b->InternApiFunction("cudaLaunchKernel", pb::API_CLASS_LAUNCH), f);  // interned
  EXPECT_EQ(b->InternString("x"), b->InternString("x"));
  EXPECT_EQ(b->InternString(""), 0u);
  EXPECT_EQ(b->InternStackOfFunctions({"a", "b"}), b->InternStackOfFunctions({"a", "b"}));
  EXPECT_NE(b->InternStackOfFunctions({"a", "b"}), b->InternStackOfFunctions({"b", "a"}));
  for (int i = 0; i < 350; ++i) {
    ApiCallRecord r;
    r.thread_id = 1 + i % 3;
    r.enter_ns = 1000 + i;
    r.exit_ns = 1001 + i;
    r.function = f;
    b->AddApiCall(r);
  }
  // Every full chunk is already in the file; only the last 50 records are pending.
  EXPECT_EQ(b->chunks_written(), 3u);
  EXPECT_EQ(b->records_written(), 300u);
  EXPECT_EQ(b->records_added(), 350u);
  EXPECT_EQ(b->frame_offsets().size(), 4u);  // header + 3 chunks
  ASSERT_TRUE(b->Finish());
  EXPECT_EQ(b->chunks_written(), 4u);
  EXPECT_EQ(b->frame_offsets().size(), 6u);  // + last chunk + end
  std::FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  std::fseek(file, 0, SEEK_END);
  EXPECT_EQ(static_cast<uint64_t>(std::ftell(file)), b->bytes_written());
  std::fclose(file);
  std::remove(path.c_str());
}

TEST(TraceBuilderTest, CreateFailsCleanlyOnAnUnwritablePath) {
  std::string error;
  auto b = TraceBuilder::Create("/nonexistent-dir/x.gstrace", pb::TraceHeader(),
                                TraceBuilder::Options(), &error);
  EXPECT_EQ(b, nullptr);
  EXPECT_NE(error.find("/nonexistent-dir/x.gstrace"), std::string::npos);
}

}  // namespace
}  // namespace gs::trace::testing
