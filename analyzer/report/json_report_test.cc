// The JSON schema (analyzer/JSON.md): required fields, their types, and their invariants.
#include "analyzer/json/json_value.h"
#include "analyzer/report/report.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

using testing::SyntheticTrace;
constexpr TimeNs kUs = 1'000, kMs = 1'000'000;

Analysis Sample() {
  SyntheticTrace t;
  uint32_t s = t.Stack({"load_batch@workload.cc:42", "main@workload.cc:99"});
  TimeNs now = 0;
  for (int i = 0; i < 10; ++i) {
    t.Call(1, ApiClass::kMalloc, now, now + 1 * kMs).bytes = 1 << 20;
    now += 4 * kMs;
    t.Copy(1, now, now + 2 * kMs, now + 1 * kMs, now + 2 * kMs, CopyDirection::kHostToDevice, MemKind::kPageable,
           8 << 20, false, s);
    t.Launch(1, now + 2 * kMs, now + 2 * kMs + 5 * kUs, now + 2 * kMs + 10 * kUs, now + 5 * kMs, s);
    now += 5 * kMs;
  }
  return t.Analyze();
}

TEST(JsonReportTest, RoundTripsAndHasTheDocumentedFields) {
  std::string text = JsonReportFormat().Render(Sample(), ReportOptions());
  absl::StatusOr<Json> parsed = Json::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Json& j = *parsed;
  EXPECT_EQ(j["schema_version"].as_int(), 1);
  for (const char* key : {"losses", "warnings", "traces", "devices", "causes", "host_work_states",
                          "host_work_exact_ns", "intervals", "top_stacks",
                          "stack_tree", "copies", "memory", "recommendations", "notes", "utilization",
                          "kernel_configs"})
    EXPECT_TRUE(j.Has(key)) << key;
  EXPECT_EQ(j["kernel_configs"].size(), 0u);  // the trace gives no launch configurations

  ASSERT_EQ(j["devices"].size(), 1u);
  const Json& d = j["devices"].items()[0];
  for (const char* key : {"wall_ns", "busy_ns", "compute_busy_ns", "copy_busy_ns", "idle_ns", "utilization",
                          "leading_idle_ns", "trailing_idle_ns", "steady_idle_ns", "utilization_samples"})
    EXPECT_TRUE(d.Has(key)) << key;
  EXPECT_EQ(d["idle_ns"].as_int(), d["wall_ns"].as_int() - d["busy_ns"].as_int());
  // Without launch configurations no fill is claimed: null, not 0.
  for (const char* key : {"sm_coverage_busy_ns", "sm_coverage_utilization", "est_occupancy_busy_ns",
                          "est_occupancy_utilization"}) {
    ASSERT_TRUE(d.Has(key)) << key;
    EXPECT_EQ(d[key].type(), Json::Type::kNull) << key;
  }
  EXPECT_GE(d["utilization"].as_double(), 0.0);
  EXPECT_LE(d["utilization"].as_double(), 1.0);

  double shares = 0;
  int64_t idle = 0;
  for (const Json& c : j["causes"].items()) {
    EXPECT_EQ(c["cause"].type(), Json::Type::kString);
    shares += c["share"].as_double();
    idle += c["idle_ns"].as_int();
  }
  EXPECT_EQ(j["causes"].size(), static_cast<size_t>(kNumCauses));
  EXPECT_NEAR(shares, 1.0, 1e-4);
  EXPECT_EQ(idle, j["idle_ns"].as_int());

  const Json& in = j["intervals"];
  EXPECT_EQ(in["count"].as_int(), 19);  // host-late before each copy, launch latency after it
  int64_t hist = 0;
  for (const Json& b : in["histogram"].items()) hist += b["count"].as_int();
  EXPECT_EQ(hist, 19);
  EXPECT_TRUE(in["after_sync"].Has("sites"));

  ASSERT_GE(j["top_stacks"].size(), 1u);
  const Json& s = j["top_stacks"].items()[0];
  const Json& f = s["frames"].items().at(0);
  for (const char* key : {"function", "file", "line", "module"}) EXPECT_TRUE(f.Has(key)) << key;
  EXPECT_EQ(f["function"].as_string(), "load_batch");
  EXPECT_EQ(f["line"].as_int(), 42);
  EXPECT_TRUE(s.Has("cause"));
  EXPECT_GT(s["share"].as_double(), 0.0);

  const Json& c = j["copies"];
  EXPECT_EQ(c["pageable_share"].as_double(), 1.0);
  EXPECT_EQ(c["directions"].items().at(0)["direction"].as_string(), "H2D");
  EXPECT_EQ(j["memory"]["allocations"].as_int(), 10);
  for (const Json& r : j["recommendations"].items()) {
    EXPECT_FALSE(r["kind"].as_string().empty());
    EXPECT_FALSE(r["text"].as_string().empty());
  }
}

TEST(JsonValueTest, EscapesAndParsesStrings) {
  Json j = Json::Object().Set("s", "a\"b\\c\nd\x01").Set("n", int64_t{-12}).Set("d", 0.25);
  absl::StatusOr<Json> back = Json::Parse(j.Dump(0));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)["s"].as_string(), "a\"b\\c\nd\x01");
  EXPECT_EQ((*back)["n"].as_int(), -12);
  EXPECT_DOUBLE_EQ((*back)["d"].as_double(), 0.25);
  EXPECT_FALSE(Json::Parse("{\"a\":").ok());
}

}  // namespace
}  // namespace gs::analyzer
