#include "tests/fuzz/fuzz_entry.h"

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/result/analysis_builder.h"
#include "analyzer/analysis/analyze_traces.h"
#include "analyzer/analysis/trace_analyzer.h"
#include "analyzer/import/kineto/kineto_trace.h"
#include "analyzer/model/importer.h"
#include "analyzer/reader/trace_reader.h"
#include "analyzer/report/report.h"
#include "proto/format.h"
#include "proto/framing.h"
#include "proto/gstrace.pb.h"

namespace gs::fuzz {

namespace pb = gpustall::trace;

namespace {

bool StartsWithMagic(std::string_view input) {
  return input.size() >= sizeof(trace::kMagic) &&
         std::memcmp(input.data(), trace::kMagic, sizeof(trace::kMagic)) == 0;
}

enum class Compression { kNone, kDeflate, kZstd };

// Appends one frame holding `payload`, with correct checksums.
void AppendFrame(trace::FrameType type, std::string_view payload, Compression compression, std::string* out) {
  // A payload above the format's limit cannot be framed; fuzz inputs that large are cut here
  // (libFuzzer's -max_len keeps them far smaller anyway).
  if (payload.size() > trace::kMaxPayloadSize) payload = payload.substr(0, trace::kMaxPayloadSize);
  std::vector<unsigned char> frame(trace::MaxCompressedFrameSize(payload.size()));
  size_t n;
  switch (compression) {
    case Compression::kDeflate:
      n = trace::EncodeCompressedFrame(type, payload.data(), payload.size(), 1, frame.data(), frame.size());
      break;
    case Compression::kZstd:
      n = trace::ZstdFrameEncoder(1).Encode(type, payload.data(), payload.size(), frame.data(), frame.size());
      break;
    default:
      n = trace::EncodeFrame(type, payload.data(), payload.size(), frame.data(), frame.size());
  }
  out->append(reinterpret_cast<const char*>(frame.data()), n);
}

}  // namespace

std::string FuzzInputToTrace(std::string_view input) {
  if (StartsWithMagic(input)) return std::string(input);
  // (absl::StrSplit would do, but this abseil's string_view is not std::string_view.)
  std::vector<std::string_view> segments;
  for (size_t at; (at = input.find(kFuzzFrameSeparator)) != std::string_view::npos;) {
    segments.push_back(input.substr(0, at));
    input.remove_prefix(at + kFuzzFrameSeparator.size());
  }
  segments.push_back(input);
  std::string out(trace::kPreludeSize, '\0');
  trace::EncodePrelude(reinterpret_cast<unsigned char*>(out.data()));

  // The header: whatever the first segment holds, made acceptable (the header checks themselves
  // are exercised by the raw mode; here the point is to get past them).
  pb::TraceHeader header;
  (void)header.MergeFromString(std::string(segments[0]));
  if (header.schema_version() == 0 || header.schema_version() > trace::kSchemaVersion) {
    header.set_schema_version(trace::kSchemaVersion);
  }
  AppendFrame(trace::FrameType::kHeader, header.SerializeAsString(), Compression::kNone, &out);

  for (size_t i = 1; i < segments.size(); ++i) {
    std::string_view s = segments[i];
    const unsigned char how = s.empty() ? 0 : static_cast<unsigned char>(s[0]);
    if (!s.empty()) s.remove_prefix(1);
    const Compression compression = (how & 1)   ? Compression::kDeflate
                                    : (how & 4) ? Compression::kZstd
                                                : Compression::kNone;
    AppendFrame((how & 2) ? trace::FrameType::kEnd : trace::FrameType::kChunk, s, compression, &out);
  }
  return out;
}

std::string TraceToFuzzInput(std::string_view trace_bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(trace_bytes.data());
  const size_t size = trace_bytes.size();
  std::string out;
  bool have_header = false;
  std::string scratch;
  for (size_t pos = trace::kPreludeSize; pos + trace::kFrameHeaderSize <= size;) {
    trace::FrameHeader h;
    if (trace::ParseFrameHeader(data + pos, size - pos, &h) != trace::FrameHeaderStatus::kOk ||
        pos + trace::kFrameHeaderSize + h.stored_size > size) {
      break;
    }
    std::string_view payload;
    std::string error;
    if (trace::DecodePayload(h, data + pos + trace::kFrameHeaderSize, &scratch, &payload, &error)) {
      if (h.type == trace::FrameType::kHeader && !have_header) {
        out.assign(payload);
        have_header = true;
      } else if (h.type != trace::FrameType::kHeader && have_header) {
        out.append(kFuzzFrameSeparator);
        out.push_back(h.type == trace::FrameType::kEnd ? '\x02' : '\x00');
        out.append(payload);
      }
    }
    pos += trace::kFrameHeaderSize + h.stored_size;
  }
  return have_header ? out : std::string();
}

uint64_t ReadEveryRecord(std::string_view input) {
  reader::CollectingReporter damage;
  auto opened = reader::TraceReader::FromBuffer(FuzzInputToTrace(input), &damage, "<fuzz>");
  if (!opened.ok()) return 0;
  reader::TraceReader& r = **opened;
  const reader::InternTables& t = r.tables();
  // Each distinct stack is described once: a hostile file may give one deep stack to every
  // record, and describing it per record would measure this harness, not the reader.
  absl::flat_hash_set<uint32_t> described;
  size_t text = 0;
  const auto stack = [&](uint32_t id) {
    if (described.insert(id).second) text += t.DescribeStack(id, 64).size();
  };
  uint64_t records = 0;
  reader::ChunkEvents ev;
  while (true) {
    absl::StatusOr<bool> more = r.Next(&ev);
    if (!more.ok() || !*more) break;
    records += ev.num_records();
    for (const trace::ApiCallRecord& c : ev.api_calls) {
      text += t.function_name(c.function).size();
      if (const pb::ThreadInfo* th = t.thread(c.thread_id)) text += th->name().size();
      stack(c.stack);
    }
    for (const trace::GpuActivityRecord& a : ev.activities) text += t.string(a.name).size();
    for (const trace::MemoryEventRecord& m : ev.memory_events) stack(m.stack);
    for (const trace::SampleRecord& s : ev.samples) stack(s.stack);
    for (const trace::NvtxRangeRecord& n : ev.nvtx_ranges) {
      text += t.string(n.name).size() + t.string(n.domain).size();
      stack(n.stack);
    }
  }
  // Every damage report must name the offset it is about, inside the file.
  for (const auto& d : damage.damage) {
    if (d.offset > r.stats().file_bytes) __builtin_trap();
  }
  asm volatile("" : : "r"(text));  // the lookups' results are used
  return records;
}

namespace {

// AnalyzeTraces()' per-trace step over one trace in memory (AnalyzeTraces takes files), then both
// reports' sizes.
size_t AnalyzeAndRender(analyzer::TraceImporter* importer) {
  analyzer::AnalysisOptions options;
  // 2^12 correlation slots instead of 2^19: the table is allocated (and, under ASan, poisoned)
  // for every input, which made the fuzzer ~40x slower; fuzz inputs hold far fewer calls, and a
  // small table also exercises slot reuse.
  options.correlation_slots_log2 = 12;
  analyzer::AnalysisBuilder builder(options);
  if (!analyzer::AnalyzeTrace(importer, options, &builder).ok()) return 0;
  const analyzer::Analysis analysis = builder.Build();
  const analyzer::ReportOptions report_options;
  return analyzer::TextReportFormat().Render(analysis, report_options).size() +
         analyzer::JsonReportFormat().Render(analysis, report_options).size();
}

}  // namespace

size_t AnalyzeAndReport(std::string_view input) {
  auto importer = analyzer::TraceImporter::FromBuffer(FuzzInputToTrace(input), "<fuzz>");
  if (!importer.ok()) return 0;
  return AnalyzeAndRender(importer->get());
}

size_t ImportKinetoAndReport(std::string_view input) {
  auto trace = analyzer::kineto::KinetoTrace::FromBuffer(std::string(input), "<fuzz>");
  if (!trace.ok()) return 0;
  std::unique_ptr<analyzer::TraceImporter> importer = analyzer::TraceImporter::FromImported(std::move(*trace));
  return AnalyzeAndRender(importer.get());
}

}  // namespace gs::fuzz
