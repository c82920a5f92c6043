#include "analyzer/json/json_value.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gs::analyzer {

Json& Json::Set(std::string key, Json value) {
  for (auto& [k, v] : members_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  members_.emplace_back(std::move(key), std::move(value));
  return *this;
}

Json& Json::Push(Json value) {
  items_.push_back(std::move(value));
  return *this;
}

const Json* Json::Find(std::string_view key) const {
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

const Json& Json::operator[](std::string_view key) const {
  static const Json* const kNull = new Json();
  const Json* j = Find(key);
  return j ? *j : *kNull;
}

namespace {

// A byte a JSON string cannot hold as it is (RFC 8259 section 7).
bool NeedsEscape(char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }

// Whether any of the eight bytes of `w` needs an escape: the "has a zero byte" test on `w` with
// each quote or backslash turned to zero, and "has a byte below 0x20" (both exact, no false
// positives), so that the common run of plain bytes is skipped a word at a time.
inline bool AnyNeedsEscape(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t control = (w - kOnes * 0x20) & ~w & kHigh;
  return (has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) | control) != 0;
}

void Escape(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t run = 0;  // start of the bytes not appended yet, which need no escape: appended whole
  for (size_t i = 0; i < s.size();) {
    uint64_t word;
    if (i + sizeof(word) <= s.size()) {
      std::memcpy(&word, s.data() + i, sizeof(word));
      if (!AnyNeedsEscape(word)) {
        i += sizeof(word);
        continue;
      }
    }
    // A word with a byte to escape, or the last bytes: one by one to the word's end.
    for (const size_t stop = std::min(s.size(), i + sizeof(word)); i < stop; ++i) {
      const char c = s[i];
      if (!NeedsEscape(c)) continue;
      out->append(s.data() + run, i - run);
      run = i + 1;
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        default: absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
      }
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

void Newline(std::string* out, int indent, int depth) {
  if (indent <= 0) return;
  out->push_back('\n');
  out->append(static_cast<size_t>(indent * depth), ' ');
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  absl::StatusOr<Json> Document() {
    auto v = Value(0);
    if (!v.ok()) return v;
    Space();
    if (i_ != s_.size()) return Error("trailing characters");
    return v;
  }

 private:
  absl::Status Error(const char* what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", what, " at offset ", i_));
  }
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  absl::StatusOr<std::string> String() {
    if (!Eat('"')) return Error("expected string");
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return Error("bad escape");
      char e = s_[i_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'u': {
          if (i_ + 4 > s_.size()) return Error("bad \\u escape");
          unsigned cp = std::strtoul(std::string(s_.substr(i_, 4)).c_str(), nullptr, 16);
          i_ += 4;
          if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: out.push_back(e);
      }
    }
    if (i_ >= s_.size()) return Error("unterminated string");
    ++i_;
    return out;
  }
  absl::StatusOr<Json> Value(int depth) {
    if (depth > 200) return Error("nested too deeply");
    Space();
    if (i_ >= s_.size()) return Error("unexpected end");
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      Json obj = Json::Object();
      if (Eat('}')) return obj;
      do {
        auto key = String();
        if (!key.ok()) return key.status();
        if (!Eat(':')) return Error("expected ':'");
        auto v = Value(depth + 1);
        if (!v.ok()) return v;
        obj.Set(std::move(*key), std::move(*v));
      } while (Eat(','));
      if (!Eat('}')) return Error("expected '}'");
      return obj;
    }
    if (c == '[') {
      ++i_;
      Json arr = Json::Array();
      if (Eat(']')) return arr;
      do {
        auto v = Value(depth + 1);
        if (!v.ok()) return v;
        arr.Push(std::move(*v));
      } while (Eat(','));
      if (!Eat(']')) return Error("expected ']'");
      return arr;
    }
    if (c == '"') {
      auto s = String();
      if (!s.ok()) return s.status();
      return Json(std::move(*s));
    }
    if (Word("true")) return Json(true);
    if (Word("false")) return Json(false);
    if (Word("null")) return Json();
    size_t start = i_;
    bool integral = true;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '+' || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
      if (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E') integral = false;
      ++i_;
    }
    if (start == i_) return Error("unexpected character");
    std::string num(s_.substr(start, i_ - start));
    if (integral) return Json(static_cast<int64_t>(std::strtoll(num.c_str(), nullptr, 10)));
    return Json(std::strtod(num.c_str(), nullptr));
  }
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

void Json::DumpTo(std::string* out, int indent, int depth) const {
  switch (type_) {
    case Type::kNull: out->append("null"); break;
    case Type::kBool: out->append(bool_ ? "true" : "false"); break;
    case Type::kNumber:
      if (is_int_) absl::StrAppend(out, int_);
      else if (!std::isfinite(num_)) out->append("null");
      else absl::StrAppendFormat(out, "%.6g", num_);
      break;
    case Type::kString: Escape(str_, out); break;
    case Type::kArray:
      if (items_.empty()) { out->append("[]"); break; }
      out->push_back('[');
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out->push_back(',');
        Newline(out, indent, depth + 1);
        items_[i].DumpTo(out, indent, depth + 1);
      }
      Newline(out, indent, depth);
      out->push_back(']');
      break;
    case Type::kObject:
      if (members_.empty()) { out->append("{}"); break; }
      out->push_back('{');
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out->push_back(',');
        Newline(out, indent, depth + 1);
        Escape(members_[i].first, out);
        out->append(indent > 0 ? ": " : ":");
        members_[i].second.DumpTo(out, indent, depth + 1);
      }
      Newline(out, indent, depth);
      out->push_back('}');
      break;
  }
}

void Json::AppendQuoted(std::string_view s, std::string* out) { Escape(s, out); }

std::string Json::Dump(int indent) const {
  std::string out;
  DumpTo(&out, indent, 0);
  return out;
}

absl::StatusOr<Json> Json::Parse(std::string_view text) { return Parser(text).Document(); }

}  // namespace gs::analyzer
