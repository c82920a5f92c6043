// reliability.config.*: the settings' security checks (agent/config.cc), as values: paths that
// would make the agent write outside its output location or load code it was not told about are
// refused with one line naming the variable and the reason; sane paths are accepted.
#include <map>
#include <string>

#include "agent/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gs {
namespace {

using ::testing::HasSubstr;

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
