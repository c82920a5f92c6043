#include "analyzer/export/chrome_trace_writer.h"

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

// What the Trace Event Format asks of each field, written out by hand: microseconds with exactly
// three decimals (nanoseconds, no floating point), JSON string escapes (RFC 8259 section 7).
TEST(ChromeTraceWriterTest, WritesEachEventWhole) {
  std::ostringstream out;
  ChromeTraceWriter w(&out);
  w.set_time_origin(1000);
  w.ProcessName(7, "pid 7");
  w.Complete(7, 8, 1'235'567, 5, "say \"hi\"\\ now\n\t\r\x01", "cuda_api", "{\"correlation\":3}");
  w.Complete(7, 8, 0, 1'000, "before the origin", "x");
  w.Counter(1'000'000'000, 2'000, "SM coverage", "{\"share\":0.5}");
  w.Flow(42, 7, 8, 1'001, 1'000'000'000, 1, 2'999'999'999'001, "launch", "launch");
  ASSERT_TRUE(w.Close());
  EXPECT_EQ(out.str(),
            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
            "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":7,\"tid\":0,\"args\":{\"name\":\"pid 7\"}},\n"
            "{\"name\":\"say \\\"hi\\\"\\\\ now\\n\\t\\r\\u0001\",\"cat\":\"cuda_api\",\"ph\":\"X\",\"ts\":1234.567,"
            "\"dur\":0.005,\"pid\":7,\"tid\":8,\"args\":{\"correlation\":3}},\n"
            "{\"name\":\"before the origin\",\"cat\":\"x\",\"ph\":\"X\",\"ts\":-1.000,\"dur\":1.000,\"pid\":7,"
            "\"tid\":8},\n"
            "{\"name\":\"SM coverage\",\"ph\":\"C\",\"ts\":1.000,\"pid\":1000000000,\"tid\":0,"
            "\"args\":{\"share\":0.5}},\n"
            "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"s\",\"id\":42,\"ts\":0.001,\"pid\":7,\"tid\":8},\n"
            "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"f\",\"bp\":\"e\",\"id\":42,\"ts\":2999999998.001,"
            "\"pid\":1000000000,\"tid\":1}\n"
            "]}\n");
  EXPECT_EQ(w.events(), 6u);
}

TEST(ChromeTraceWriterTest, QuotesUtf8AsItIsAndTheLowestTimeExactly) {
  EXPECT_EQ(JsonQuote("kernel<float> \xce\xbcs"), "\"kernel<float> \xce\xbcs\"");
  EXPECT_EQ(JsonQuote(""), "\"\"");
  std::ostringstream out;
  ChromeTraceWriter w(&out, "");
  w.Complete(1, 2, std::numeric_limits<int64_t>::min(), 0, "n", "c");
  ASSERT_TRUE(w.Close());
  EXPECT_NE(out.str().find("\"ts\":-9223372036854775.808,\"dur\":0.000"), std::string::npos) << out.str();
}

// Plain bytes are skipped eight at a time: every byte value, at every place of strings of 0 to
// 19 bytes (within a word, across two, in the tail), and next to another byte that needs an
// escape, is quoted as RFC 8259 section 7 says, byte by byte.
TEST(ChromeTraceWriterTest, QuotesEveryByteAtEveryPlaceOfAWord) {
  auto by_hand = [](const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"') out += "\\\"";
      else if (c == '\\') out += "\\\\";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (u < 0x20) out += "\\u00" + std::string(1, "0123456789abcdef"[u >> 4]) + "0123456789abcdef"[u & 15];
      else out += c;
    }
    return out + "\"";
  };
  size_t checked = 0;
  for (size_t length = 0; length < 20; ++length) {
    for (size_t place = 0; place < length; ++place) {
      for (int byte = 0; byte < 256; ++byte) {
        for (const char other : {'a', '"', '\x1f'}) {
          std::string s(length, 'x');
          s[place] = static_cast<char>(byte);
          if (place + 3 < length) s[place + 3] = other;
          ASSERT_EQ(JsonQuote(s), by_hand(s)) << "length " << length << ", byte " << byte << " at " << place;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, size_t{190} * 256 * 3);
  EXPECT_EQ(JsonQuote(std::string(19, 'x')), "\"" + std::string(19, 'x') + "\"");
}

}  // namespace
}  // namespace gs::analyzer
