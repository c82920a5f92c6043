#include "proto/batch_wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <type_traits>
#include <string>
#include <vector>

#include "proto/chunk_wire.pb.h"

namespace gs::trace {
namespace {

namespace pb = gpustall::trace;

// Every field, as text: records compare with a readable difference.
template <typename... Fields>
std::string Join(const Fields&... fields) {
  std::ostringstream out;
  ((out << +fields << ' '), ...);
  return out.str();
}
std::string Describe(const ApiCallRecord& r) {
  return Join(r.thread_id, r.enter_ns, r.exit_ns, r.bytes, r.stream, r.address, r.function, r.correlation_id, r.stack,
              r.result, r.device, r.copy_kind, r.src_kind, r.dst_kind, r.flags, r.api_class);
}
std::string Describe(const GpuActivityRecord& r) {
  return Join(r.start_ns, r.end_ns, r.bytes, r.address, r.correlation_id, r.device, r.stream, r.context, r.sync_type,
              r.name, r.graph_node_id, r.launch_config, r.kind, r.source, r.copy_kind, r.src_kind, r.dst_kind,
              r.flags);
}
template <typename Records>
std::vector<std::string> Describe(const Records& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(Describe(r));
  return out;
}

// A value of at most `max_bits` bits (its width random), or 0 now and then, so that varints of
// every length are written.
uint64_t Value(std::mt19937_64& rng, int max_bits) {
  if (rng() % 4 == 0) return 0;
  const int bits = 1 + static_cast<int>(rng() % static_cast<uint64_t>(max_bits));
  return rng() & (bits == 64 ? ~0ull : (1ull << bits) - 1);
}

// Batches as the agent's encoders write them, with each column absent in some batches, and the
// wide columns' values of up to `max_bits` bits (64: the ten-byte varints protobuf decides).
struct CallBatchInput {
  uint64_t thread_id = 0, base_ns = 0;
  std::vector<ApiCallRecord> records;
};
CallBatchInput RandomCallRecords(std::mt19937_64& rng, int max_bits) {
  CallBatchInput in;
  const uint64_t base = rng() >> 8;
  in.base_ns = base;
  in.thread_id = rng() % 100000;
  const int n = static_cast<int>(rng() % 300);
  const uint64_t absent = rng();  // column k never set when bit k is set
  uint64_t t = base;
  for (int i = 0; i < n; ++i) {
    ApiCallRecord r;
    t += Value(rng, 40) - (rng() % 8 == 0 ? Value(rng, 30) : 0);  // mostly forward, sometimes back
    r.enter_ns = t;
    r.exit_ns = absent & 1 ? t : t + Value(rng, 36);
    r.function = absent & 2 ? 0 : static_cast<uint32_t>(Value(rng, 32));
    r.correlation_id = absent & 4 ? 0 : static_cast<uint32_t>(Value(rng, 32));
    r.stack = absent & 8 ? 0 : static_cast<uint32_t>(Value(rng, 20));
    r.bytes = absent & 16 ? 0 : Value(rng, max_bits);
    r.stream = absent & 32 ? 0 : Value(rng, max_bits);
    r.result = absent & 64 ? 0 : static_cast<int32_t>(Value(rng, 32));
    r.device = absent & 128 ? 0 : static_cast<uint32_t>(Value(rng, 4));
    r.address = absent & 256 ? 0 : Value(rng, max_bits);
    if (!(absent & 512)) {
      r.copy_kind = static_cast<uint8_t>(rng() % 16);
      r.src_kind = static_cast<MemKind>(rng() % 16);
      r.dst_kind = static_cast<MemKind>(rng() % 16);
      r.flags = static_cast<uint8_t>(rng() % 4);
    }
    in.records.push_back(r);
  }
  return in;
}
pb::ApiCallBatch EncodeWithMessage(const CallBatchInput& in) {
  pb::ApiCallBatch batch;
  ApiCallBatchEncoder enc;
  enc.Begin(&batch, in.thread_id, in.base_ns);
  for (const ApiCallRecord& r : in.records) enc.Add(r);
  return batch;
}
pb::ApiCallBatch RandomApiCalls(std::mt19937_64& rng, int max_bits) {
  return EncodeWithMessage(RandomCallRecords(rng, max_bits));
}

struct ActivityBatchInput {
  uint64_t base_ns = 0;
  std::vector<GpuActivityRecord> records;
};
ActivityBatchInput RandomActivityRecords(std::mt19937_64& rng, int max_bits) {
  ActivityBatchInput in;
  const uint64_t base = rng() >> 8;
  in.base_ns = base;
  const int n = static_cast<int>(rng() % 300);
  const uint64_t absent = rng();
  uint64_t t = base;
  for (int i = 0; i < n; ++i) {
    GpuActivityRecord r;
    t += Value(rng, 40) - (rng() % 8 == 0 ? Value(rng, 30) : 0);
    r.start_ns = t;
    r.end_ns = absent & 1 ? t : t + Value(rng, 36);
    r.correlation_id = absent & 2 ? 0 : static_cast<uint32_t>(Value(rng, 32));
    if (!(absent & 4)) {
      r.kind = static_cast<ActivityKind>(rng() % 16);
      r.source = static_cast<ActivitySource>(rng() % 16);
    }
    r.device = absent & 8 ? 0 : static_cast<uint32_t>(Value(rng, 4));
    r.stream = absent & 16 ? 0 : static_cast<uint32_t>(Value(rng, 32));
    r.name = absent & 32 ? 0 : static_cast<uint32_t>(Value(rng, 20));
    r.bytes = absent & 64 ? 0 : Value(rng, max_bits);
    if (!(absent & 128)) {
      r.copy_kind = static_cast<uint8_t>(rng() % 16);
      r.flags = static_cast<uint8_t>(rng() % 4);
    }
    r.address = absent & 256 ? 0 : Value(rng, max_bits);
    r.context = absent & 512 ? 0 : static_cast<uint32_t>(Value(rng, 32));
    r.sync_type = absent & 1024 ? 0 : static_cast<uint32_t>(Value(rng, 3));
    r.graph_node_id = absent & 2048 ? 0 : Value(rng, max_bits);
    r.launch_config = absent & 4096 ? 0 : static_cast<uint32_t>(Value(rng, 16));
    in.records.push_back(r);
  }
  return in;
}
pb::GpuActivityBatch EncodeWithMessage(const ActivityBatchInput& in) {
  pb::GpuActivityBatch batch;
  GpuActivityBatchEncoder enc;
  enc.Begin(&batch, in.base_ns);
  for (const GpuActivityRecord& r : in.records) enc.Add(r);
  return batch;
}
pb::GpuActivityBatch RandomActivities(std::mt19937_64& rng, int max_bits) {
  return EncodeWithMessage(RandomActivityRecords(rng, max_bits));
}

// What protobuf's parse and the message decoder make of `wire`, the way the reader used to read a
// batch: the records appended after `prefix`, or the parse's failure, or the decoder's error.
struct Reading {
  WireBatchResult result;
  std::vector<std::string> records;
  std::string error;
};
template <typename Message, typename Records>
Reading ReadByProtobuf(const std::string& wire, const Records& prefix) {
  Reading reading{WireBatchResult::kMalformed, {}, {}};
  Message batch;
  if (!batch.ParseFromString(wire)) return reading;
  Records out = prefix;
  bool ok;
  if constexpr (std::is_same_v<Message, pb::ApiCallBatch>) {
    ok = DecodeApiCallBatch(batch, &out, &reading.error);
  } else {
    ok = DecodeGpuActivityBatch(batch, &out, &reading.error);
  }
  reading.result = ok ? WireBatchResult::kOk : WireBatchResult::kBadBatch;
  reading.records = Describe(out);
  return reading;
}
template <typename Records>
Reading ReadWire(const std::string& wire, const Records& prefix) {
  Reading reading;
  Records out = prefix;
  if constexpr (std::is_same_v<Records, ApiCallRecords>) {
    reading.result = DecodeApiCallBatchWire(wire, &out, &reading.error);
  } else {
    reading.result = DecodeGpuActivityBatchWire(wire, &out, &reading.error);
  }
  if (reading.result == WireBatchResult::kMalformed) {
    EXPECT_EQ(Describe(out), Describe(prefix)) << "a malformed batch appended records";
    return reading;
  }
  reading.records = Describe(out);
  return reading;
}

void ExpectSameReading(const Reading& wire, const Reading& protobuf, const std::string& what) {
  EXPECT_EQ(static_cast<int>(wire.result), static_cast<int>(protobuf.result)) << what;
  EXPECT_EQ(wire.error, protobuf.error) << what;
  EXPECT_EQ(wire.records, protobuf.records) << what;
}

template <typename Message, typename Records>
void ExpectReadAsProtobufReadsIt(const std::string& wire, const std::string& what) {
  Records prefix(2);  // decoding appends: two records already there
  prefix[0] = {};
  prefix[1] = {};
  prefix[1].device = 5;
  ExpectSameReading(ReadWire(wire, prefix), ReadByProtobuf<Message>(wire, prefix), what);
}

TEST(BatchWireTest, AgentWrittenBatchesReadAsTheMessageDecoderReadsThem) {
  std::mt19937_64 rng(7);
  int ten_byte = 0;
  for (int i = 0; i < 400; ++i) {
    // One in four with ten-byte varints (protobuf's path); the others' deltas stay under 2^62,
    // nine bytes once zigzagged.
    const int max_bits = i % 4 == 3 ? 64 : 62;
    ten_byte += max_bits == 64;
    const std::string calls = RandomApiCalls(rng, max_bits).SerializeAsString();
    ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(calls, "API call batch " + std::to_string(i));
    const std::string activities = RandomActivities(rng, max_bits).SerializeAsString();
    ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>(activities,
                                                                          "activity batch " + std::to_string(i));
  }
  EXPECT_EQ(ten_byte, 100);
}

// The wire encoders write what protobuf writes for the message encoders' batches: a chunk of
// those batches serialises to the bytes the wire encoders append, batch after batch.
TEST(BatchWireTest, WireEncodersWriteWhatProtobufWritesForTheMessageEncoders) {
  std::mt19937_64 rng(5);
  ApiCallBatchWireEncoder calls;
  GpuActivityBatchWireEncoder activities;
  for (int i = 0; i < 200; ++i) {
    const int max_bits = i % 4 == 3 ? 64 : 62;
    // The same records through both encoders: the message ones' batches are the reference.
    const CallBatchInput call_input = RandomCallRecords(rng, max_bits);
    const ActivityBatchInput activity_input = RandomActivityRecords(rng, max_bits);
    const std::vector<ApiCallRecord>& call_records = call_input.records;
    const std::vector<GpuActivityRecord>& activity_records = activity_input.records;
    calls.Begin(call_input.thread_id, call_input.base_ns);
    for (const ApiCallRecord& r : call_records) calls.Add(r);
    activities.Begin(activity_input.base_ns);
    for (const GpuActivityRecord& r : activity_records) activities.Add(r);
    EXPECT_EQ(calls.count(), call_records.size());
    EXPECT_EQ(activities.count(), activity_records.size());

    pb::Chunk chunk;
    *chunk.add_api_calls() = EncodeWithMessage(call_input);
    *chunk.add_activities() = EncodeWithMessage(activity_input);
    std::string wire;
    calls.AppendAsField(8, &wire);  // Chunk.api_calls
    activities.AppendAsField(9, &wire);  // Chunk.activities
    ASSERT_EQ(wire, chunk.SerializeAsString()) << "batch " << i << " of " << call_records.size() << " calls, "
                                               << activity_records.size() << " activities";
  }
}

// Hand-made wire bytes, for the encodings protobuf accepts that the agent never writes.
void PutVarint(std::string* s, uint64_t v) {
  while (v >= 0x80) {
    s->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s->push_back(static_cast<char>(v));
}
void PutScalar(std::string* s, int field, uint64_t v) {
  PutVarint(s, static_cast<uint64_t>(field) << 3);
  PutVarint(s, v);
}
void PutPacked(std::string* s, int field, const std::vector<uint64_t>& values) {
  std::string run;
  for (uint64_t v : values) PutVarint(&run, v);
  PutVarint(s, static_cast<uint64_t>(field) << 3 | 2);
  PutVarint(s, run.size());
  s->append(run);
}
uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

TEST(BatchWireTest, ValidEncodingsTheAgentNeverWritesReadAsProtobufReadsThem) {
  // ApiCallBatch: thread_id 1, base_ns 2, count 3, enter_delta 4, duration 5, function 6, ...
  std::string base;
  PutScalar(&base, 1, 42);
  PutScalar(&base, 2, 1000);
  PutScalar(&base, 3, 3);
  PutPacked(&base, 4, {ZigZag(5), ZigZag(-2), ZigZag(7)});

  std::string unpacked = base;  // a column as one tag per element
  for (uint64_t f : {9u, 10u, 11u}) PutScalar(&unpacked, 6, f);
  ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(unpacked, "unpacked column");

  std::string split = base;  // one column in two packed runs
  PutPacked(&split, 5, {100});
  PutPacked(&split, 5, {200, 300});
  ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(split, "column in two runs");

  std::string unknown = base;  // fields this reader does not know: skipped
  PutScalar(&unknown, 15, 9);
  PutPacked(&unknown, 31, {1, 2});
  PutPacked(&unknown, 8, {4, 5, 6});
  ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(unknown, "unknown fields");

  std::string count_twice = base;  // the last value of a scalar wins
  PutScalar(&count_twice, 3, 3);
  PutScalar(&count_twice, 1, 43);
  ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(count_twice, "scalars twice");

  std::string wide_count;  // count and function above 32 bits keep their low 32 bits
  PutScalar(&wide_count, 3, (1ull << 40) | 1);
  PutPacked(&wide_count, 4, {ZigZag(1)});
  PutPacked(&wide_count, 6, {(1ull << 35) | 7});
  PutPacked(&wide_count, 12, {(1ull << 33) | 3});  // result, sint32
  ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(wide_count, "values above 32 bits");

  // GpuActivityBatch: base_ns 1, count 2, start_delta 3, ...: an empty run is an empty column.
  std::string empty_run;
  PutScalar(&empty_run, 2, 2);
  PutPacked(&empty_run, 3, {ZigZag(1), ZigZag(1)});
  PutPacked(&empty_run, 9, {});
  ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>(empty_run, "empty run");
  ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>("", "no bytes at all");
}

TEST(BatchWireTest, BytesProtobufRejectsAreMalformedAndAppendNothing) {
  std::mt19937_64 rng(3);
  std::string good;
  while (good.size() < 40) good = RandomApiCalls(rng, 62).SerializeAsString();
  // Cut anywhere: inside a tag, a length, a run's last varint. Protobuf rejects most cuts; where a
  // cut falls between fields it accepts the rest, and so must this.
  int malformed = 0;
  for (size_t cut = 1; cut < good.size(); ++cut) {
    const std::string wire = good.substr(0, cut);
    ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(wire, "cut at " + std::to_string(cut));
    pb::ApiCallBatch b;
    malformed += !b.ParseFromString(wire);
  }
  EXPECT_GT(malformed, 0);

  std::string eleven;  // a varint of eleven bytes
  PutScalar(&eleven, 2, 2);
  eleven.append("\x1a\x0b", 2);  // field 3 (start_delta), eleven bytes
  eleven.append(10, '\xff');
  eleven.push_back('\x01');
  ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>(eleven, "eleven-byte varint");
  pb::GpuActivityBatch b;
  EXPECT_FALSE(b.ParseFromString(eleven));

  std::string past_end;  // a length past the end
  PutScalar(&past_end, 2, 1);
  past_end.append("\x1a\x05\x02", 3);
  ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>(past_end, "length past the end");
  EXPECT_FALSE(b.ParseFromString(past_end));

  std::string group;  // wire type 3 (start group) with no end
  PutScalar(&group, 2, 0);
  group.push_back(static_cast<char>(5 << 3 | 3));
  ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>(group, "open group");
}

TEST(BatchWireTest, ColumnRuleErrorsAreTheMessageDecoders) {
  std::string short_column;  // bytes: one element for three records
  PutScalar(&short_column, 3, 3);
  PutPacked(&short_column, 4, {2, 2, 2});
  PutPacked(&short_column, 9, {5});
  ApiCallRecords calls(1);
  calls[0] = {};
  std::string error;
  EXPECT_EQ(DecodeApiCallBatchWire(short_column, &calls, &error), WireBatchResult::kBadBatch);
  EXPECT_EQ(error, "column bytes has 1 elements, expected 0 or 3");
  EXPECT_EQ(calls.size(), 1u);
  ExpectReadAsProtobufReadsIt<pb::ApiCallBatch, ApiCallRecords>(short_column, "short column");

  std::string lying;  // a count the time column does not back: no billion records allocated
  PutScalar(&lying, 2, 1000000000);
  PutPacked(&lying, 3, {10});
  GpuActivityRecords activities;
  EXPECT_EQ(DecodeGpuActivityBatchWire(lying, &activities, &error), WireBatchResult::kBadBatch);
  EXPECT_EQ(error, "start_delta has 1 elements, count says 1000000000");
  EXPECT_TRUE(activities.empty());
  ExpectReadAsProtobufReadsIt<pb::GpuActivityBatch, GpuActivityRecords>(lying, "lying count");
}

TEST(ChunkWireTest, MirrorsEveryFieldOfChunk) {
  // A chunk with every field of Chunk set (a field added to Chunk is set here too): as ChunkWire
  // it keeps them all (nothing unknown) and writes the same bytes back, its batches' bytes being
  // the batches.
  std::mt19937_64 rng(11);
  pb::Chunk chunk;
  chunk.set_sequence(9);
  chunk.add_strings()->set_value("s");
  chunk.add_api_functions()->set_name("cudaLaunchKernel");
  chunk.add_modules()->set_path("/lib/x.so");
  chunk.add_frames()->set_id(3);
  chunk.add_stacks()->set_id(4);
  chunk.add_threads()->set_tid(5);
  *chunk.add_api_calls() = RandomApiCalls(rng, 62);
  *chunk.add_api_calls() = RandomApiCalls(rng, 62);
  *chunk.add_activities() = RandomActivities(rng, 62);
  chunk.add_memory_events()->set_count(0);
  chunk.add_samples()->set_thread_id(6);
  chunk.add_nvtx_ranges()->set_thread_id(7);
  chunk.mutable_stats()->set_api_calls_recorded(8);
  chunk.add_process_stats()->set_pid(9);
  chunk.add_clock_syncs()->set_monotonic_ns(10);
  chunk.add_devices()->set_index(1);
  chunk.mutable_capture()->set_mode_text("cupti");
  chunk.add_host_waits()->set_thread_id(12);
  chunk.add_graph_nodes()->set_node_id(13);
  chunk.add_launch_configs()->set_id(14);
  const std::string bytes = chunk.SerializeAsString();

  pb::ChunkWire wire;
  ASSERT_TRUE(wire.ParseFromString(bytes));
  EXPECT_EQ(wire.SerializeAsString(), bytes);
  ASSERT_EQ(wire.api_calls_size(), 2);
  EXPECT_EQ(wire.api_calls(1), chunk.api_calls(1).SerializeAsString());
  ASSERT_EQ(wire.activities_size(), 1);
  EXPECT_EQ(wire.activities(0), chunk.activities(0).SerializeAsString());
  // Clearing ChunkWire's fields one by one leaves nothing: a field of Chunk it lacks would be
  // kept as unknown and written back.
  wire.clear_sequence();
  wire.clear_strings();
  wire.clear_api_functions();
  wire.clear_modules();
  wire.clear_frames();
  wire.clear_stacks();
  wire.clear_threads();
  wire.clear_api_calls();
  wire.clear_activities();
  wire.clear_memory_events();
  wire.clear_samples();
  wire.clear_nvtx_ranges();
  wire.clear_stats();
  wire.clear_process_stats();
  wire.clear_clock_syncs();
  wire.clear_devices();
  wire.clear_capture();
  wire.clear_host_waits();
  wire.clear_graph_nodes();
  wire.clear_launch_configs();
  EXPECT_EQ(wire.SerializeAsString().size(), 0u) << "a field of Chunk that ChunkWire lacks";
}

}  // namespace
}  // namespace gs::trace
