#include "analyzer/export/chrome_trace_writer.h"

#include "absl/strings/str_format.h"

namespace gs::analyzer {

namespace {
// ns -> "µs.nnn" (exact; no floating point).
std::string Micros(int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  uint64_t a = ns < 0 ? static_cast<uint64_t>(-ns) : static_cast<uint64_t>(ns);
  return absl::StrFormat("%s%u.%03u", sign, a / 1000, a % 1000);
}
}  // namespace

std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
  return out;
}

ChromeTraceWriter::ChromeTraceWriter(std::ostream* out, std::string_view leading_members) : out_(*out) {
  out_ << "{" << leading_members << (leading_members.empty() ? "" : ",") << "\"traceEvents\":[";
}

void ChromeTraceWriter::Begin() {
  out_ << (events_ == 0 ? "\n" : ",\n");
  ++events_;
}

void ChromeTraceWriter::ProcessName(int64_t pid, std::string_view name) {
  Begin();
  out_ << "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" << pid
       << ",\"tid\":0,\"args\":{\"name\":" << JsonQuote(name) << "}}";
}

void ChromeTraceWriter::ThreadName(int64_t pid, int64_t tid, std::string_view name) {
  Begin();
  out_ << "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":" << pid << ",\"tid\":" << tid
       << ",\"args\":{\"name\":" << JsonQuote(name) << "}}";
}

void ChromeTraceWriter::ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) {
  Begin();
  out_ << "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":" << pid << ",\"tid\":" << tid
       << ",\"args\":{\"sort_index\":" << index << "}}";
}

void ChromeTraceWriter::ProcessSortIndex(int64_t pid, int64_t index) {
  Begin();
  out_ << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":" << pid
       << ",\"tid\":0,\"args\":{\"sort_index\":" << index << "}}";
}

void ChromeTraceWriter::Complete(int64_t pid, int64_t tid, int64_t ts_ns, int64_t dur_ns,
                                 std::string_view name, std::string_view category,
                                 std::string_view args_json) {
  Begin();
  out_ << "{\"name\":" << JsonQuote(name) << ",\"cat\":" << JsonQuote(category)
       << ",\"ph\":\"X\",\"ts\":" << Micros(ts_ns - origin_ns_) << ",\"dur\":" << Micros(dur_ns) << ",\"pid\":" << pid
       << ",\"tid\":" << tid;
  if (!args_json.empty()) out_ << ",\"args\":" << args_json;
  out_ << "}";
}

void ChromeTraceWriter::Counter(int64_t pid, int64_t ts_ns, std::string_view name, std::string_view args_json) {
  Begin();
  out_ << "{\"name\":" << JsonQuote(name) << ",\"ph\":\"C\",\"ts\":" << Micros(ts_ns - origin_ns_)
       << ",\"pid\":" << pid << ",\"tid\":0,\"args\":" << args_json << "}";
}

void ChromeTraceWriter::Flow(uint64_t id, int64_t pid_s, int64_t tid_s, int64_t ts_s_ns, int64_t pid_f,
                             int64_t tid_f, int64_t ts_f_ns, std::string_view name, std::string_view category) {
  const std::string quoted = JsonQuote(name), cat = JsonQuote(category);
  Begin();
  out_ << "{\"name\":" << quoted << ",\"cat\":" << cat << ",\"ph\":\"s\",\"id\":" << id
       << ",\"ts\":" << Micros(ts_s_ns - origin_ns_) << ",\"pid\":" << pid_s << ",\"tid\":" << tid_s << "}";
  Begin();
  out_ << "{\"name\":" << quoted << ",\"cat\":" << cat << ",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << id
       << ",\"ts\":" << Micros(ts_f_ns - origin_ns_) << ",\"pid\":" << pid_f << ",\"tid\":" << tid_f << "}";
}

bool ChromeTraceWriter::Close(std::string_view trailing_members) {
  if (!closed_) {
    out_ << "\n]" << (trailing_members.empty() ? "" : ",") << trailing_members << "}\n";
    out_.flush();
    closed_ = true;
  }
  return static_cast<bool>(out_);
}

}  // namespace gs::analyzer
