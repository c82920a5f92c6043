// json_value.h — a small JSON document model: build, serialise, and parse (for tests and for
// tools that read gsanalyze's --json back). Object keys keep insertion order so the output reads
// in the documented order.
//
// Thread safety: a value is a plain value.
#ifndef GPUSTALL_ANALYZER_JSON_JSON_VALUE_H_
#define GPUSTALL_ANALYZER_JSON_JSON_VALUE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gs::analyzer {

class Json {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::kBool), bool_(b) {}
  Json(int v) : Json(static_cast<int64_t>(v)) {}
  Json(unsigned v) : Json(static_cast<int64_t>(v)) {}
  Json(int64_t v) : type_(Type::kNumber), num_(static_cast<double>(v)), int_(v), is_int_(true) {}
  Json(uint64_t v) : Json(static_cast<int64_t>(v)) {}
  Json(long long v) : Json(static_cast<int64_t>(v)) {}
  Json(unsigned long long v) : Json(static_cast<int64_t>(v)) {}
  Json(double v) : type_(Type::kNumber), num_(v) {}
  Json(const char* s) : type_(Type::kString), str_(s) {}
  Json(std::string s) : type_(Type::kString), str_(std::move(s)) {}
  Json(std::string_view s) : type_(Type::kString), str_(s) {}

  static Json Array() { Json j; j.type_ = Type::kArray; return j; }
  static Json Object() { Json j; j.type_ = Type::kObject; return j; }

  // Object: sets (or replaces) a member; returns *this for chaining.
  Json& Set(std::string key, Json value);
  // Array: appends.
  Json& Push(Json value);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool as_bool() const { return bool_; }
  double as_double() const { return num_; }
  int64_t as_int() const { return is_int_ ? int_ : static_cast<int64_t>(num_); }
  const std::string& as_string() const { return str_; }
  const std::vector<Json>& items() const { return items_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }
  // Object member or nullptr.
  const Json* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // Object member; a null value when absent.
  const Json& operator[](std::string_view key) const;
  size_t size() const { return type_ == Type::kArray ? items_.size() : members_.size(); }

  // Serialises; indent 0 = one line.
  std::string Dump(int indent = 2) const;
  // Appends Dump(0) to `out` (a writer of many small values reuses one buffer).
  void AppendCompact(std::string* out) const { DumpTo(out, 0, 0); }
  // Appends `s` as a JSON string, quoted and escaped as Dump writes strings (and the trace-event
  // exports theirs: export/chrome_trace_writer.h).
  static void AppendQuoted(std::string_view s, std::string* out);
  static absl::StatusOr<Json> Parse(std::string_view text);

 private:
  void DumpTo(std::string* out, int indent, int depth) const;
  Type type_ = Type::kNull;
  bool bool_ = false;
  double num_ = 0;
  int64_t int_ = 0;
  bool is_int_ = false;
  std::string str_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace gs::analyzer

#endif  // GPUSTALL_ANALYZER_JSON_JSON_VALUE_H_
