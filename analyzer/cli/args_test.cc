#include "analyzer/cli/args.h"

#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

TEST(ArgsTest, ReportWithEveryFlag) {
  auto a = ParseArgs({"report", "a.gstrace", "--json", "--fail-under", "80%", "--width=120", "b.gstrace"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->command, Subcommand::kReport);
  EXPECT_EQ(a->traces, (std::vector<std::string>{"a.gstrace", "b.gstrace"}));
  EXPECT_EQ(a->format, "json");
  ASSERT_TRUE(a->fail_under.has_value());
  EXPECT_DOUBLE_EQ(*a->fail_under, 0.8);
  EXPECT_EQ(a->width, 120);
}

TEST(ArgsTest, UtilizationForms) {
  EXPECT_DOUBLE_EQ(*ParseUtilization("0.8"), 0.8);
  EXPECT_DOUBLE_EQ(*ParseUtilization("80"), 0.8);
  EXPECT_DOUBLE_EQ(*ParseUtilization("80%"), 0.8);
  EXPECT_DOUBLE_EQ(*ParseUtilization("1"), 1.0);
  EXPECT_FALSE(ParseUtilization("150%").ok());
  EXPECT_FALSE(ParseUtilization("-1").ok());
  EXPECT_FALSE(ParseUtilization("most").ok());
}

TEST(ArgsTest, Errors) {
  EXPECT_FALSE(ParseArgs({}).ok());
  EXPECT_FALSE(ParseArgs({"report"}).ok());
  EXPECT_FALSE(ParseArgs({"report", "--width", "3", "t"}).ok());
  EXPECT_FALSE(ParseArgs({"report", "t", "--fail-under"}).ok());
  EXPECT_FALSE(ParseArgs({"report", "t", "--format", "xml"}).ok());
  EXPECT_FALSE(ParseArgs({"dump", "a", "b"}).ok());
  EXPECT_FALSE(ParseArgs({"dump", "a", "--json"}).ok());
  EXPECT_FALSE(ParseArgs({"analyse", "a"}).ok());
}

TEST(ArgsTest, HelpAndDump) {
  EXPECT_EQ(ParseArgs({"--help"})->command, Subcommand::kHelp);
  EXPECT_EQ(ParseArgs({"report", "t", "--help"})->command, Subcommand::kHelp);
  auto d = ParseArgs({"dump", "t.gstrace"});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->command, Subcommand::kDump);
}

}  // namespace
}  // namespace gs::analyzer::cli
