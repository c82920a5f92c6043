#include "agent/core/config/config.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

using ::testing::HasSubstr;

// The environment a test hands to ParseConfig.
std::map<std::string, std::string>* g_env = nullptr;
const char* FakeEnv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

ConfigResult Parse(std::map<std::string, std::string> env) {
  g_env = &env;
  ConfigResult result = ParseConfig(&FakeEnv);
  g_env = nullptr;
  return result;
}

TEST(ConfigTest, DefaultsParse) {
  const ConfigResult r = Parse({});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.output, "./gpustall-%h-%p.gstrace");
  EXPECT_TRUE(r.config.enable);
  EXPECT_FALSE(r.config.disable);
  EXPECT_TRUE(r.config.recording_wanted());
  EXPECT_EQ(r.config.stacks, StackMode::kUnwind);
  EXPECT_EQ(r.config.stack_depth, 32);
  EXPECT_EQ(r.config.buffer_mb, 64);
  EXPECT_EQ(r.config.flush_ms, 100);
  EXPECT_EQ(r.config.cupti, CuptiMode::kAuto);
  EXPECT_EQ(r.config.cupti_library, "");
  EXPECT_EQ(r.config.log, LogLevel::kWarn);
  EXPECT_FALSE(r.config.on_demand);
  EXPECT_FALSE(r.config.job.rank.has_value());
}

TEST(ConfigTest, ValuesAreRead) {
  const ConfigResult r = Parse({{"GS_OUTPUT", "/tmp/t-%r-%p.gstrace"},
                                {"GS_STACKS", "fp"},
                                {"GS_STACK_DEPTH", "128"},
                                {"GS_BUFFER_MB", "8"},
                                {"GS_FLUSH_MS", "250"},
                                {"GS_CUPTI", "off"},
                                {"GS_CUPTI_LIBRARY", "/opt/cupti/libcupti.so.13"},
                                {"GS_LOG", "debug"},
                                {"GS_ON_DEMAND", "yes"}});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config.output, "/tmp/t-%r-%p.gstrace");
  EXPECT_EQ(r.config.stacks, StackMode::kFramePointer);
  EXPECT_EQ(r.config.stack_depth, 128);
  EXPECT_EQ(r.config.buffer_mb, 8);
  EXPECT_EQ(r.config.flush_ms, 250);
  EXPECT_EQ(r.config.cupti, CuptiMode::kOff);
  EXPECT_EQ(r.config.cupti_library, "/opt/cupti/libcupti.so.13");
  EXPECT_EQ(r.config.log, LogLevel::kDebug);
  EXPECT_TRUE(r.config.on_demand);
}

TEST(ConfigTest, BadIntegerGivesOneLineNamingTheVariable) {
  const ConfigResult r = Parse({{"GS_STACK_DEPTH", "abc"}});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "GS_STACK_DEPTH=\"abc\": expected an integer 1..128; profiling disabled");
}

TEST(ConfigTest, IntegerRangeIsEnforced) {
  EXPECT_FALSE(Parse({{"GS_STACK_DEPTH", "0"}}).ok());
  EXPECT_FALSE(Parse({{"GS_STACK_DEPTH", "129"}}).ok());
  EXPECT_FALSE(Parse({{"GS_STACK_DEPTH", "12x"}}).ok());
  EXPECT_FALSE(Parse({{"GS_STACK_DEPTH", "99999999999999999999"}}).ok());
  EXPECT_FALSE(Parse({{"GS_BUFFER_MB", "-1"}}).ok());
  EXPECT_TRUE(Parse({{"GS_STACK_DEPTH", "1"}}).ok());
  EXPECT_EQ(Parse({{"GS_FLUSH_MS", "5"}}).error,
            "GS_FLUSH_MS=\"5\": expected an integer 10..60000; profiling disabled");
}

TEST(ConfigTest, EnumListsTheAcceptedWords) {
  EXPECT_EQ(Parse({{"GS_STACKS", "dwarf"}}).error,
            "GS_STACKS=\"dwarf\": expected one of none|fp|unwind; profiling disabled");
  EXPECT_EQ(Parse({{"GS_STACKS", "none"}}).config.stacks, StackMode::kNone);
  EXPECT_EQ(Parse({{"GS_LOG", "quiet"}}).config.log, LogLevel::kQuiet);
  EXPECT_FALSE(Parse({{"GS_CUPTI", "on"}}).ok());
}

TEST(ConfigTest, BooleansAcceptCommonSpellings) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "on"})
    EXPECT_TRUE(Parse({{"GS_DISABLE", yes}}).config.disable) << yes;
  for (const char* no : {"0", "false", "No", "off"}) EXPECT_FALSE(Parse({{"GS_DISABLE", no}}).config.disable) << no;
  EXPECT_EQ(Parse({{"GS_ENABLE", "maybe"}}).error,
            "GS_ENABLE=\"maybe\": expected 1|0|true|false|yes|no|on|off; profiling disabled");
}

TEST(ConfigTest, OffSwitches) {
  EXPECT_FALSE(Parse({{"GS_ENABLE", "0"}}).config.recording_wanted());
  EXPECT_FALSE(Parse({{"GS_DISABLE", "1"}}).config.recording_wanted());
}

TEST(ConfigTest, EmptyValueMeansDefault) {
  const ConfigResult r = Parse({{"GS_STACK_DEPTH", ""}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.stack_depth, 32);
}

TEST(ConfigTest, OutputPatternEscapesAreChecked) {
  EXPECT_TRUE(Parse({{"GS_OUTPUT", "run-%h-%p-%r-%t-100%%.gstrace"}}).ok());
  EXPECT_THAT(Parse({{"GS_OUTPUT", "run-%x.gstrace"}}).error,
              HasSubstr("GS_OUTPUT=\"run-%x.gstrace\": expected a folder or a file pattern"));
  EXPECT_FALSE(Parse({{"GS_OUTPUT", "trailing%"}}).ok());
}

TEST(ConfigTest, OverlongAndUnprintableValuesAreRefusedAndQuotedSafely) {
  const ConfigResult r = Parse({{"GS_OUTPUT", std::string(kMaxSettingLength + 1, 'a')}});
  EXPECT_THAT(r.error, HasSubstr("longer than 4096 bytes; profiling disabled"));
  EXPECT_LT(r.error.size(), 200u);  // one readable line, not the whole value
  const ConfigResult odd = Parse({{"GS_STACKS", "f\np"}});
  EXPECT_EQ(odd.error, "GS_STACKS=\"f\\x0ap\": expected one of none|fp|unwind; profiling disabled");
}

TEST(ConfigTest, FirstBadValueWinsAndDefaultsRemain) {
  const ConfigResult r = Parse({{"GS_STACK_DEPTH", "x"}, {"GS_BUFFER_MB", "y"}});
  EXPECT_THAT(r.error, HasSubstr("GS_STACK_DEPTH"));
  EXPECT_EQ(r.config.buffer_mb, 64);
}

TEST(ConfigTest, JobPlacementFromLauncherVariables) {
  const ConfigResult r = Parse({{"SLURM_PROCID", "7"}, {"LOCAL_RANK", "3"}, {"WORLD_SIZE", "16"}, {"SLURM_JOB_ID", "42"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.job.rank, 7);
  EXPECT_EQ(r.config.job.local_rank, 3);
  EXPECT_EQ(r.config.job.world_size, 16);
  EXPECT_EQ(r.config.job.job_id, "42");
  // RANK (torchrun) wins over SLURM_PROCID; junk is ignored rather than fatal.
  EXPECT_EQ(Parse({{"RANK", "2"}, {"SLURM_PROCID", "7"}}).config.job.rank, 2);
  EXPECT_FALSE(Parse({{"RANK", "two"}}).config.job.rank.has_value());
}

TEST(ConfigTest, DescribeListsEverySettingWithoutPrefix) {
  ConfigResult r = Parse({{"GS_STACKS", "fp"}});
  const auto described = DescribeConfig(r.config);
  std::map<std::string, std::string> m(described.begin(), described.end());
  EXPECT_EQ(m["STACKS"], "fp");
  EXPECT_EQ(m["STACK_DEPTH"], "32");
  EXPECT_EQ(m["ENABLE"], "1");
  // One entry per row of config_table.h (counted from the table, so adding a row needs no edit).
#define GS_COUNT_SETTING(...) +1
  EXPECT_EQ(m.size(), size_t{0 GS_CONFIG_SETTINGS(GS_COUNT_SETTING)});
#undef GS_COUNT_SETTING
}

TEST(ConfigTest, MarkdownTableHasARowPerSetting) {
  const std::string table = ConfigMarkdownTable();
  for (const char* name : {"GS_OUTPUT", "GS_ENABLE", "GS_DISABLE", "GS_STACKS", "GS_STACK_DEPTH", "GS_BUFFER_MB",
                           "GS_FLUSH_MS", "GS_CUPTI", "GS_CUPTI_LIBRARY", "GS_LOG", "GS_ON_DEMAND"})
    EXPECT_THAT(table, HasSubstr(std::string("| `") + name + "` |"));
  EXPECT_THAT(table, HasSubstr("| `GS_STACK_DEPTH` | `32` | 1–128 |"));
}

// The settings' security checks: paths that would make the agent write outside its
// output location or load code it was not told about are refused with one line naming the
// variable and the reason; sane paths are accepted.
TEST(ConfigSecurityTest, OutputWithDotDotComponentIsRefused) {
  for (const char* value : {"../t.gstrace", "out/../../etc/", "/tmp/a/..", "..", "a/../b-%p.gstrace"}) {
    const ConfigResult r = Parse({{"GS_OUTPUT", value}});
    ASSERT_FALSE(r.ok()) << value;
    EXPECT_THAT(r.error, HasSubstr("GS_OUTPUT="));
    EXPECT_THAT(r.error, HasSubstr("'..' is not allowed"));
    EXPECT_THAT(r.error, HasSubstr("profiling disabled"));
  }
}

TEST(ConfigSecurityTest, OutputWithDotsInNamesIsAccepted) {
  for (const char* value : {"./t.gstrace", "a..b/", "/tmp/x.../t-%p.gstrace", "traces/", ".hidden/"}) {
    const ConfigResult r = Parse({{"GS_OUTPUT", value}});
    EXPECT_TRUE(r.ok()) << value << ": " << r.error;
  }
}

TEST(ConfigSecurityTest, ControlCharactersInPathsAreRefused) {
  for (const char* var : {"GS_OUTPUT", "GS_CUPTI_LIBRARY"}) {
    const ConfigResult r = Parse({{var, "/tmp/a\nb"}});
    ASSERT_FALSE(r.ok()) << var;
    EXPECT_THAT(r.error, HasSubstr(var));
    EXPECT_THAT(r.error, HasSubstr("\\x0a"));  // shown escaped: the message stays one line
    EXPECT_THAT(r.error, HasSubstr("control characters"));
  }
}

TEST(ConfigSecurityTest, CuptiLibraryMustBeAnAbsolutePath) {
  for (const char* value : {"libcupti.so.13", "./libcupti.so.13", "../lib/libcupti.so"}) {
    const ConfigResult r = Parse({{"GS_CUPTI_LIBRARY", value}});
    ASSERT_FALSE(r.ok()) << value;
    EXPECT_THAT(r.error, HasSubstr("GS_CUPTI_LIBRARY="));
    EXPECT_THAT(r.error, HasSubstr("expected an absolute path"));
  }
  const ConfigResult ok = Parse({{"GS_CUPTI_LIBRARY", "/usr/local/cuda/lib64/libcupti.so.13"}});
  EXPECT_TRUE(ok.ok()) << ok.error;
}

TEST(ConfigSecurityTest, OverLongValuesAreRefusedWithoutEchoingThem) {
  const std::string long_value(kMaxSettingLength + 1, 'a');
  for (const char* var : {"GS_OUTPUT", "GS_CUPTI_LIBRARY", "GS_STACKS", "GS_BUFFER_MB"}) {
    const ConfigResult r = Parse({{var, long_value}});
    ASSERT_FALSE(r.ok()) << var;
    EXPECT_THAT(r.error, HasSubstr("longer than"));
    EXPECT_LT(r.error.size(), 200u) << "the message must not echo the whole value";
  }
  // Exactly at the limit is a length the parser accepts (then judges the value itself).
  const ConfigResult at_limit = Parse({{"GS_OUTPUT", "/" + std::string(kMaxSettingLength - 1, 'a')}});
  EXPECT_TRUE(at_limit.ok()) << at_limit.error;
}

}  // namespace
}  // namespace gs
