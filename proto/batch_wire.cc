#include "proto/batch_wire.h"

#include <cstring>
#include <initializer_list>
#include <utility>

namespace gs::trace {
namespace {

// Protobuf's wire format (https://protobuf.dev/programming-guides/encoding/): a field is a varint
// tag (field number << 3 | wire type), then a varint (type 0) or a varint length and that many
// bytes (type 2, which is how proto3 writes a repeated scalar: "packed", the elements' varints
// back to back). A varint is little-endian groups of 7 bits, the high bit set on every byte but
// the last; sint32/sint64 values are zigzag-encoded.
constexpr int kVarint = 0;
constexpr int kLengthDelimited = 2;

// A varint that ends before `end` and is at most nine bytes long (63 bits: every value the agent
// writes but a 64-bit one with its top bit set). False otherwise, the ten-byte case included,
// which the caller leaves to protobuf's parse (its rules for the tenth byte are its own).
inline bool ReadVarint(const uint8_t** p, const uint8_t* end, uint64_t* value) {
  const uint8_t* q = *p;
  uint64_t v = 0;
  for (int shift = 0; shift <= 56; shift += 7) {
    if (q == end) return false;
    const uint64_t b = *q++;
    v |= (b & 0x7f) << shift;
    if (b < 0x80) {
      *p = q;
      *value = v;
      return true;
    }
  }
  return false;
}

// One packed column: its bytes, which end on a varint's last byte, and how many varints they hold.
struct Run {
  const uint8_t* data = nullptr;
  int count = 0;
  bool seen = false;
};

// The number of varints in [p, end): the number of bytes without the high bit.
inline int CountVarints(const uint8_t* p, const uint8_t* end) {
  size_t n = static_cast<size_t>(end - p);
  int count = 0;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    // The high bits moved to each byte's low bit and summed into the top byte by the multiply
    // (no popcount: the build does not assume the instruction, and libgcc's is a slow call).
    count += 8 - static_cast<int>(((word >> 7) & 0x0101010101010101ull) * 0x0101010101010101ull >> 56);
  }
  for (; n > 0; --n) count += *p++ < 0x80;
  return count;
}

// Reads a column's elements in order; an empty column reads as zeros (the column rule). The run
// ends on a varint's last byte, so a read never passes it, except after `*bad`: a varint of ten
// bytes or more, after which the caller stops reading.
class Cursor {
 public:
  explicit Cursor(const Run& run) : p_(run.count > 0 ? run.data : nullptr) {}
  uint64_t Next(bool* bad) {
    if (p_ == nullptr) return 0;
    const uint8_t* q = p_;
    uint64_t b = *q++;
    uint64_t v = b;
    if (b >= 0x80) {
      v &= 0x7f;
      for (int shift = 7;; shift += 7) {
        b = *q++;
        v |= (b & 0x7f) << shift;
        if (b < 0x80) break;
        if (shift == 56) {
          *bad = true;
          break;
        }
      }
    }
    p_ = q;
    return v;
  }
  // sint64 / sint32 columns (the 32-bit ones keep the low 32 bits first, as protobuf's parser does).
  int64_t NextSigned64(bool* bad) {
    const uint64_t v = Next(bad);
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  int32_t NextSigned32(bool* bad) {
    const auto v = static_cast<uint32_t>(Next(bad));
    return static_cast<int32_t>(v >> 1) ^ -static_cast<int32_t>(v & 1);
  }
  uint32_t Next32(bool* bad) { return static_cast<uint32_t>(Next(bad)); }

 private:
  const uint8_t* p_;
};

// A batch message's layout: which field numbers are its scalars (thread_id, base_ns, count) and
// which its columns, the time column first.
constexpr int kMaxField = 16;
struct BatchLayout {
  int8_t scalar[kMaxField + 1];  // field number -> scalar slot, or -1
  int8_t column[kMaxField + 1];  // field number -> column slot, or -1
  int columns;
};

enum class Walk { kDirect, kProtobuf };

// Finds the batch's scalars and column runs. kProtobuf for anything but each field once, with its
// declared wire type, columns packed: protobuf's parse then decides (some such bytes are valid).
Walk WalkBatch(std::string_view wire, const BatchLayout& layout, uint64_t* scalars, Run* runs) {
  const auto* p = reinterpret_cast<const uint8_t*>(wire.data());
  const uint8_t* end = p + wire.size();
  while (p < end) {
    uint64_t tag;
    if (!ReadVarint(&p, end, &tag)) return Walk::kProtobuf;
    const uint64_t field = tag >> 3;
    const int type = static_cast<int>(tag & 7);
    if (field == 0 || field > kMaxField) return Walk::kProtobuf;
    if (const int s = layout.scalar[field]; s >= 0 && type == kVarint) {
      if (!ReadVarint(&p, end, &scalars[s])) return Walk::kProtobuf;
      continue;
    }
    const int c = layout.column[field];
    if (c < 0 || type != kLengthDelimited) return Walk::kProtobuf;
    uint64_t length;
    if (!ReadVarint(&p, end, &length) || length > static_cast<uint64_t>(end - p)) return Walk::kProtobuf;
    Run& run = runs[c];
    if (run.seen) return Walk::kProtobuf;  // a column in several runs
    run.seen = true;
    run.data = p;
    p += length;
    if (length > 0 && p[-1] >= 0x80) return Walk::kProtobuf;  // a varint cut short
    run.count = CountVarints(run.data, p);
  }
  return Walk::kDirect;
}

// The column rules: the time column (slot 0) has `count` elements, every other one none or
// `count`. A batch that breaks them goes to protobuf's parse and the message decoder, which say
// whether the bytes parse at all (a varint over ten bytes long is counted here as one element)
// and, if they do, which column breaks them, in their words.
bool ColumnsFit(const BatchLayout& layout, const Run* runs, uint32_t count) {
  if (runs[0].count != static_cast<int>(count) || count > static_cast<uint32_t>(INT32_MAX)) return false;
  for (int c = 1; c < layout.columns; ++c) {
    if (runs[c].count != 0 && runs[c].count != static_cast<int>(count)) return false;
  }
  return true;
}

template <typename Message, typename Records>
WireBatchResult ByProtobuf(std::string_view wire, Records* out, std::string* error,
                           bool (*decode)(const Message&, Records*, std::string*)) {
  Message batch;
  if (!batch.ParseFromArray(wire.data(), static_cast<int>(wire.size()))) return WireBatchResult::kMalformed;
  return decode(batch, out, error) ? WireBatchResult::kOk : WireBatchResult::kBadBatch;
}

// The two batches' field numbers, which the layouts below and the encoders' column order
// (batch_wire.h) follow: a field renumbered in gstrace.proto fails the build here.
using ApiCallFields = gpustall::trace::ApiCallBatch;
static_assert(ApiCallFields::kThreadIdFieldNumber == 1 && ApiCallFields::kBaseNsFieldNumber == 2 &&
                  ApiCallFields::kCountFieldNumber == 3 && ApiCallFields::kEnterDeltaFieldNumber == 4 &&
                  ApiCallFields::kDurationFieldNumber == 5 && ApiCallFields::kFunctionFieldNumber == 6 &&
                  ApiCallFields::kCorrelationDeltaFieldNumber == 7 && ApiCallFields::kStackFieldNumber == 8 &&
                  ApiCallFields::kBytesFieldNumber == 9 && ApiCallFields::kStreamDeltaFieldNumber == 10 &&
                  ApiCallFields::kAttrsFieldNumber == 11 && ApiCallFields::kResultFieldNumber == 12 &&
                  ApiCallFields::kDeviceFieldNumber == 13 && ApiCallFields::kAddressDeltaFieldNumber == 14,
              "ApiCallBatch's fields moved: update kApiCallLayout and ApiCallBatchWireEncoder");
using ActivityFields = gpustall::trace::GpuActivityBatch;
static_assert(ActivityFields::kBaseNsFieldNumber == 1 && ActivityFields::kCountFieldNumber == 2 &&
                  ActivityFields::kStartDeltaFieldNumber == 3 && ActivityFields::kDurationFieldNumber == 4 &&
                  ActivityFields::kCorrelationDeltaFieldNumber == 5 && ActivityFields::kKindFieldNumber == 6 &&
                  ActivityFields::kDeviceFieldNumber == 7 && ActivityFields::kStreamFieldNumber == 8 &&
                  ActivityFields::kNameFieldNumber == 9 && ActivityFields::kBytesFieldNumber == 10 &&
                  ActivityFields::kAttrsFieldNumber == 11 && ActivityFields::kAddressDeltaFieldNumber == 12 &&
                  ActivityFields::kContextFieldNumber == 13 && ActivityFields::kSyncTypeFieldNumber == 14 &&
                  ActivityFields::kGraphNodeIdFieldNumber == 15 && ActivityFields::kLaunchConfigFieldNumber == 16,
              "GpuActivityBatch's fields moved: update kActivityLayout and GpuActivityBatchWireEncoder");

// ApiCallBatch (gstrace.proto): thread_id 1, base_ns 2, count 3; columns 4-14 (enter_delta,
// duration, function, correlation_delta, stack, bytes, stream_delta, attrs, result, device,
// address_delta).
constexpr BatchLayout kApiCallLayout = {
    {-1, 0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {-1, -1, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -1},
    11};

// GpuActivityBatch: base_ns 1, count 2; columns 3-16 (start_delta, duration, correlation_delta,
// kind, device, stream, name, bytes, attrs, address_delta, context, sync_type, graph_node_id,
// launch_config).
constexpr BatchLayout kActivityLayout = {
    {-1, 0, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {-1, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
    14};

bool DecodeApiCallsFromMessage(const gpustall::trace::ApiCallBatch& b, ApiCallRecords* out, std::string* error) {
  return DecodeApiCallBatch(b, out, error);
}
bool DecodeActivitiesFromMessage(const gpustall::trace::GpuActivityBatch& b, GpuActivityRecords* out,
                                 std::string* error) {
  return DecodeGpuActivityBatch(b, out, error);
}

// ---------------------------------------------------------------------------------- encoding

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline uint64_t ZigZag32(int32_t v) {
  return static_cast<uint32_t>((static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31));
}

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}
inline void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A batch's fields in number order, as protobuf writes a proto3 message: scalars that are not 0,
// then the columns that are not empty, packed. `scalars` are (field, value) pairs; column c is
// field `first_column_field` + c.
void AppendBatch(int field, std::initializer_list<std::pair<int, uint64_t>> scalars, const WireColumn* columns,
                 int column_count, int first_column_field, std::string* out) {
  size_t body = 0;
  for (const auto& [f, v] : scalars)
    if (v != 0) body += VarintSize(static_cast<uint64_t>(f) << 3) + VarintSize(v);
  for (int c = 0; c < column_count; ++c) {
    const size_t n = columns[c].size();
    if (n == 0) continue;
    body += VarintSize(static_cast<uint64_t>(first_column_field + c) << 3 | kLengthDelimited) + VarintSize(n) + n;
  }
  out->reserve(out->size() + VarintSize(static_cast<uint64_t>(field) << 3) + VarintSize(body) + body);
  AppendVarint(static_cast<uint64_t>(field) << 3 | kLengthDelimited, out);
  AppendVarint(body, out);
  for (const auto& [f, v] : scalars) {
    if (v == 0) continue;
    AppendVarint(static_cast<uint64_t>(f) << 3 | kVarint, out);
    AppendVarint(v, out);
  }
  for (int c = 0; c < column_count; ++c) {
    const size_t n = columns[c].size();
    if (n == 0) continue;
    AppendVarint(static_cast<uint64_t>(first_column_field + c) << 3 | kLengthDelimited, out);
    AppendVarint(n, out);
    out->append(reinterpret_cast<const char*>(columns[c].data()), n);
  }
}

}  // namespace

void WireColumn::Backfill(uint32_t n) {
  if (capacity_ < n + kMaxVarint) Grow(n + kMaxVarint);
  std::memset(data_.get(), 0, n);  // one 0 varint per earlier record
  size_ = n;
}

void WireColumn::Grow(size_t at_least) {
  size_t capacity = capacity_ == 0 ? 256 : capacity_ * 2;
  while (capacity < at_least) capacity *= 2;
  std::unique_ptr<uint8_t[]> data(new uint8_t[capacity]);
  if (size_ != 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

void ApiCallBatchWireEncoder::Begin(uint64_t thread_id, uint64_t base_ns) {
  for (WireColumn& c : columns_) c.Clear();
  thread_id_ = thread_id;
  base_ns_ = base_ns;
  count_ = 0;
  prev_enter_ = base_ns;
  prev_stream_ = prev_address_ = 0;
  prev_correlation_ = 0;
}

// As ApiCallBatchEncoder::Add (batch_codec.cc), column for column.
void ApiCallBatchWireEncoder::Add(const ApiCallRecord& r) {
  const uint32_t n = count_;
  columns_[kEnter].PutAlways(ZigZag(Delta(r.enter_ns, &prev_enter_)));
  columns_[kDuration].Put(n, r.exit_ns >= r.enter_ns ? r.exit_ns - r.enter_ns : 0);
  columns_[kFunction].Put(n, r.function);
  columns_[kCorrelation].Put(n, ZigZag(static_cast<int64_t>(r.correlation_id) - prev_correlation_));
  prev_correlation_ = r.correlation_id;
  columns_[kStack].Put(n, r.stack);
  columns_[kBytes].Put(n, r.bytes);
  columns_[kStream].Put(n, ZigZag(Delta(r.stream, &prev_stream_)));
  columns_[kAttrs].Put(n, PackAttrs(r.copy_kind, r.src_kind, r.dst_kind, r.flags));
  columns_[kResult].Put(n, ZigZag32(r.result));
  columns_[kDevice].Put(n, r.device);
  columns_[kAddress].Put(n, ZigZag(Delta(r.address, &prev_address_)));
  ++count_;
}

void ApiCallBatchWireEncoder::AppendAsField(int field, std::string* out) const {
  AppendBatch(field,
              {{ApiCallFields::kThreadIdFieldNumber, thread_id_},
               {ApiCallFields::kBaseNsFieldNumber, base_ns_},
               {ApiCallFields::kCountFieldNumber, count_}},
              columns_, kColumns, ApiCallFields::kEnterDeltaFieldNumber, out);
}

void GpuActivityBatchWireEncoder::Begin(uint64_t base_ns) {
  for (WireColumn& c : columns_) c.Clear();
  base_ns_ = base_ns;
  count_ = 0;
  prev_start_ = base_ns;
  prev_address_ = 0;
  prev_correlation_ = 0;
}

// As GpuActivityBatchEncoder::Add (batch_codec.cc), column for column.
void GpuActivityBatchWireEncoder::Add(const GpuActivityRecord& r) {
  const uint32_t n = count_;
  columns_[kStart].PutAlways(ZigZag(Delta(r.start_ns, &prev_start_)));
  columns_[kDuration].Put(n, r.end_ns >= r.start_ns ? r.end_ns - r.start_ns : 0);
  columns_[kCorrelation].Put(n, ZigZag(static_cast<int64_t>(r.correlation_id) - prev_correlation_));
  prev_correlation_ = r.correlation_id;
  columns_[kKind].Put(n, PackActivityKind(r.kind, r.source));
  columns_[kDevice].Put(n, r.device);
  columns_[kStream].Put(n, r.stream);
  columns_[kName].Put(n, r.name);
  columns_[kBytes].Put(n, r.bytes);
  columns_[kAttrs].Put(n, PackAttrs(r.copy_kind, r.src_kind, r.dst_kind, r.flags));
  columns_[kAddress].Put(n, ZigZag(Delta(r.address, &prev_address_)));
  columns_[kContext].Put(n, r.context);
  columns_[kSyncType].Put(n, r.sync_type);
  columns_[kGraphNode].Put(n, r.graph_node_id);
  columns_[kLaunchConfig].Put(n, r.launch_config);
  ++count_;
}

void GpuActivityBatchWireEncoder::AppendAsField(int field, std::string* out) const {
  AppendBatch(field, {{ActivityFields::kBaseNsFieldNumber, base_ns_}, {ActivityFields::kCountFieldNumber, count_}},
              columns_, kColumns, ActivityFields::kStartDeltaFieldNumber, out);
}

WireBatchResult DecodeApiCallBatchWire(std::string_view wire, ApiCallRecords* out, std::string* error) {
  uint64_t scalars[3] = {};
  Run runs[11];
  if (WalkBatch(wire, kApiCallLayout, scalars, runs) != Walk::kDirect)
    return ByProtobuf(wire, out, error, DecodeApiCallsFromMessage);
  const uint64_t thread_id = scalars[0];
  const auto count = static_cast<uint32_t>(scalars[2]);
  if (!ColumnsFit(kApiCallLayout, runs, count)) return ByProtobuf(wire, out, error, DecodeApiCallsFromMessage);
  Cursor enter(runs[0]), duration(runs[1]), function(runs[2]), correlation(runs[3]), stack(runs[4]),
      bytes(runs[5]), stream(runs[6]), attrs(runs[7]), result(runs[8]), device(runs[9]), address(runs[10]);
  uint64_t t = scalars[1], s = 0, a = 0, c = 0;
  const size_t first = out->size();
  out->resize(first + count);
  ApiCallRecord* r = out->data() + first;
  bool bad = false;
  for (uint32_t i = 0; i < count && !bad; ++i, ++r) {
    t += static_cast<uint64_t>(enter.NextSigned64(&bad));
    c += static_cast<uint64_t>(correlation.NextSigned64(&bad));
    s += static_cast<uint64_t>(stream.NextSigned64(&bad));
    a += static_cast<uint64_t>(address.NextSigned64(&bad));
    r->thread_id = thread_id;
    r->enter_ns = t;
    r->exit_ns = t + duration.Next(&bad);
    r->bytes = bytes.Next(&bad);
    r->stream = s;
    r->address = a;
    r->function = function.Next32(&bad);
    r->correlation_id = static_cast<uint32_t>(c);
    r->stack = stack.Next32(&bad);
    r->result = result.NextSigned32(&bad);
    r->device = device.Next32(&bad);
    UnpackAttrs(attrs.Next32(&bad), r);
    r->api_class = gpustall::trace::API_CLASS_OTHER;
  }
  if (bad) {  // a ten-byte varint: protobuf's rules
    out->resize(first);
    return ByProtobuf(wire, out, error, DecodeApiCallsFromMessage);
  }
  return WireBatchResult::kOk;
}

WireBatchResult DecodeGpuActivityBatchWire(std::string_view wire, GpuActivityRecords* out, std::string* error) {
  uint64_t scalars[2] = {};
  Run runs[14];
  if (WalkBatch(wire, kActivityLayout, scalars, runs) != Walk::kDirect)
    return ByProtobuf(wire, out, error, DecodeActivitiesFromMessage);
  const auto count = static_cast<uint32_t>(scalars[1]);
  if (!ColumnsFit(kActivityLayout, runs, count)) return ByProtobuf(wire, out, error, DecodeActivitiesFromMessage);
  Cursor start(runs[0]), duration(runs[1]), correlation(runs[2]), kind(runs[3]), device(runs[4]),
      stream(runs[5]), name(runs[6]), bytes(runs[7]), attrs(runs[8]), address(runs[9]), context(runs[10]),
      sync_type(runs[11]), graph_node_id(runs[12]), launch_config(runs[13]);
  uint64_t t = scalars[0], a = 0, c = 0;
  const size_t first = out->size();
  out->resize(first + count);
  GpuActivityRecord* r = out->data() + first;
  bool bad = false;
  for (uint32_t i = 0; i < count && !bad; ++i, ++r) {
    t += static_cast<uint64_t>(start.NextSigned64(&bad));
    c += static_cast<uint64_t>(correlation.NextSigned64(&bad));
    a += static_cast<uint64_t>(address.NextSigned64(&bad));
    r->start_ns = t;
    r->end_ns = t + duration.Next(&bad);
    r->bytes = bytes.Next(&bad);
    r->address = a;
    r->correlation_id = static_cast<uint32_t>(c);
    r->device = device.Next32(&bad);
    r->stream = stream.Next32(&bad);
    r->context = context.Next32(&bad);
    r->sync_type = sync_type.Next32(&bad);
    r->graph_node_id = graph_node_id.Next(&bad);
    r->launch_config = launch_config.Next32(&bad);
    r->name = name.Next32(&bad);
    UnpackActivityKind(kind.Next32(&bad), r);
    UnpackAttrs(attrs.Next32(&bad), r);
  }
  if (bad) {
    out->resize(first);
    return ByProtobuf(wire, out, error, DecodeActivitiesFromMessage);
  }
  return WireBatchResult::kOk;
}

}  // namespace gs::trace
