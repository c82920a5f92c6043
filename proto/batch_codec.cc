#include "proto/batch_codec.h"

#include <algorithm>

namespace gs::trace {
namespace {

using google::protobuf::RepeatedField;

// Appends `value` to a column that holds either nothing (all records so far were default) or
// one element per record so far (`n`). A column is materialised only when a non-default value
// first shows up, which is what keeps batches of homogeneous records small.
template <typename E, typename V>
inline void Put(RepeatedField<E>* column, uint32_t n, V value) {
  if (column->empty()) {
    if (value == V{}) return;
    column->Reserve(static_cast<int>(n) + 16);
    column->Resize(static_cast<int>(n), E{});
  }
  column->Add(static_cast<E>(value));
}

// Read side: an optional column, default when empty.
template <typename E>
class Column {
 public:
  explicit Column(const RepeatedField<E>& field) : data_(field.empty() ? nullptr : field.data()) {}
  E operator[](int i) const { return data_ != nullptr ? data_[i] : E{}; }
  bool present() const { return data_ != nullptr; }

 private:
  const E* data_;
};

template <typename E>
bool Fits(const RepeatedField<E>& column, int count) {
  return column.empty() || column.size() == count;
}

// Checks the record count against the mandatory time column, then every optional column.
#define GS_CHECK_TIME_COLUMN(batch, column)                                                  \
  do {                                                                                       \
    if ((batch).column##_size() != static_cast<int>((batch).count()) ||                      \
        (batch).count() > static_cast<uint32_t>(INT32_MAX)) {                                \
      *error = std::string(#column " has ") + std::to_string((batch).column##_size()) +      \
               " elements, count says " + std::to_string((batch).count());                   \
      return false;                                                                          \
    }                                                                                        \
  } while (0)
#define GS_CHECK_COLUMN(batch, column)                                                       \
  do {                                                                                       \
    if (!Fits((batch).column(), static_cast<int>((batch).count()))) {                        \
      *error = std::string("column " #column " has ") + std::to_string((batch).column##_size()) + \
               " elements, expected 0 or " + std::to_string((batch).count());                \
      return false;                                                                          \
    }                                                                                        \
  } while (0)

}  // namespace

// ----------------------------------------------------------------------------------- encoders

void ApiCallBatchEncoder::Begin(gpustall::trace::ApiCallBatch* batch, uint64_t thread_id,
                                uint64_t base_ns) {
  batch_ = batch;
  batch_->Clear();
  batch_->set_thread_id(thread_id);
  batch_->set_base_ns(base_ns);
  count_ = 0;
  prev_enter_ = base_ns;
  prev_stream_ = prev_address_ = 0;
  prev_correlation_ = 0;
}

void ApiCallBatchEncoder::Add(const ApiCallRecord& r) {
  gpustall::trace::ApiCallBatch* b = batch_;
  b->add_enter_delta(Delta(r.enter_ns, &prev_enter_));
  Put(b->mutable_duration(), count_, r.exit_ns >= r.enter_ns ? r.exit_ns - r.enter_ns : 0);
  Put(b->mutable_function(), count_, r.function);
  Put(b->mutable_correlation_delta(), count_,
      static_cast<int64_t>(r.correlation_id) - prev_correlation_);
  prev_correlation_ = r.correlation_id;
  Put(b->mutable_stack(), count_, r.stack);
  Put(b->mutable_bytes(), count_, r.bytes);
  Put(b->mutable_stream_delta(), count_, Delta(r.stream, &prev_stream_));
  Put(b->mutable_attrs(), count_, PackAttrs(r.copy_kind, r.src_kind, r.dst_kind, r.flags));
  Put(b->mutable_result(), count_, r.result);
  Put(b->mutable_device(), count_, r.device);
  Put(b->mutable_address_delta(), count_, Delta(r.address, &prev_address_));
  b->set_count(++count_);
}

void GpuActivityBatchEncoder::Begin(gpustall::trace::GpuActivityBatch* batch, uint64_t base_ns) {
  batch_ = batch;
  batch_->Clear();
  batch_->set_base_ns(base_ns);
  count_ = 0;
  prev_start_ = base_ns;
  prev_address_ = 0;
  prev_correlation_ = 0;
}

void GpuActivityBatchEncoder::Add(const GpuActivityRecord& r) {
  gpustall::trace::GpuActivityBatch* b = batch_;
  b->add_start_delta(Delta(r.start_ns, &prev_start_));
  Put(b->mutable_duration(), count_, r.end_ns >= r.start_ns ? r.end_ns - r.start_ns : 0);
  Put(b->mutable_correlation_delta(), count_,
      static_cast<int64_t>(r.correlation_id) - prev_correlation_);
  prev_correlation_ = r.correlation_id;
  Put(b->mutable_kind(), count_, PackActivityKind(r.kind, r.source));
  Put(b->mutable_device(), count_, r.device);
  Put(b->mutable_stream(), count_, r.stream);
  Put(b->mutable_name(), count_, r.name);
  Put(b->mutable_bytes(), count_, r.bytes);
  Put(b->mutable_attrs(), count_, PackAttrs(r.copy_kind, r.src_kind, r.dst_kind, r.flags));
  Put(b->mutable_address_delta(), count_, Delta(r.address, &prev_address_));
  Put(b->mutable_context(), count_, r.context);
  Put(b->mutable_sync_type(), count_, r.sync_type);
  Put(b->mutable_graph_node_id(), count_, r.graph_node_id);
  Put(b->mutable_launch_config(), count_, r.launch_config);
  b->set_count(++count_);
}

void MemoryEventBatchEncoder::Begin(gpustall::trace::MemoryEventBatch* batch, uint64_t base_ns) {
  batch_ = batch;
  batch_->Clear();
  batch_->set_base_ns(base_ns);
  count_ = 0;
  prev_time_ = base_ns;
  prev_address_ = prev_stream_ = 0;
}

void MemoryEventBatchEncoder::Add(const MemoryEventRecord& r) {
  gpustall::trace::MemoryEventBatch* b = batch_;
  b->add_time_delta(Delta(r.time_ns, &prev_time_));
  Put(b->mutable_kind(), count_, static_cast<int>(r.kind));
  Put(b->mutable_device(), count_, r.device);
  Put(b->mutable_address_delta(), count_, Delta(r.address, &prev_address_));
  Put(b->mutable_bytes(), count_, r.bytes);
  Put(b->mutable_mem_kind(), count_, static_cast<int>(r.mem_kind));
  Put(b->mutable_stream_delta(), count_, Delta(r.stream, &prev_stream_));
  Put(b->mutable_thread_id(), count_, r.thread_id);
  Put(b->mutable_stack(), count_, r.stack);
  b->set_count(++count_);
}

void SampleBatchEncoder::Begin(gpustall::trace::SampleBatch* batch, uint64_t thread_id,
                               uint64_t base_ns) {
  batch_ = batch;
  batch_->Clear();
  batch_->set_thread_id(thread_id);
  batch_->set_base_ns(base_ns);
  count_ = 0;
  prev_time_ = base_ns;
}

void SampleBatchEncoder::Add(const SampleRecord& r) {
  gpustall::trace::SampleBatch* b = batch_;
  b->add_time_delta(Delta(r.time_ns, &prev_time_));
  Put(b->mutable_stack(), count_, r.stack);
  Put(b->mutable_state(), count_, static_cast<int>(r.state));
  Put(b->mutable_cpu(), count_, r.cpu);
  Put(b->mutable_cpu_time_delta_ns(), count_, r.cpu_time_delta_ns);
  b->set_count(++count_);
}

void HostWaitBatchEncoder::Begin(gpustall::trace::HostWaitBatch* batch, uint64_t thread_id,
                                 uint64_t base_ns) {
  batch_ = batch;
  batch_->Clear();
  batch_->set_thread_id(thread_id);
  batch_->set_base_ns(base_ns);
  count_ = 0;
  prev_start_ = base_ns;
}

void HostWaitBatchEncoder::Add(const HostWaitRecord& r) {
  gpustall::trace::HostWaitBatch* b = batch_;
  b->add_start_delta(Delta(r.start_ns, &prev_start_));
  Put(b->mutable_duration(), count_, r.end_ns >= r.start_ns ? r.end_ns - r.start_ns : 0);
  Put(b->mutable_function(), count_, r.function);
  Put(b->mutable_state(), count_, static_cast<int>(r.state));
  Put(b->mutable_stack(), count_, r.stack);
  b->set_count(++count_);
}

void NvtxRangeBatchEncoder::Begin(gpustall::trace::NvtxRangeBatch* batch, uint64_t thread_id,
                                  uint64_t base_ns) {
  batch_ = batch;
  batch_->Clear();
  batch_->set_thread_id(thread_id);
  batch_->set_base_ns(base_ns);
  count_ = 0;
  prev_start_ = base_ns;
}

void NvtxRangeBatchEncoder::Add(const NvtxRangeRecord& r) {
  gpustall::trace::NvtxRangeBatch* b = batch_;
  b->add_start_delta(Delta(r.start_ns, &prev_start_));
  Put(b->mutable_duration(), count_, r.end_ns >= r.start_ns ? r.end_ns - r.start_ns : 0);
  Put(b->mutable_name(), count_, r.name);
  Put(b->mutable_domain(), count_, r.domain);
  Put(b->mutable_category(), count_, r.category);
  Put(b->mutable_color(), count_, r.color);
  Put(b->mutable_depth(), count_, r.depth);
  Put(b->mutable_stack(), count_, r.stack);
  b->set_count(++count_);
}

// ----------------------------------------------------------------------------------- decoders

namespace {

template <typename Records>
bool DecodeApiCalls(const gpustall::trace::ApiCallBatch& b, Records* out, std::string* error) {
  GS_CHECK_TIME_COLUMN(b, enter_delta);
  GS_CHECK_COLUMN(b, duration);
  GS_CHECK_COLUMN(b, function);
  GS_CHECK_COLUMN(b, correlation_delta);
  GS_CHECK_COLUMN(b, stack);
  GS_CHECK_COLUMN(b, bytes);
  GS_CHECK_COLUMN(b, stream_delta);
  GS_CHECK_COLUMN(b, attrs);
  GS_CHECK_COLUMN(b, result);
  GS_CHECK_COLUMN(b, device);
  GS_CHECK_COLUMN(b, address_delta);
  const int n = static_cast<int>(b.count());
  const int64_t* enter = b.enter_delta().data();
  Column<uint64_t> duration(b.duration());
  Column<uint32_t> function(b.function());
  Column<int64_t> correlation(b.correlation_delta());
  Column<uint32_t> stack(b.stack());
  Column<uint64_t> bytes(b.bytes());
  Column<int64_t> stream(b.stream_delta());
  Column<uint32_t> attrs(b.attrs());
  Column<int32_t> result(b.result());
  Column<uint32_t> device(b.device());
  Column<int64_t> address(b.address_delta());
  uint64_t t = b.base_ns(), s = 0, a = 0, c = 0;
  const size_t first = out->size();
  out->resize(first + static_cast<size_t>(n));
  ApiCallRecord* r = out->data() + first;
  for (int i = 0; i < n; ++i, ++r) {
    t += static_cast<uint64_t>(enter[i]);
    c += static_cast<uint64_t>(correlation[i]);
    s += static_cast<uint64_t>(stream[i]);
    a += static_cast<uint64_t>(address[i]);
    r->thread_id = b.thread_id();
    r->enter_ns = t;
    r->exit_ns = t + duration[i];
    r->bytes = bytes[i];
    r->stream = s;
    r->address = a;
    r->function = function[i];
    r->correlation_id = static_cast<uint32_t>(c);
    r->stack = stack[i];
    r->result = result[i];
    r->device = device[i];
    UnpackAttrs(attrs[i], r);
    r->api_class = gpustall::trace::API_CLASS_OTHER;
  }
  return true;
}

template <typename Records>
bool DecodeGpuActivities(const gpustall::trace::GpuActivityBatch& b, Records* out, std::string* error) {
  GS_CHECK_TIME_COLUMN(b, start_delta);
  GS_CHECK_COLUMN(b, duration);
  GS_CHECK_COLUMN(b, correlation_delta);
  GS_CHECK_COLUMN(b, kind);
  GS_CHECK_COLUMN(b, device);
  GS_CHECK_COLUMN(b, stream);
  GS_CHECK_COLUMN(b, name);
  GS_CHECK_COLUMN(b, bytes);
  GS_CHECK_COLUMN(b, attrs);
  GS_CHECK_COLUMN(b, address_delta);
  GS_CHECK_COLUMN(b, context);
  GS_CHECK_COLUMN(b, sync_type);
  GS_CHECK_COLUMN(b, graph_node_id);
  GS_CHECK_COLUMN(b, launch_config);
  const int n = static_cast<int>(b.count());
  const int64_t* start = b.start_delta().data();
  Column<uint64_t> duration(b.duration());
  Column<int64_t> correlation(b.correlation_delta());
  Column<uint32_t> kind(b.kind());
  Column<uint32_t> device(b.device());
  Column<uint32_t> stream(b.stream());
  Column<uint32_t> name(b.name());
  Column<uint64_t> bytes(b.bytes());
  Column<uint32_t> attrs(b.attrs());
  Column<int64_t> address(b.address_delta());
  Column<uint32_t> context(b.context());
  Column<uint32_t> sync_type(b.sync_type());
  Column<uint64_t> graph_node_id(b.graph_node_id());
  Column<uint32_t> launch_config(b.launch_config());
  uint64_t t = b.base_ns(), a = 0, c = 0;
  const size_t first = out->size();
  out->resize(first + static_cast<size_t>(n));
  GpuActivityRecord* r = out->data() + first;
  for (int i = 0; i < n; ++i, ++r) {
    t += static_cast<uint64_t>(start[i]);
    c += static_cast<uint64_t>(correlation[i]);
    a += static_cast<uint64_t>(address[i]);
    r->start_ns = t;
    r->end_ns = t + duration[i];
    r->bytes = bytes[i];
    r->address = a;
    r->correlation_id = static_cast<uint32_t>(c);
    r->device = device[i];
    r->stream = stream[i];
    r->context = context[i];
    r->sync_type = sync_type[i];
    r->graph_node_id = graph_node_id[i];
    r->launch_config = launch_config[i];
    r->name = name[i];
    UnpackActivityKind(kind[i], r);
    UnpackAttrs(attrs[i], r);
  }
  return true;
}

}  // namespace

bool DecodeApiCallBatch(const gpustall::trace::ApiCallBatch& b, std::vector<ApiCallRecord>* out,
                        std::string* error) {
  return DecodeApiCalls(b, out, error);
}
bool DecodeApiCallBatch(const gpustall::trace::ApiCallBatch& b, ApiCallRecords* out, std::string* error) {
  return DecodeApiCalls(b, out, error);
}
bool DecodeGpuActivityBatch(const gpustall::trace::GpuActivityBatch& b,
                            std::vector<GpuActivityRecord>* out, std::string* error) {
  return DecodeGpuActivities(b, out, error);
}
bool DecodeGpuActivityBatch(const gpustall::trace::GpuActivityBatch& b, GpuActivityRecords* out,
                            std::string* error) {
  return DecodeGpuActivities(b, out, error);
}

bool DecodeMemoryEventBatch(const gpustall::trace::MemoryEventBatch& b,
                            std::vector<MemoryEventRecord>* out, std::string* error) {
  GS_CHECK_TIME_COLUMN(b, time_delta);
  GS_CHECK_COLUMN(b, kind);
  GS_CHECK_COLUMN(b, device);
  GS_CHECK_COLUMN(b, address_delta);
  GS_CHECK_COLUMN(b, bytes);
  GS_CHECK_COLUMN(b, mem_kind);
  GS_CHECK_COLUMN(b, stream_delta);
  GS_CHECK_COLUMN(b, thread_id);
  GS_CHECK_COLUMN(b, stack);
  const int n = static_cast<int>(b.count());
  Column<int> kind(b.kind());
  Column<uint32_t> device(b.device());
  Column<int64_t> address(b.address_delta());
  Column<uint64_t> bytes(b.bytes());
  Column<int> mem_kind(b.mem_kind());
  Column<int64_t> stream(b.stream_delta());
  Column<uint64_t> thread(b.thread_id());
  Column<uint32_t> stack(b.stack());
  uint64_t t = b.base_ns(), a = 0, s = 0;
  out->reserve(out->size() + static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    t += static_cast<uint64_t>(b.time_delta(i));
    a += static_cast<uint64_t>(address[i]);
    s += static_cast<uint64_t>(stream[i]);
    MemoryEventRecord r;
    r.time_ns = t;
    r.address = a;
    r.bytes = bytes[i];
    r.stream = s;
    r.thread_id = thread[i];
    r.device = device[i];
    r.stack = stack[i];
    r.kind = ToEnum(static_cast<uint32_t>(kind[i]), gpustall::trace::MemoryEventKind_MAX);
    r.mem_kind = ToMemKind(static_cast<uint32_t>(mem_kind[i]));
    out->push_back(r);
  }
  return true;
}

bool DecodeSampleBatch(const gpustall::trace::SampleBatch& b, std::vector<SampleRecord>* out,
                       std::string* error) {
  GS_CHECK_TIME_COLUMN(b, time_delta);
  GS_CHECK_COLUMN(b, stack);
  GS_CHECK_COLUMN(b, state);
  GS_CHECK_COLUMN(b, cpu);
  GS_CHECK_COLUMN(b, cpu_time_delta_ns);
  const int n = static_cast<int>(b.count());
  Column<uint32_t> stack(b.stack());
  Column<int> state(b.state());
  Column<uint32_t> cpu(b.cpu());
  Column<uint64_t> cpu_time(b.cpu_time_delta_ns());
  uint64_t t = b.base_ns();
  out->reserve(out->size() + static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    t += static_cast<uint64_t>(b.time_delta(i));
    SampleRecord r;
    r.thread_id = b.thread_id();
    r.time_ns = t;
    r.cpu_time_delta_ns = cpu_time[i];
    r.stack = stack[i];
    r.cpu = cpu[i];
    r.state = ToEnum(static_cast<uint32_t>(state[i]), gpustall::trace::ThreadState_MAX);
    out->push_back(r);
  }
  return true;
}

bool DecodeHostWaitBatch(const gpustall::trace::HostWaitBatch& b,
                         std::vector<HostWaitRecord>* out, std::string* error) {
  GS_CHECK_TIME_COLUMN(b, start_delta);
  GS_CHECK_COLUMN(b, duration);
  GS_CHECK_COLUMN(b, function);
  GS_CHECK_COLUMN(b, state);
  GS_CHECK_COLUMN(b, stack);
  const int n = static_cast<int>(b.count());
  Column<uint64_t> duration(b.duration());
  Column<uint32_t> function(b.function());
  Column<int> state(b.state());
  Column<uint32_t> stack(b.stack());
  uint64_t t = b.base_ns();
  out->reserve(out->size() + static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    t += static_cast<uint64_t>(b.start_delta(i));
    HostWaitRecord r;
    r.thread_id = b.thread_id();
    r.start_ns = t;
    r.end_ns = t + duration[i];
    r.function = function[i];
    r.state = ToEnum(static_cast<uint32_t>(state[i]), gpustall::trace::ThreadState_MAX);
    r.stack = stack[i];
    out->push_back(r);
  }
  return true;
}

bool DecodeNvtxRangeBatch(const gpustall::trace::NvtxRangeBatch& b,
                          std::vector<NvtxRangeRecord>* out, std::string* error) {
  GS_CHECK_TIME_COLUMN(b, start_delta);
  GS_CHECK_COLUMN(b, duration);
  GS_CHECK_COLUMN(b, name);
  GS_CHECK_COLUMN(b, domain);
  GS_CHECK_COLUMN(b, category);
  GS_CHECK_COLUMN(b, color);
  GS_CHECK_COLUMN(b, depth);
  GS_CHECK_COLUMN(b, stack);
  const int n = static_cast<int>(b.count());
  Column<uint64_t> duration(b.duration());
  Column<uint32_t> name(b.name());
  Column<uint32_t> domain(b.domain());
  Column<uint32_t> category(b.category());
  Column<uint32_t> color(b.color());
  Column<uint32_t> depth(b.depth());
  Column<uint32_t> stack(b.stack());
  uint64_t t = b.base_ns();
  out->reserve(out->size() + static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    t += static_cast<uint64_t>(b.start_delta(i));
    NvtxRangeRecord r;
    r.thread_id = b.thread_id();
    r.start_ns = t;
    r.end_ns = t + duration[i];
    r.name = name[i];
    r.domain = domain[i];
    r.category = category[i];
    r.color = color[i];
    r.depth = depth[i];
    r.stack = stack[i];
    out->push_back(r);
  }
  return true;
}

#undef GS_CHECK_TIME_COLUMN
#undef GS_CHECK_COLUMN

}  // namespace gs::trace
