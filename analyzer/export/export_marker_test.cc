// What an export says about its source reads back as written, for any file name; anything else
// (another tool's JSON, a cut or altered marker) is not taken for one.
#include "analyzer/export/export_marker.h"

#include <string>

#include "gtest/gtest.h"

namespace gs::analyzer {
namespace {

// The text a trace-event file starts with: the writer opens the object, then the members.
std::string FileStart(const std::string& source) {
  return "{" + ExportMarkerMember(source) + ",\n\"schemaVersion\":1,\"traceEvents\":[";
}

TEST(ExportMarkerTest, TheSourcesFileNameReadsBack) {
  EXPECT_EQ(ExportedFrom(FileStart("/runs/job 7/r0.gstrace")), "r0.gstrace");
  EXPECT_EQ(ExportedFrom(FileStart("r1.gstrace")), "r1.gstrace");
  // Quotes, backslashes and control bytes in a name survive JsonQuote's escapes.
  const std::string odd = std::string("a \"b\" \\c\td\x01") + ".gstrace";
  EXPECT_EQ(ExportedFrom(FileStart("/x/" + odd)), odd);
}

TEST(ExportMarkerTest, OtherJsonIsNotAnExport) {
  EXPECT_EQ(ExportedFrom(""), std::nullopt);
  EXPECT_EQ(ExportedFrom("{\"schemaVersion\":1,\"traceEvents\":[]}"), std::nullopt);
  EXPECT_EQ(ExportedFrom("{\n  \"schema_version\": 1,"), std::nullopt);  // `report --json`
  // The marker, but from another producer, or not first.
  EXPECT_EQ(ExportedFrom("{\"otherData\":{\"producer\":\"someone\",\"source\":\"r0.gstrace\"}}"), std::nullopt);
  EXPECT_EQ(ExportedFrom("{\"a\":1," + ExportMarkerMember("r0.gstrace") + "}"), std::nullopt);
  // Cut inside the name, or a bad escape: refused, never read past the text.
  const std::string whole = FileStart("r0.gstrace");
  EXPECT_EQ(ExportedFrom(whole.substr(0, whole.find("r0") + 1)), std::nullopt);
  const std::string head = whole.substr(0, whole.find("r0"));
  EXPECT_EQ(ExportedFrom(head + "r\\u00zz\""), std::nullopt);
  EXPECT_EQ(ExportedFrom(head + "r\\u12ab\""), std::nullopt);
  EXPECT_EQ(ExportedFrom(head + "r\\"), std::nullopt);
}

}  // namespace
}  // namespace gs::analyzer
