#include "analyzer/export/export_marker.h"

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "analyzer/export/chrome_trace_writer.h"

namespace gs::analyzer {

namespace {
constexpr std::string_view kPrefix = "{\"otherData\":{\"producer\":\"gsanalyze\",\"source\":";
}  // namespace

std::string ExportMarkerMember(std::string_view source_path) {
  const std::string name = std::filesystem::path(source_path).filename().string();
  // kPrefix without its leading '{': the writer opens the object.
  return absl::StrCat(std::string(kPrefix.substr(1)), JsonQuote(name), "}");
}

std::optional<std::string> ExportedFrom(std::string_view text) {
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = text.substr(kPrefix.size());
  if (rest.empty() || rest[0] != '"') return std::nullopt;
  // The string JsonQuote wrote: \" \\ \n \t \r and \u00XX for the other control bytes.
  std::string name;
  for (size_t i = 1; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '"') return name;
    if (c != '\\') {
      name.push_back(c);
      continue;
    }
    if (++i >= rest.size()) return std::nullopt;
    switch (rest[i]) {
      case 'n': name.push_back('\n'); break;
      case 't': name.push_back('\t'); break;
      case 'r': name.push_back('\r'); break;
      case 'u': {  // only \u00XX: JsonQuote writes nothing else
        if (i + 4 >= rest.size() || rest.substr(i + 1, 2) != "00") return std::nullopt;
        int value = 0;
        for (char h : rest.substr(i + 3, 2)) {
          const int digit = absl::ascii_isdigit(h)    ? h - '0'
                            : absl::ascii_isxdigit(h) ? absl::ascii_tolower(h) - 'a' + 10
                                                      : -1;
          if (digit < 0) return std::nullopt;
          value = value * 16 + digit;
        }
        name.push_back(static_cast<char>(value));
        i += 4;
        break;
      }
      default: name.push_back(rest[i]);
    }
  }
  return std::nullopt;  // the name runs past the text
}

}  // namespace gs::analyzer
