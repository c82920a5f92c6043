#include "analyzer/import/kineto/kineto_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include "absl/strings/string_view.h"
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/import/kineto/api_names.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace gs::analyzer::kineto {

namespace {

constexpr TimeNs kDayNs = 86'400'000'000'000;
constexpr TimeNs kMaxRecordNs = 7 * kDayNs;     // no op, call or kernel lasts a week
constexpr TimeNs kMaxTraceSpanNs = 14 * kDayNs; // as the .gstrace importer: beyond, not µs
// Timestamps are kept within ±2^62 ns (146 years either side of the clock's zero: epoch
// microseconds until 2116): sums and differences of two of them, or of one and a duration, then
// cannot overflow a TimeNs. Beyond, they are not a real trace's microseconds.
constexpr TimeNs kMaxAbsTimeNs = TimeNs{1} << 62;
constexpr size_t kBufferBytes = 1 << 20;
constexpr uint32_t kNoStream = 0xFFFFFFFF;       // CUPTI's stream id of a "Context Sync"

// ---- input: a file through zlib (which reads plain files as they are), or bytes in memory ----

class Source {
 public:
  virtual ~Source() = default;
  // Up to `n` bytes into `buf`; 0 at the end or on error (error() says which).
  virtual size_t Read(char* buf, size_t n) = 0;
  virtual std::string error() const = 0;
};

class GzFileSource final : public Source {
 public:
  explicit GzFileSource(gzFile f, KinetoTrace::Progress progress = nullptr) : f_(f), progress_(std::move(progress)) {
    gzbuffer(f_, 256 * 1024);
  }
  ~GzFileSource() override { gzclose(f_); }
  size_t Read(char* buf, size_t n) override {
    if (!error_.empty()) return 0;
    int got = gzread(f_, buf, static_cast<unsigned>(n));
    if (progress_ && got > 0) {
      const z_off_t at = gzoffset(f_);  // the file's bytes consumed (gzip: compressed)
      if (at > 0) progress_(static_cast<uint64_t>(at));
    }
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f_, &code);
      error_ = msg != nullptr && *msg ? msg : "read error";
      return 0;
    }
    if (got == 0) {
      int code = 0;
      const char* msg = gzerror(f_, &code);
      if (code != Z_OK && code != Z_STREAM_END && msg != nullptr) error_ = msg;
    }
    return static_cast<size_t>(got);
  }
  std::string error() const override { return error_; }

 private:
  gzFile f_;
  KinetoTrace::Progress progress_;
  std::string error_;
};

// Memory: plain, or gzip inflated as it is read (tests and fuzzers).
class BufferSource final : public Source {
 public:
  explicit BufferSource(const std::string& bytes) : bytes_(bytes) {
    gzip_ = bytes_.size() >= 2 && static_cast<unsigned char>(bytes_[0]) == 0x1f &&
            static_cast<unsigned char>(bytes_[1]) == 0x8b;
    if (gzip_) {
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes_.data()));
      zs_.avail_in = static_cast<uInt>(bytes_.size());
      if (inflateInit2(&zs_, 15 + 16) != Z_OK) error_ = "cannot start gzip";
    }
  }
  ~BufferSource() override {
    if (gzip_) inflateEnd(&zs_);
  }
  size_t Read(char* buf, size_t n) override {
    if (!error_.empty() || done_) return 0;
    if (!gzip_) {
      size_t k = std::min(n, bytes_.size() - pos_);
      std::memcpy(buf, bytes_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(n);
    int rc = inflate(&zs_, Z_NO_FLUSH);
    size_t got = n - zs_.avail_out;
    if (rc == Z_STREAM_END) done_ = true;
    else if (rc != Z_OK && got == 0) error_ = zs_.avail_in == 0 ? "unexpected end of file" : "gzip data damaged";
    return got;
  }
  std::string error() const override { return error_; }

 private:
  const std::string& bytes_;
  size_t pos_ = 0;
  bool gzip_ = false, done_ = false;
  z_stream zs_{};
  std::string error_;
};

// RapidJSON's input stream concept over a Source, one buffer at a time.
class JsonStream {
 public:
  using Ch = char;
  explicit JsonStream(Source* src) : src_(src), buf_(kBufferBytes) { Fill(); }
  Ch Peek() const { return pos_ < end_ ? buf_[pos_] : '\0'; }
  Ch Take() {
    if (pos_ >= end_) return '\0';
    Ch c = buf_[pos_++];
    if (pos_ == end_) Fill();
    return c;
  }
  size_t Tell() const { return base_ + pos_; }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }
  bool at_end() const { return pos_ >= end_; }

 private:
  void Fill() {
    base_ += end_;
    pos_ = 0;
    end_ = src_->Read(buf_.data(), buf_.size());
  }
  Source* src_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0, base_ = 0;
};

// Microseconds as Kineto writes them ("1623142623460111", "4203669604595.407", "68.0") to
// nanoseconds, exactly: a double loses the nanoseconds of absolute epoch microseconds.
bool MicrosToNs(absl::string_view s, TimeNs* out) {
  // The most microseconds whose nanoseconds are within kMaxAbsTimeNs: 4.6e15 us, 146 years.
  constexpr int64_t kMaxWholeMicros = (kMaxAbsTimeNs - 999) / 1000;
  bool neg = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i >= s.size() || s.find_first_of("eE") != absl::string_view::npos) {
    double d = std::strtod(std::string(s).c_str(), nullptr);
    if (!std::isfinite(d) || std::fabs(d) > static_cast<double>(kMaxWholeMicros)) return false;
    *out = static_cast<TimeNs>(std::llround(d * 1000.0));
    return true;
  }
  int64_t whole = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (whole > kMaxWholeMicros) return false;
    whole = whole * 10 + (s[i] - '0');
  }
  if (whole > kMaxWholeMicros) return false;
  int64_t frac = 0;
  int digits = 0;
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (digits < 3) frac = frac * 10 + (s[i] - '0'), ++digits;
    }
  }
  if (i != s.size()) return false;
  for (; digits < 3; ++digits) frac *= 10;
  *out = (neg ? -1 : 1) * (whole * 1000 + frac);
  return true;
}

// What a Chrome-trace category means here. Both dialects, compared without case, spaces and '_'.
enum class Cat : uint8_t { kIgnore, kKernel, kMemcpy, kMemset, kSync, kRuntime, kHost };

Cat Classify(absl::string_view cat, bool* legacy) {
  std::string c;
  c.reserve(cat.size());
  for (char ch : cat)
    if (ch != ' ' && ch != '_') c.push_back(absl::ascii_tolower(static_cast<unsigned char>(ch)));
  // 1.8-1.10: Operator, Runtime, Kernel, Memcpy, Memset (capitalised); 2.x: the rest.
  if (cat == "Operator" || cat == "Runtime" || cat == "Kernel" || cat == "Memcpy" || cat == "Memset")
    *legacy = true;
  if (c == "kernel") return Cat::kKernel;
  if (c == "gpumemcpy" || c == "memcpy") return Cat::kMemcpy;
  if (c == "gpumemset" || c == "memset") return Cat::kMemset;
  if (c == "cudasync") return Cat::kSync;
  if (c == "cudaruntime" || c == "runtime" || c == "cudadriver" || c == "driver") return Cat::kRuntime;
  if (c == "cpuop" || c == "operator" || c == "userannotation" || c == "pythonfunction")
    return Cat::kHost;
  return Cat::kIgnore;
}

MemKind MemKindFromWord(absl::string_view w) {
  if (w == "Pageable") return MemKind::kPageable;
  if (w == "Pinned") return MemKind::kPinned;
  if (w == "Device") return MemKind::kDevice;
  if (w == "Array") return MemKind::kArray;
  if (w == "Managed") return MemKind::kManaged;
  return MemKind::kUnknown;  // ROCm's "Host": pinned or pageable is not said
}

// "Memcpy HtoD (Pageable -> Device)" -> H2D, pageable, device.
void CopyFromName(absl::string_view name, GpuActivity* a) {
  if (absl::StrContains(name, "HtoD")) a->direction = CopyDirection::kHostToDevice;
  else if (absl::StrContains(name, "DtoH")) a->direction = CopyDirection::kDeviceToHost;
  else if (absl::StrContains(name, "DtoD")) a->direction = CopyDirection::kDeviceToDevice;
  else if (absl::StrContains(name, "HtoH")) a->direction = CopyDirection::kHostToHost;
  else if (absl::StrContains(name, "PtoP")) a->direction = CopyDirection::kPeerToPeer;
  size_t open = name.find('('), arrow = name.find("->"), close = name.rfind(')');
  if (open == absl::string_view::npos || arrow == absl::string_view::npos || close == absl::string_view::npos ||
      !(open < arrow && arrow < close))
    return;
  a->src_kind = MemKindFromWord(absl::StripAsciiWhitespace(name.substr(open + 1, arrow - open - 1)));
  a->dst_kind = MemKindFromWord(absl::StripAsciiWhitespace(name.substr(arrow + 2, close - arrow - 2)));
}

// A host thread id: Kineto writes numbers (2.x) or strings of digits (1.8); anything else is
// hashed into a range no OS tid uses.
uint64_t ThreadId(const std::string& s, bool numeric) {
  uint64_t v = 0;
  if (absl::SimpleAtoi(s, &v)) return v;
  (void)numeric;
  return (uint64_t{1} << 62) | (std::hash<std::string>()(s) >> 2);
}

}  // namespace

// ---- the SAX handler: events into the trace's compact vectors ----

class KinetoTrace::Parser {
 public:
  explicit Parser(KinetoTrace* t) : t_(t) {}

  // RapidJSON handler (kParseNumbersAsStringsFlag: every number arrives as RawNumber).
  bool Null() { return Value(nullptr, 0, false); }
  bool Bool(bool) { return Value(nullptr, 0, false); }
  bool Int(int) { return Value(nullptr, 0, false); }
  bool Uint(unsigned) { return Value(nullptr, 0, false); }
  bool Int64(int64_t) { return Value(nullptr, 0, false); }
  bool Uint64(uint64_t) { return Value(nullptr, 0, false); }
  bool Double(double) { return Value(nullptr, 0, false); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return Value(s, n, true); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return Value(s, n, false); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    stack_.back().key.assign(s, n);
    return true;
  }
  bool StartObject() {
    Ctx next = Ctx::kSkip;
    if (stack_.empty()) next = Ctx::kRoot;
    else if (Top() == Ctx::kRoot && CurKey() == "distributedInfo") next = Ctx::kDist;
    else if (Top() == Ctx::kEvents) next = Ctx::kEvent, ev_ = Event();
    else if (Top() == Ctx::kEvent && CurKey() == "args") next = Ctx::kArgs;
    else if (Top() == Ctx::kDevices) next = Ctx::kDevice, dev_ = DeviceDescription();
    stack_.push_back({next, {}});
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    Ctx done = Top();
    stack_.pop_back();
    if (done == Ctx::kEvent) Commit();
    if (done == Ctx::kDevice) FinishDevice(), t_->info_.devices.push_back(std::move(dev_));
    return true;
  }
  bool StartArray() {
    Ctx next = Ctx::kSkip;
    if (stack_.empty()) next = Ctx::kEvents;  // the JSON Array form: events at the top
    else if (Top() == Ctx::kRoot && CurKey() == "traceEvents") next = Ctx::kEvents;
    else if (Top() == Ctx::kRoot && CurKey() == "deviceProperties") next = Ctx::kDevices;
    else if (Top() == Ctx::kArgs && (CurKey() == "grid" || CurKey() == "block")) {
      next = Ctx::kDim;
      dim_ = CurKey() == "grid" ? ev_.grid : ev_.block;
      dim_index_ = 0;
      (CurKey() == "grid" ? ev_.has_grid : ev_.has_block) = true;
    }
    if (next == Ctx::kEvents) saw_events_ = true;
    stack_.push_back({next, {}});
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    stack_.pop_back();
    return true;
  }

  bool saw_events() const { return saw_events_; }
  bool saw_root_object() const { return saw_root_; }

 private:
  // kDim: a kernel's "grid" or "block" array, [x, y, z].
  enum class Ctx : uint8_t { kRoot, kEvents, kEvent, kArgs, kDim, kDevices, kDevice, kDist, kSkip };
  struct Level {
    Ctx ctx;
    std::string key;
  };
  struct Event {
    char ph = 0;
    std::string cat, name, pid, tid, arg_name;
    bool pid_num = false, tid_num = false;
    bool has_ts = false, has_dur = false, bad_ts = false, bad_dur = false;
    TimeNs ts = 0, dur = 0;
    int64_t correlation = -1, device = -1, stream = -1;
    uint64_t bytes = 0;
    // Kernels: "grid", "block", "registers per thread", "shared memory" (static + dynamic).
    uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    bool has_grid = false, has_block = false;
    int64_t registers = -1, shared_memory = -1;
  };

  Ctx Top() const { return stack_.back().ctx; }
  const std::string& CurKey() const { return stack_.back().key; }

  bool Value(const char* s, size_t n, bool number) {
    if (stack_.empty()) return true;
    if (s == nullptr) return true;
    absl::string_view v(s, n);
    const std::string& k = CurKey();
    switch (Top()) {
      case Ctx::kRoot:
        if (k == "baseTimeNanoseconds" && number && absl::SimpleAtoi(v, &base_time_ns_) &&
            (base_time_ns_ < 0 || base_time_ns_ > kMaxAbsTimeNs))
          base_time_ns_ = 0;  // not a wall-clock time: ts are taken as they are
        else if (k == "schemaVersion") saw_root_ = true;
        break;
      case Ctx::kEvent:
        if (k == "ph" && !v.empty()) ev_.ph = v[0];
        else if (k == "cat") ev_.cat.assign(v.data(), v.size());
        else if (k == "name") ev_.name.assign(v.data(), v.size());
        else if (k == "pid") ev_.pid.assign(v.data(), v.size()), ev_.pid_num = number;
        else if (k == "tid") ev_.tid.assign(v.data(), v.size()), ev_.tid_num = number;
        else if (k == "ts" && number) ev_.has_ts = MicrosToNs(v, &ev_.ts), ev_.bad_ts = !ev_.has_ts;
        else if (k == "dur" && number) ev_.has_dur = MicrosToNs(v, &ev_.dur), ev_.bad_dur = !ev_.has_dur;
        break;
      case Ctx::kArgs:
        if (k == "correlation" && number) absl::SimpleAtoi(v, &ev_.correlation);
        else if (k == "device" && number) absl::SimpleAtoi(v, &ev_.device);
        else if (k == "stream" && number) absl::SimpleAtoi(v, &ev_.stream);
        else if (k == "bytes" && number) absl::SimpleAtoi(v, &ev_.bytes);
        else if (k == "name" && !number) ev_.arg_name.assign(v.data(), v.size());
        else if (k == "registers per thread" && number) absl::SimpleAtoi(v, &ev_.registers);
        else if (k == "shared memory" && number) absl::SimpleAtoi(v, &ev_.shared_memory);
        break;
      case Ctx::kDim: {
        uint32_t x = 0;
        if (dim_index_ < 3 && number && absl::SimpleAtoi(v, &x)) dim_[dim_index_] = x;
        ++dim_index_;
        break;
      }
      case Ctx::kDevice:
        if (k == "id" && number) absl::SimpleAtoi(v, &dev_.index);
        else if (k == "name" && !number) dev_.name.assign(v.data(), v.size());
        else if (k == "totalGlobalMem" && number) absl::SimpleAtoi(v, &dev_.total_memory);
        else if (number) DeviceLimit(k, v);
        break;
      case Ctx::kDist:
        if (k == "world_size" && number) absl::SimpleAtoi(v, &world_size_);
        if (k == "rank" && number) {
          int32_t r = 0;
          if (absl::SimpleAtoi(v, &r)) t_->info_.rank = r;
        }
        break;
      default:
        break;
    }
    return true;
  }

  // deviceProperties' SM limits (PyTorch's profiler writes cudaDeviceProp's fields).
  void DeviceLimit(const std::string& k, absl::string_view v) {
    int64_t x = 0;
    if (!absl::SimpleAtoi(v, &x) || x < 0 || x > (int64_t{1} << 40)) return;
    OccupancyDevice& d = dev_.sm;
    const int i = static_cast<int>(std::min<int64_t>(x, std::numeric_limits<int>::max()));
    if (k == "numSms") dev_.sm_count = static_cast<uint32_t>(i);
    else if (k == "computeMajor") d.cc_major = i;
    else if (k == "computeMinor") d.cc_minor = i;
    else if (k == "maxThreadsPerBlock") d.max_threads_per_block = i;
    else if (k == "maxThreadsPerMultiprocessor") d.max_threads_per_sm = i;
    else if (k == "warpSize") d.warp_size = i;
    else if (k == "regsPerBlock") d.registers_per_block = i;
    else if (k == "regsPerMultiprocessor") d.registers_per_sm = i;
    else if (k == "sharedMemPerBlock") d.shared_per_block = x;
    else if (k == "sharedMemPerBlockOptin") d.shared_per_block_optin = x;
    else if (k == "sharedMemPerMultiprocessor") d.shared_per_sm = x;
  }
  // The reserved shared memory of a block is not in deviceProperties: from cc 8 it is what the SM
  // has beyond the opt-in limit (cudaDevAttrReservedSharedMemoryPerBlock, 1 KiB on A100 and H100).
  void FinishDevice() {
    OccupancyDevice& d = dev_.sm;
    if (d.cc_major >= 8 && d.shared_per_sm > d.shared_per_block_optin && d.shared_per_block_optin > 0)
      d.reserved_shared_per_block = d.shared_per_sm - d.shared_per_block_optin;
  }

  // A kernel's launch configuration, interned: 0 when the event has no grid and block, or one no
  // launch can have (CUDA's limits: grid x < 2^31, y and z < 2^16; a block of at most 1024 threads
  // on every device so far, taken up to 2^16 here).
  uint32_t LaunchConfigId() {
    if (!ev_.has_grid || !ev_.has_block) return 0;
    const uint64_t grid_max[3] = {(uint64_t{1} << 31) - 1, 65535, 65535};
    uint64_t threads = 1;
    for (int i = 0; i < 3; ++i) {
      if (ev_.grid[i] == 0 || ev_.grid[i] > grid_max[i] || ev_.block[i] == 0) return 0;
      threads *= ev_.block[i];
      if (threads > 65536) return 0;
    }
    LaunchConfig c;
    for (int i = 0; i < 3; ++i) c.grid[i] = ev_.grid[i], c.block[i] = ev_.block[i];
    c.has_resources = ev_.registers >= 0 && ev_.shared_memory >= 0;
    c.registers_per_thread = ev_.registers > 0 ? static_cast<uint32_t>(std::min<int64_t>(ev_.registers, 65535)) : 0;
    c.shared_memory_bytes = ev_.shared_memory > 0 ? static_cast<uint64_t>(ev_.shared_memory) : 0;
    const LaunchKey key{c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                        c.registers_per_thread, c.shared_memory_bytes, c.has_resources};
    auto [it, added] = launch_configs_.try_emplace(key, static_cast<uint32_t>(launch_configs_.size() + 1));
    if (added) t_->tables_.SetLaunchConfig(it->second, c);
    return it->second;
  }

  uint32_t Intern(absl::flat_hash_map<std::string, uint32_t>* map, const std::string& s, bool* added) {
    auto [it, inserted] = map->try_emplace(s, static_cast<uint32_t>(map->size() + 1));
    *added = inserted;
    return it->second;
  }
  uint32_t InternString(const std::string& s) {
    bool added;
    uint32_t id = Intern(&strings_, s, &added);
    if (added) t_->tables_.SetString(id, s);
    return id;
  }
  uint32_t Function(const std::string& s) {
    bool added;
    uint32_t id = Intern(&functions_, s, &added);
    if (added) t_->tables_.SetFunction(id, s);
    return id;
  }
  // A host range's frame: Python frames "path/file.py(123): func" keep file and line.
  uint32_t Frame(const std::string& name) {
    bool added;
    uint32_t id = Intern(&frames_, name, &added);
    if (!added) return id;
    uint32_t function = 0, file = 0, line = 0;
    size_t open = name.find('('), close = name.find("): ");
    if (open != std::string::npos && close != std::string::npos && open < close && open > 0 &&
        absl::SimpleAtoi(absl::string_view(name).substr(open + 1, close - open - 1), &line)) {
      file = InternString(name.substr(0, open));
      function = InternString(name.substr(close + 3));
    } else {
      function = InternString(name);
      line = 0;
    }
    t_->tables_.SetFrame(id, function, file, line, 0);
    return id;
  }

  // The model's correlation ids are 32 bits; Kineto's are 64 (CUPTI's, or the profiler's own).
  // While every id fits, it is kept as written; from the first that does not, all ids (those
  // stored so far included) are numbered 1, 2, ... in order of appearance, so that ids that
  // differ only above bit 31 stay apart and a call still finds its own work.
  uint32_t Correlation(int64_t id) {
    if (id <= 0) return 0;
    if (dense_.empty() && id <= int64_t{std::numeric_limits<uint32_t>::max()})
      return static_cast<uint32_t>(id);
    if (dense_.empty()) {
      for (GpuActivity& a : t_->activities_) a.correlation = Dense(a.correlation);
      for (Call& c : t_->calls_) c.correlation = Dense(c.correlation);
    }
    return Dense(id);
  }
  uint32_t Dense(int64_t id) {
    if (id == 0) return 0;
    const uint32_t next = static_cast<uint32_t>(dense_.size() + 1);
    return dense_.try_emplace(id, next).first->second;
  }

  void Commit() {
    KinetoTrace& t = *t_;
    ++t.counts_.events;
    if (ev_.ph == 'M') {
      if (ev_.name == "thread_name" && !ev_.arg_name.empty() && !ev_.tid.empty())
        t.tables_.SetThreadName(ThreadId(ev_.tid, ev_.tid_num), ev_.arg_name);
      return;
    }
    if (ev_.ph == 'X' && ev_.bad_ts) ++t.counts_.bad_times;
    if (ev_.ph != 'X' || !ev_.has_ts) return;
    const Cat cat = Classify(ev_.cat, &t.counts_.legacy_dialect);
    if (cat == Cat::kIgnore) return;
    const TimeNs dur = ev_.has_dur ? ev_.dur : 0;
    if (ev_.bad_dur || dur < 0 || dur > kMaxRecordNs) {
      ++t.counts_.dropped;
      return;
    }
    const TimeNs start = ev_.ts, end = ev_.ts + dur;
    switch (cat) {
      case Cat::kKernel:
      case Cat::kMemcpy:
      case Cat::kMemset:
      case Cat::kSync: {
        GpuActivity a;
        a.start_ns = start;
        a.end_ns = end;
        a.bytes = ev_.bytes;
        a.correlation = Correlation(ev_.correlation);
        int64_t device = ev_.device;
        if (device < 0 && ev_.pid_num) absl::SimpleAtoi(ev_.pid, &device);
        a.device = device >= 0 ? static_cast<uint32_t>(device) : 0;
        a.stream = ev_.stream >= 0 ? static_cast<uint32_t>(ev_.stream) : 0;
        a.name = InternString(ev_.name);
        if (cat == Cat::kKernel) {
          a.kind = absl::StartsWith(ev_.name, "nccl") ? ActivityKind::kCollective : ActivityKind::kKernel;
          a.launch_config = LaunchConfigId();
          ++t.counts_.kernels;
        } else if (cat == Cat::kMemcpy) {
          a.kind = ActivityKind::kMemcpy;
          CopyFromName(ev_.name, &a);
          ++t.counts_.memcpys;
        } else if (cat == Cat::kMemset) {
          a.kind = ActivityKind::kMemset;
          ++t.counts_.memsets;
        } else {
          a.kind = ActivityKind::kSync;
          ++t.counts_.syncs;
        }
        t.activities_.push_back(a);
        break;
      }
      case Cat::kRuntime: {
        ++t.counts_.runtime_calls;
        if (host_pid_ == 0 && ev_.pid_num) absl::SimpleAtoi(ev_.pid, &host_pid_);
        t.calls_.push_back({start, end, ThreadId(ev_.tid, ev_.tid_num), Function(ev_.name),
                            Correlation(ev_.correlation)});
        break;
      }
      case Cat::kHost: {
        ++t.counts_.host_ranges;
        bool numbered_step = false;
        if (absl::StartsWith(ev_.name, "ProfilerStep#")) {
          ++t.counts_.steps;
          // The step window (accounting/profiler_steps.h) needs the number and the host range.
          int64_t number = 0;
          numbered_step = absl::SimpleAtoi(absl::string_view(ev_.name).substr(13), &number);
          if (numbered_step) t.info_.profiler_steps.push_back({number, start, end});
        }
        if (absl::EqualsIgnoreCase(ev_.cat, "python_function")) t.info_.python_stacks = true;
        if (host_pid_ == 0 && ev_.pid_num) absl::SimpleAtoi(ev_.pid, &host_pid_);
        // Every step is one frame, "ProfilerStep#*": the same loop under ProfilerStep#5 and #6 is
        // one stack (stacks aggregate by function); each step's own figures are the per-step rows.
        t.ranges_.push_back({start, end, ThreadId(ev_.tid, ev_.tid_num),
                             Frame(numbered_step ? std::string("ProfilerStep#*") : ev_.name)});
        break;
      }
      default:
        break;
    }
  }

 public:
  int64_t base_time_ns_ = 0;
  int64_t world_size_ = 0;
  int64_t host_pid_ = 0;

 private:
  KinetoTrace* t_;
  std::vector<Level> stack_;
  Event ev_;
  DeviceDescription dev_;
  uint32_t* dim_ = nullptr;  // the array kDim fills (ev_.grid or ev_.block)
  int dim_index_ = 0;
  bool saw_events_ = false, saw_root_ = false;
  absl::flat_hash_map<std::string, uint32_t> strings_, functions_, frames_;
  using LaunchKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint64_t, bool>;
  absl::flat_hash_map<LaunchKey, uint32_t> launch_configs_;
  absl::flat_hash_map<int64_t, uint32_t> dense_;  // correlation id -> model id, once renumbering
};

// ---- opening ----

namespace {

// The first non-blank byte of the (inflated) content.
char FirstByte(Source* src) {
  char buf[512];
  size_t n;
  while ((n = src->Read(buf, sizeof buf)) > 0) {
    for (size_t i = 0; i < n; ++i) {
      unsigned char c = static_cast<unsigned char>(buf[i]);
      if (c == 0xEF || c == 0xBB || c == 0xBF) continue;  // a UTF-8 byte-order mark
      if (!absl::ascii_isspace(c)) return static_cast<char>(c);
    }
  }
  return '\0';
}

}  // namespace

bool LooksLikeJson(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  GzFileSource src(f);
  char c = FirstByte(&src);
  return c == '{' || c == '[';
}

bool HeadLooksLikeJson(absl::string_view head) {
  const std::string bytes(head);  // a gzip head inflates as far as it goes
  BufferSource src(bytes);
  char c = FirstByte(&src);
  return c == '{' || c == '[';
}

bool LooksLikeKinetoTrace(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  GzFileSource src(f);
  std::string head(1 << 20, '\0');
  size_t n = 0, got;
  while (n < head.size() && (got = src.Read(head.data() + n, head.size() - n)) > 0) n += got;
  head.resize(n);
  const size_t first = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  return first != std::string::npos && head[first] == '{' && head.find("\"traceEvents\"") != std::string::npos;
}

KinetoTrace::~KinetoTrace() = default;

namespace {

absl::StatusOr<std::unique_ptr<KinetoTrace>> Bad(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
}

}  // namespace

absl::StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  return FromFd(fd, path);
}

absl::StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::FromFd(int fd, const std::string& path,
                                                                 const Progress& progress) {
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0;
  gzFile f = gzdopen(fd, "rb");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(err)));
  }
  GzFileSource src(f, progress);
  std::unique_ptr<KinetoTrace> t(new KinetoTrace());
  t->path_ = path;
  if (sized) t->file_bytes_ = static_cast<uint64_t>(st.st_size);
  Parser parser(t.get());
  JsonStream in(&src);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseNanAndInfFlag;
  rapidjson::ParseResult r = reader.Parse<kFlags>(in, parser);
  if (r.IsError()) {
    const bool cut = in.at_end();
    const std::string where =
        cut ? absl::StrCat("the JSON ends early (", src.error().empty() ? "cut" : src.error(), ") after ",
                           r.Offset(), " bytes")
            : absl::StrCat("invalid JSON at byte ", r.Offset(), " (", rapidjson::GetParseError_En(r.Code()), ")");
    if (!parser.saw_events() || t->activities_.empty()) {
      return Bad(path, absl::StrCat(parser.saw_events() ? "" : "not a PyTorch profiler trace: ", where));
    }
    t->damage_ = absl::StrCat(path, ": ", where, ": analysed the ", t->counts_.events, " events before it");
  }
  t->info_.pid = parser.host_pid_;
  t->base_time_ns_ = parser.base_time_ns_;
  t->world_size_ = parser.world_size_;
  if (!parser.saw_events()) return Bad(path, "not a PyTorch profiler trace (JSON without traceEvents)");
  if (absl::Status s = t->Finish(); !s.ok()) return s;
  return t;
}

absl::StatusOr<std::unique_ptr<KinetoTrace>> KinetoTrace::FromBuffer(const std::string& bytes,
                                                                     const std::string& name) {
  // Through a file would be simpler but tests and fuzzers run without one: parse the same way.
  BufferSource src(bytes);
  std::unique_ptr<KinetoTrace> t(new KinetoTrace());
  t->path_ = name;
  t->file_bytes_ = bytes.size();
  Parser parser(t.get());
  JsonStream in(&src);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseNanAndInfFlag;
  rapidjson::ParseResult r = reader.Parse<kFlags>(in, parser);
  if (r.IsError()) {
    if (!parser.saw_events() || t->activities_.empty())
      return Bad(name, absl::StrCat("not a PyTorch profiler trace: invalid JSON at byte ", r.Offset(), " (",
                                    rapidjson::GetParseError_En(r.Code()), ")"));
    t->damage_ = absl::StrCat(name, ": the JSON ends early or is damaged after ", r.Offset(),
                              " bytes: analysed the ", t->counts_.events, " events before it");
  }
  t->info_.pid = parser.host_pid_;
  t->base_time_ns_ = parser.base_time_ns_;
  t->world_size_ = parser.world_size_;
  if (!parser.saw_events()) return Bad(name, "not a PyTorch profiler trace (JSON without traceEvents)");
  if (absl::Status s = t->Finish(); !s.ok()) return s;
  return t;
}

absl::Status KinetoTrace::Finish() {
  if (activities_.empty() && counts_.bad_times > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": ", counts_.bad_times,
        " events have timestamps too large for microseconds (nanoseconds?): they are not microseconds, a Chrome "
        "trace's unit"));
  }
  if (activities_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": a Chrome trace without GPU events (no kernel, memcpy or memset): nothing to analyse"));
  }
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  std::stable_sort(calls_.begin(), calls_.end(), by_start);
  std::stable_sort(activities_.begin(), activities_.end(),
                   [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
  // One stray event (a damaged or hand-edited file, a timestamp in other units) must not reject
  // the trace nor size the analysis' time bins: as the .gstrace importer does
  // (model/importer.cc), events more than 14 days from the trace are dropped and counted. The
  // trace is where its GPU work is densest: the 14 days from an activity's start that hold the
  // most activities, with a day of slack before (its calls and ops precede the work a little).
  size_t first = 0, most = 0;
  for (size_t i = 0, j = 0; i < activities_.size(); ++i) {
    while (j < activities_.size() && activities_[j].start_ns - activities_[i].start_ns <= kMaxTraceSpanNs) ++j;
    if (j - i > most) most = j - i, first = i;
  }
  const TimeNs keep_lo = activities_[first].start_ns - kDayNs;
  const TimeNs keep_hi = activities_[first].start_ns + kMaxTraceSpanNs;
  auto outside = [keep_lo, keep_hi](TimeNs t) { return t < keep_lo || t > keep_hi; };
  const size_t before = activities_.size() + calls_.size() + ranges_.size();
  activities_.erase(std::remove_if(activities_.begin(), activities_.end(),
                                   [&](const GpuActivity& a) { return outside(a.start_ns); }),
                    activities_.end());
  calls_.erase(std::remove_if(calls_.begin(), calls_.end(), [&](const Call& c) { return outside(c.start); }),
               calls_.end());
  ranges_.erase(std::remove_if(ranges_.begin(), ranges_.end(), [&](const HostRange& r) { return outside(r.start); }),
                ranges_.end());
  info_.profiler_steps.erase(
      std::remove_if(info_.profiler_steps.begin(), info_.profiler_steps.end(),
                     [&](const ProfilerStep& p) { return outside(p.start_ns); }),
      info_.profiler_steps.end());
  counts_.dropped += before - (activities_.size() + calls_.size() + ranges_.size());
  if (const uint64_t dropped = counts_.dropped + counts_.bad_times; dropped > 0) {
    info_.losses.other_dropped += dropped;
    absl::StrAppend(&damage_, damage_.empty() ? absl::StrCat(path_, ": ") : "; ", dropped,
                    dropped == 1 ? " event" : " events",
                    " dropped: times that cannot be real (more than 14 days from the trace's GPU work, lasting "
                    "over 7 days or less than none, or too large for microseconds); analysed the rest");
  }
  TimeNs lo = activities_.front().start_ns;
  if (!calls_.empty()) lo = std::min(lo, calls_.front().start);
  // Outer ranges first at equal starts: nesting is by (thread, start, longest first).
  std::sort(ranges_.begin(), ranges_.end(), [](const HostRange& a, const HostRange& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;
  });
  info_.path = path_;
  // What the report's trace line says: the dialect, the steps, the job, and when (absolute time:
  // baseTimeNanoseconds + ts, or ts itself where Kineto wrote epoch microseconds).
  info_.capture_mode = absl::StrCat("PyTorch profiler (Kineto JSON, ",
                                    counts_.legacy_dialect ? "PyTorch 1.8-1.10" : "PyTorch 2.x", " categories",
                                    counts_.steps ? absl::StrCat(", ", counts_.steps, " profiler steps") : "", ")");
  if (info_.rank && world_size_ > 0) absl::StrAppend(&info_.capture_mode, ", rank ", *info_.rank, " of ", world_size_);
  if (world_size_ > 0 && world_size_ <= std::numeric_limits<int32_t>::max())
    info_.world_size = static_cast<int32_t>(world_size_);
  constexpr TimeNs kYear2001Ns = 978'307'200'000'000'000;
  TimeNs start_ns = 0;
  const bool wall = !__builtin_add_overflow(base_time_ns_, lo, &start_ns) && start_ns >= kYear2001Ns;
  // The wall clock ranks are aligned by: baseTimeNanoseconds + ts, or ts itself where it is epoch
  // time; neither (relative ts without a base) is a clock of the trace's own.
  if (wall) {
    info_.wall_clock = base_time_ns_ > 0 ? WallClock::kBaseTime : WallClock::kEpoch;
    info_.wall_ns_at_zero = base_time_ns_;
  }
  if (wall) {
    const time_t secs = static_cast<time_t>(start_ns / 1'000'000'000);
    struct tm tm {};
    char when[32];
    if (gmtime_r(&secs, &tm) != nullptr && std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm) > 0)
      absl::StrAppend(&info_.capture_mode, ", started ", when);
  }
  info_.native_stacks = false;
  info_.sampling = false;
  std::sort(info_.devices.begin(), info_.devices.end(),
            [](const DeviceDescription& a, const DeviceDescription& b) { return a.index < b.index; });
  return absl::OkStatus();
}

// ---- delivering ----

absl::Status KinetoTrace::ReadAll(RecordSink* sink) {
  if (read_) return absl::FailedPreconditionError(absl::StrCat(path_, ": read twice"));
  read_ = true;

  // 1. Stacks from the nesting on each thread: change points (time, stack id), per thread.
  absl::flat_hash_map<uint64_t, uint32_t> stack_ids;  // (parent << 32 | frame) -> stack
  std::vector<std::vector<uint32_t>> stack_frames(1);  // by id; 0: none
  auto stack_of = [&](uint32_t parent, uint32_t frame) {
    auto [it, added] = stack_ids.try_emplace((uint64_t{parent} << 32) | frame, 0);
    if (added) {
      it->second = static_cast<uint32_t>(stack_frames.size());
      std::vector<uint32_t> frames{frame};
      frames.insert(frames.end(), stack_frames[parent].begin(), stack_frames[parent].end());
      tables_.SetStack(it->second, frames);
      stack_frames.push_back(std::move(frames));
    }
    return it->second;
  };
  struct Change {
    TimeNs t;
    uint32_t stack;
  };
  absl::flat_hash_map<uint64_t, std::vector<Change>> changes;
  for (size_t i = 0; i < ranges_.size();) {
    const uint64_t tid = ranges_[i].tid;
    std::vector<Change>& out = changes[tid];
    auto change = [&out](TimeNs t, uint32_t s) {
      if (!out.empty() && out.back().t == t) out.back().stack = s;
      else if (out.empty() || out.back().stack != s) out.push_back({t, s});
    };
    struct Open {
      TimeNs end;
      uint32_t stack;
    };
    std::vector<Open> open;
    for (; i < ranges_.size() && ranges_[i].tid == tid; ++i) {
      const HostRange& r = ranges_[i];
      while (!open.empty() && open.back().end <= r.start) {
        TimeNs t = open.back().end;
        open.pop_back();
        change(t, open.empty() ? 0 : open.back().stack);
      }
      TimeNs end = open.empty() ? r.end : std::min(r.end, open.back().end);  // overlap: clip
      uint32_t s = stack_of(open.empty() ? 0 : open.back().stack, r.frame);
      change(r.start, s);
      open.push_back({end, s});
    }
    while (!open.empty()) {
      TimeNs t = open.back().end;
      open.pop_back();
      change(t, open.empty() ? 0 : open.back().stack);
    }
  }
  std::vector<HostRange>().swap(ranges_);
  auto stack_at = [&changes](uint64_t tid, TimeNs t) -> uint32_t {
    auto it = changes.find(tid);
    if (it == changes.end()) return 0;
    const std::vector<Change>& c = it->second;
    auto u = std::upper_bound(c.begin(), c.end(), t, [](TimeNs x, const Change& y) { return x < y.t; });
    return u == c.begin() ? 0 : std::prev(u)->stack;
  };

  // 2. Samples on the threads that call CUDA: two per stretch of constant nesting (its start and
  // its end), so that the nearest-sample rule charges each instant to the nesting open then; one
  // every 50 ms inside long stretches (a sample stands for at most 100 ms each way).
  absl::flat_hash_set<uint64_t> calling;
  for (const Call& c : calls_) calling.insert(c.tid);
  std::vector<Sample> samples;
  constexpr TimeNs kStride = 50'000'000;
  for (uint64_t tid : calling) {
    auto it = changes.find(tid);
    if (it == changes.end() || it->second.empty()) continue;
    const std::vector<Change>& c = it->second;
    samples.push_back({c.front().t - 1, tid, 0, 0});  // before the first op: no stack
    for (size_t k = 0; k < c.size(); ++k) {
      samples.push_back({c[k].t, tid, c[k].stack, 0});
      if (k + 1 == c.size()) break;
      for (TimeNs t = c[k].t + kStride; t < c[k + 1].t - kStride / 2; t += kStride)
        samples.push_back({t, tid, c[k].stack, 0});
      samples.push_back({c[k + 1].t, tid, c[k].stack, 0});
    }
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.time_ns < b.time_ns; });
  counts_.samples = samples.size();

  // 3. The calls: class from the name, copy/stream/device from their device work.
  // A synchronisation's record (cuda_sync: "Stream Sync", "Stream Wait Event", "Event Sync",
  // "Context Sync") shares its call's correlation id and is the only record that names the stream
  // and device of cudaStreamSynchronize / cudaStreamWaitEvent: calls take those two from it, but
  // never the identity of launched work (bytes, copy kind), which it is not.
  absl::flat_hash_map<uint32_t, uint32_t> by_correlation;  // correlation -> activities_ index
  absl::flat_hash_map<uint32_t, uint32_t> sync_by_correlation;
  for (size_t i = 0; i < activities_.size(); ++i) {
    if (activities_[i].correlation == 0) continue;
    (activities_[i].kind == ActivityKind::kSync ? sync_by_correlation : by_correlation)
        .try_emplace(activities_[i].correlation, static_cast<uint32_t>(i));
  }
  uint32_t default_device = activities_.front().device;
  absl::flat_hash_map<uint32_t, ApiNameClass> classes;
  auto to_call = [&](const Call& c) {
    ApiCall a;
    a.enter_ns = c.start;
    a.exit_ns = c.end;
    a.thread = c.tid;
    a.correlation = c.correlation;
    a.function = c.function;
    a.stack = stack_at(c.tid, c.start);
    auto cls = classes.find(c.function);
    if (cls == classes.end()) cls = classes.emplace(c.function, ClassifyApiName(tables_.FunctionName(c.function))).first;
    a.api_class = cls->second.api_class;
    a.async = cls->second.async;
    a.device = default_device;
    if (c.correlation != 0) {
      if (auto w = by_correlation.find(c.correlation); w != by_correlation.end()) {
        const GpuActivity& g = activities_[w->second];
        a.device = g.device;
        a.stream = g.stream;
        a.bytes = g.bytes;
        if (a.api_class == ApiClass::kMemcpy) {
          a.direction = g.direction;
          a.src_kind = g.src_kind;
          a.dst_kind = g.dst_kind;
        }
      } else if (auto y = sync_by_correlation.find(c.correlation); y != sync_by_correlation.end()) {
        const GpuActivity& g = activities_[y->second];
        a.device = g.device;
        if (g.stream != kNoStream) a.stream = g.stream;  // a context sync has none
      }
    }
    return a;
  };

  // 4. Everything in time order (calls before the work they launched, at equal times).
  size_t ci = 0, ai = 0, si = 0;
  while (ci < calls_.size() || ai < activities_.size() || si < samples.size()) {
    const TimeNs tc = ci < calls_.size() ? calls_[ci].start : std::numeric_limits<TimeNs>::max();
    const TimeNs ta = ai < activities_.size() ? activities_[ai].start_ns : std::numeric_limits<TimeNs>::max();
    const TimeNs ts = si < samples.size() ? samples[si].time_ns : std::numeric_limits<TimeNs>::max();
    if (ts <= tc && ts <= ta) {
      sink->OnSample(samples[si++]);
    } else if (tc <= ta) {
      ApiCall call = to_call(calls_[ci]);
      call.sequence = static_cast<uint32_t>(ci++);
      sink->OnApiCall(call);
    } else {
      sink->OnActivity(activities_[ai++]);
    }
  }
  return absl::OkStatus();
}

}  // namespace gs::analyzer::kineto
