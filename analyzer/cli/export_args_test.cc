// ParseArgs for the `export` and `diff` subcommands.
#include "analyzer/cli/args.h"
#include "gtest/gtest.h"

namespace gs::analyzer::cli {
namespace {

TEST(ExportArgsTest, ExportTakesOutputsAndOneTrace) {
  absl::StatusOr<CliArgs> a = ParseArgs({"export", "--chrome", "t.json", "--collapsed=f.txt", "x.gstrace"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->command, Subcommand::kExport);
  EXPECT_EQ(a->chrome_out, "t.json");
  EXPECT_EQ(a->collapsed_out, "f.txt");
  EXPECT_EQ(a->traces, std::vector<std::string>{"x.gstrace"});
  EXPECT_FALSE(ParseArgs({"export", "x.gstrace"}).ok());                         // no output
  EXPECT_FALSE(ParseArgs({"export", "--chrome", "t.json", "a", "b"}).ok());      // two traces
  EXPECT_FALSE(ParseArgs({"export", "--chrome"}).ok());                          // no value
  EXPECT_FALSE(ParseArgs({"export", "--json", "--chrome", "t.json", "a"}).ok()); // report's flag
}

TEST(ExportArgsTest, KinetoIsAnOutputOfItsOwn) {
  absl::StatusOr<CliArgs> a = ParseArgs({"export", "--kineto=k.json", "x.gstrace"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->kineto_out, "k.json");
  EXPECT_TRUE(a->chrome_out.empty());
  EXPECT_FALSE(ParseArgs({"export", "--kineto"}).ok());                       // no value
  EXPECT_FALSE(ParseArgs({"report", "--kineto", "k.json", "x.gstrace"}).ok());  // export's flag
}

TEST(ExportArgsTest, DiffSplitsBeforeAndAfter) {
  absl::StatusOr<CliArgs> a = ParseArgs({"diff", "before.gstrace", "after.gstrace", "--json"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->command, Subcommand::kDiff);
  EXPECT_EQ(a->traces, std::vector<std::string>{"before.gstrace"});
  EXPECT_EQ(a->after_traces, std::vector<std::string>{"after.gstrace"});
  EXPECT_EQ(a->format, "json");

  a = ParseArgs({"diff", "b1", "b2", "--", "a1"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->traces, (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(a->after_traces, std::vector<std::string>{"a1"});
  EXPECT_EQ(a->format, "text");

  EXPECT_FALSE(ParseArgs({"diff", "only_one"}).ok());
  EXPECT_FALSE(ParseArgs({"diff", "a", "b", "c"}).ok());   // ambiguous without "--"
  EXPECT_FALSE(ParseArgs({"diff", "--", "a"}).ok());
  EXPECT_FALSE(ParseArgs({"diff", "a", "--", "b", "--", "c"}).ok());
}

}  // namespace
}  // namespace gs::analyzer::cli
