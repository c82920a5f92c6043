// command.cc
#include "agent/control/command.h"

#include <vector>

namespace gs {
namespace control {
namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > i) words.push_back(line.substr(i, end - i));
    i = end;
  }
  return words;
}

bool ParseDuration(std::string_view text, uint64_t* ns) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (kMaxWindowNs - digit) / 10) return false;  // also keeps clear of overflow
    value = value * 10 + digit;
  }
  *ns = value;
  return true;
}

}  // namespace

bool ParseCommand(std::string_view line, Command* command, std::string* error) {
  if (line.size() > kMaxCommandLine) {
    *error = "request longer than " + std::to_string(kMaxCommandLine) + " bytes";
    return false;
  }
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  for (char c : line) {
    if (c == '\0' || c == '\n') {
      *error = "one request line per connection";
      return false;
    }
  }
  const std::vector<std::string_view> words = Words(line);
  if (words.empty()) {
    *error = "empty request (expected status, start [DURATION_NS] or stop)";
    return false;
  }
  Command parsed;
  if (words[0] == "status" || words[0] == "stop") {
    parsed.kind = words[0] == "status" ? Command::Kind::kStatus : Command::Kind::kStop;
    if (words.size() != 1) {
      *error = std::string(words[0]) + " takes no argument";
      return false;
    }
  } else if (words[0] == "start") {
    parsed.kind = Command::Kind::kStart;
    if (words.size() > 2) {
      *error = "start takes at most one argument (the window's duration in ns)";
      return false;
    }
    if (words.size() == 2 && !ParseDuration(words[1], &parsed.duration_ns)) {
      *error = "start: '" + std::string(words[1]) + "' is not a duration in ns (0.." +
               std::to_string(kMaxWindowNs) + ")";
      return false;
    }
  } else {
    const std::string_view shown = words[0].substr(0, 32);
    *error = "unknown request '" + std::string(shown) + "' (expected status, start [DURATION_NS] or stop)";
    return false;
  }
  *command = parsed;
  return true;
}

std::string OkReply(std::string_view facts) {
  std::string reply = "ok";
  if (!facts.empty()) {
    reply += ' ';
    reply += facts;
  }
  reply += '\n';
  return reply;
}

std::string ErrorReply(std::string_view why) {
  std::string reply = "error ";
  reply += why;
  reply += '\n';
  return reply;
}

}  // namespace control
}  // namespace gs
