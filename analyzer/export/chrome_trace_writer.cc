#include "analyzer/export/chrome_trace_writer.h"

#include "absl/strings/str_cat.h"
#include "analyzer/json/json_value.h"

namespace gs::analyzer {

std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  Json::AppendQuoted(s, &out);
  return out;
}

ChromeTraceWriter::ChromeTraceWriter(std::ostream* out, std::string_view leading_members) : out_(*out) {
  out_ << "{" << leading_members << (leading_members.empty() ? "" : ",") << "\"traceEvents\":[";
}

void ChromeTraceWriter::Begin() {
  event_ += events_ == 0 ? "\n" : ",\n";
  ++events_;
}

void ChromeTraceWriter::End() {
  // Events go out in pieces of at least this size: the stream then writes them without copying
  // them into its own buffer first.
  constexpr size_t kWriteBytes = 64 * 1024;
  if (event_.size() >= kWriteBytes) Write();
}

void ChromeTraceWriter::Write() {
  out_.write(event_.data(), static_cast<std::streamsize>(event_.size()));
  event_.clear();
}

void ChromeTraceWriter::AppendMicros(int64_t ns) {
  if (ns < 0) event_.push_back('-');
  const uint64_t a = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const auto fraction = static_cast<unsigned>(a % 1000);
  absl::StrAppend(&event_, a / 1000);
  const char digits[4] = {'.', static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                          static_cast<char>('0' + fraction % 10)};
  event_.append(digits, sizeof(digits));
}

void ChromeTraceWriter::ProcessName(int64_t pid, std::string_view name) {
  Begin();
  absl::StrAppend(&event_, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":", pid,
                  ",\"tid\":0,\"args\":{\"name\":");
  Json::AppendQuoted(name, &event_);
  event_ += "}}";
  End();
}

void ChromeTraceWriter::ThreadName(int64_t pid, int64_t tid, std::string_view name) {
  Begin();
  absl::StrAppend(&event_, "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":", pid, ",\"tid\":", tid,
                  ",\"args\":{\"name\":");
  Json::AppendQuoted(name, &event_);
  event_ += "}}";
  End();
}

void ChromeTraceWriter::ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) {
  Begin();
  absl::StrAppend(&event_, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":", pid, ",\"tid\":", tid,
                  ",\"args\":{\"sort_index\":", index, "}}");
  End();
}

void ChromeTraceWriter::ProcessSortIndex(int64_t pid, int64_t index) {
  Begin();
  absl::StrAppend(&event_, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":", pid,
                  ",\"tid\":0,\"args\":{\"sort_index\":", index, "}}");
  End();
}

void ChromeTraceWriter::Complete(int64_t pid, int64_t tid, int64_t ts_ns, int64_t dur_ns,
                                 std::string_view name, std::string_view category,
                                 std::string_view args_json) {
  Begin();
  event_ += "{\"name\":";
  Json::AppendQuoted(name, &event_);
  event_ += ",\"cat\":";
  Json::AppendQuoted(category, &event_);
  event_ += ",\"ph\":\"X\",\"ts\":";
  AppendMicros(ts_ns - origin_ns_);
  event_ += ",\"dur\":";
  AppendMicros(dur_ns);
  absl::StrAppend(&event_, ",\"pid\":", pid, ",\"tid\":", tid);
  if (!args_json.empty()) event_.append(",\"args\":").append(args_json);
  event_ += "}";
  End();
}

void ChromeTraceWriter::Counter(int64_t pid, int64_t ts_ns, std::string_view name, std::string_view args_json) {
  Begin();
  event_ += "{\"name\":";
  Json::AppendQuoted(name, &event_);
  event_ += ",\"ph\":\"C\",\"ts\":";
  AppendMicros(ts_ns - origin_ns_);
  absl::StrAppend(&event_, ",\"pid\":", pid, ",\"tid\":0,\"args\":");
  event_.append(args_json).push_back('}');
  End();
}

void ChromeTraceWriter::Flow(uint64_t id, int64_t pid_s, int64_t tid_s, int64_t ts_s_ns, int64_t pid_f,
                             int64_t tid_f, int64_t ts_f_ns, std::string_view name, std::string_view category) {
  for (const bool start : {true, false}) {
    Begin();
    event_ += "{\"name\":";
    Json::AppendQuoted(name, &event_);
    event_ += ",\"cat\":";
    Json::AppendQuoted(category, &event_);
    absl::StrAppend(&event_, start ? ",\"ph\":\"s\",\"id\":" : ",\"ph\":\"f\",\"bp\":\"e\",\"id\":", id, ",\"ts\":");
    AppendMicros((start ? ts_s_ns : ts_f_ns) - origin_ns_);
    absl::StrAppend(&event_, ",\"pid\":", start ? pid_s : pid_f, ",\"tid\":", start ? tid_s : tid_f, "}");
    End();
  }
}

bool ChromeTraceWriter::Close(std::string_view trailing_members) {
  if (!closed_) {
    Write();
    out_ << "\n]" << (trailing_members.empty() ? "" : ",") << trailing_members << "}\n";
    out_.flush();
    closed_ = true;
  }
  return static_cast<bool>(out_);
}

}  // namespace gs::analyzer
