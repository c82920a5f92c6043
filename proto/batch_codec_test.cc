#include "proto/batch_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gs::trace {
namespace {

namespace pb = gpustall::trace;

ApiCallRecord RandomCall(std::mt19937_64& rng, uint64_t tid) {
  ApiCallRecord r;
  r.thread_id = tid;
  r.enter_ns = rng();
  r.exit_ns = r.enter_ns + (rng() % 100000);
  r.bytes = rng() % 3 == 0 ? rng() : 0;
  r.stream = rng() % 2 ? rng() : 0;
  r.address = rng();
  r.function = static_cast<uint32_t>(rng() % 40);
  r.correlation_id = static_cast<uint32_t>(rng());
  r.stack = static_cast<uint32_t>(rng() % 1000);
  r.result = static_cast<int32_t>(rng() % 5) - 1;
  r.device = static_cast<uint32_t>(rng() % 8);
  r.copy_kind = static_cast<uint8_t>(rng() % 5);
  r.src_kind = static_cast<MemKind>(rng() % 6);
  r.dst_kind = static_cast<MemKind>(rng() % 6);
  r.flags = static_cast<uint8_t>(rng() % 4);
  return r;
}

void ExpectSameCall(const ApiCallRecord& a, const ApiCallRecord& b) {
  EXPECT_EQ(a.thread_id, b.thread_id);
  EXPECT_EQ(a.enter_ns, b.enter_ns);
  EXPECT_EQ(a.exit_ns, b.exit_ns);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.address, b.address);
  EXPECT_EQ(a.function, b.function);
  EXPECT_EQ(a.correlation_id, b.correlation_id);
  EXPECT_EQ(a.stack, b.stack);
  EXPECT_EQ(a.result, b.result);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.copy_kind, b.copy_kind);
  EXPECT_EQ(a.src_kind, b.src_kind);
  EXPECT_EQ(a.dst_kind, b.dst_kind);
  EXPECT_EQ(a.flags, b.flags);
}

TEST(BatchCodecTest, ApiCallsRoundTripThroughSerialization) {
  std::mt19937_64 rng(1);
  std::vector<ApiCallRecord> in;
  for (int i = 0; i < 500; ++i) in.push_back(RandomCall(rng, 77));
  pb::ApiCallBatch batch;
  ApiCallBatchEncoder enc;
  enc.Begin(&batch, 77, in[0].enter_ns);
  for (const auto& r : in) enc.Add(r);
  EXPECT_EQ(enc.count(), in.size());

  pb::ApiCallBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(batch.SerializeAsString()));
  std::vector<ApiCallRecord> out;
  std::string error;
  ASSERT_TRUE(DecodeApiCallBatch(parsed, &out, &error)) << error;
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) ExpectSameCall(in[i], out[i]);
}

TEST(BatchCodecTest, DefaultColumnsStayEmptyUntilNeeded) {
  pb::ApiCallBatch batch;
  ApiCallBatchEncoder enc;
  enc.Begin(&batch, 1, 100);
  ApiCallRecord r;
  r.enter_ns = 100;
  r.exit_ns = 150;
  r.function = 3;
  enc.Add(r);
  r.enter_ns = 200;
  r.exit_ns = 260;
  enc.Add(r);
  EXPECT_EQ(batch.bytes_size(), 0);
  EXPECT_EQ(batch.result_size(), 0);
  EXPECT_EQ(batch.stream_delta_size(), 0);
  EXPECT_EQ(batch.enter_delta_size(), 2);
  // A non-default value backfills the column with defaults for the earlier records.
  r.enter_ns = 300;
  r.exit_ns = 301;
  r.bytes = 4096;
  enc.Add(r);
  ASSERT_EQ(batch.bytes_size(), 3);
  EXPECT_EQ(batch.bytes(0), 0u);
  EXPECT_EQ(batch.bytes(2), 4096u);
  std::vector<ApiCallRecord> out;
  std::string error;
  ASSERT_TRUE(DecodeApiCallBatch(batch, &out, &error)) << error;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].enter_ns, 200u);
  EXPECT_EQ(out[1].exit_ns, 260u);
  EXPECT_EQ(out[2].bytes, 4096u);
  EXPECT_EQ(out[0].thread_id, 1u);
}

TEST(BatchCodecTest, RejectsInconsistentColumns) {
  pb::ApiCallBatch batch;
  batch.set_count(3);
  batch.add_enter_delta(1);
  batch.add_enter_delta(1);
  batch.add_enter_delta(1);
  batch.add_bytes(5);  // 1 element for 3 records
  std::vector<ApiCallRecord> out;
  std::string error;
  EXPECT_FALSE(DecodeApiCallBatch(batch, &out, &error));
  EXPECT_NE(error.find("bytes"), std::string::npos);
  EXPECT_TRUE(out.empty());
  // A count not backed by the time column (no allocation of a billion records).
  pb::GpuActivityBatch lying;
  lying.set_count(1000000000);
  lying.add_start_delta(5);
  std::vector<GpuActivityRecord> acts;
  EXPECT_FALSE(DecodeGpuActivityBatch(lying, &acts, &error));
  EXPECT_TRUE(acts.empty());
}

TEST(BatchCodecTest, HostWaitsRoundTripThroughSerialization) {
  std::vector<HostWaitRecord> in(3);
  in[0] = {7, 1'000'000, 7'000'000, 4, 11, gpustall::trace::THREAD_STATE_IDLE};
  in[1] = {7, 8'000'000, 8'250'000, 9, 0, gpustall::trace::THREAD_STATE_IO_WAIT};
  in[2] = {7, 7'500'000, 9'000'000, 4, 12, gpustall::trace::THREAD_STATE_LOCK_WAIT};  // unsorted start
  pb::HostWaitBatch batch;
  HostWaitBatchEncoder encoder;
  encoder.Begin(&batch, 7, in[0].start_ns);
  for (const HostWaitRecord& r : in) encoder.Add(r);
  pb::HostWaitBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(batch.SerializeAsString()));
  std::vector<HostWaitRecord> out;
  std::string error;
  ASSERT_TRUE(DecodeHostWaitBatch(parsed, &out, &error)) << error;
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].thread_id, 7u);
    EXPECT_EQ(out[i].start_ns, in[i].start_ns);
    EXPECT_EQ(out[i].end_ns, in[i].end_ns);
    EXPECT_EQ(out[i].function, in[i].function);
    EXPECT_EQ(out[i].stack, in[i].stack);
    EXPECT_EQ(out[i].state, in[i].state);
  }
  // A state column shorter than the records invalidates the batch.
  parsed.mutable_state()->RemoveLast();
  out.clear();
  EXPECT_FALSE(DecodeHostWaitBatch(parsed, &out, &error));
  EXPECT_NE(error.find("state"), std::string::npos);
  EXPECT_TRUE(out.empty());
}

TEST(BatchCodecTest, ActivitiesRoundTrip) {
  std::mt19937_64 rng(2);
  std::vector<GpuActivityRecord> in;
  uint64_t t = 1'000'000'000;
  for (int i = 0; i < 300; ++i) {
    GpuActivityRecord r;
    t += rng() % 10000;
    r.start_ns = t;
    r.end_ns = t + rng() % 50000;
    r.bytes = i % 3 ? 0 : rng() % 100000000;
    r.address = i % 5 ? 0 : rng();
    r.correlation_id = static_cast<uint32_t>(i * 3 + 1);
    r.device = static_cast<uint32_t>(i % 2);
    r.stream = static_cast<uint32_t>(7 + i % 3);
    r.context = 1;
    r.sync_type = i % 7 == 0 ? 2 : 0;
    r.graph_node_id = i % 5 == 0 ? 0x100000000ull + i : 0;  // kernels of a graph replay
    r.launch_config = i % 3 == 0 ? 0 : 1 + i % 7;  // kernels' interned launch configurations
    r.name = static_cast<uint32_t>(i % 4);
    r.kind = static_cast<ActivityKind>(1 + i % 7);
    r.source = i % 2 ? pb::ACTIVITY_SOURCE_CUPTI : pb::ACTIVITY_SOURCE_EVENT_PAIR;
    r.copy_kind = static_cast<uint8_t>(i % 11);
    r.src_kind = static_cast<MemKind>(i % 6);
    r.dst_kind = static_cast<MemKind>((i + 1) % 6);
    r.flags = static_cast<uint8_t>(i % 2);
    in.push_back(r);
  }
  pb::GpuActivityBatch batch;
  GpuActivityBatchEncoder enc;
  enc.Begin(&batch, in[0].start_ns);
  for (const auto& r : in) enc.Add(r);
  std::vector<GpuActivityRecord> out;
  std::string error;
  ASSERT_TRUE(DecodeGpuActivityBatch(batch, &out, &error)) << error;
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].start_ns, in[i].start_ns);
    EXPECT_EQ(out[i].end_ns, in[i].end_ns);
    EXPECT_EQ(out[i].bytes, in[i].bytes);
    EXPECT_EQ(out[i].address, in[i].address);
    EXPECT_EQ(out[i].correlation_id, in[i].correlation_id);
    EXPECT_EQ(out[i].device, in[i].device);
    EXPECT_EQ(out[i].stream, in[i].stream);
    EXPECT_EQ(out[i].context, in[i].context);
    EXPECT_EQ(out[i].sync_type, in[i].sync_type);
    EXPECT_EQ(out[i].graph_node_id, in[i].graph_node_id);
    EXPECT_EQ(out[i].launch_config, in[i].launch_config);
    EXPECT_EQ(out[i].name, in[i].name);
    EXPECT_EQ(out[i].kind, in[i].kind);
    EXPECT_EQ(out[i].source, in[i].source);
    EXPECT_EQ(out[i].copy_kind, in[i].copy_kind);
    EXPECT_EQ(out[i].src_kind, in[i].src_kind);
    EXPECT_EQ(out[i].dst_kind, in[i].dst_kind);
    EXPECT_EQ(out[i].flags, in[i].flags);
  }
}

TEST(BatchCodecTest, OutOfRangeSmallEnumsClampToFifteen) {
  EXPECT_EQ(PackAttrs(20, 1, 3, 1), 15u | 1u << 4 | 3u << 8 | 1u << 12);
}

}  // namespace
}  // namespace gs::trace
