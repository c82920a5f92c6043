// command.h — the control protocol's requests, as text and as values.
//
// The protocol is one request line per connection, one reply line back (gsctl and `socat` speak
// it alike):
//   status                 -> ok pid=P state=standby|recording|... windows=N trace=PATH ... command=ARGV
//   start [DURATION_NS]    -> ok window=N trace=PATH duration_ns=D     (D 0: until `stop`)
//   stop                   -> ok window=N trace=PATH
//   anything else          -> error <why>
// Lines end in '\n' (a trailing '\r' is tolerated) and are at most kMaxCommandLine bytes: the
// listener reads no more than that from a peer, whoever it is.
//
// Thread safety: pure functions.
#ifndef GPUSTALL_AGENT_CONTROL_COMMAND_H_
#define GPUSTALL_AGENT_CONTROL_COMMAND_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace gs {
namespace control {

inline constexpr size_t kMaxCommandLine = 256;
// A window longer than a day is a typo (and would overflow nothing, but helps no one).
inline constexpr uint64_t kMaxWindowNs = 86400ull * 1000000000ull;

struct Command {
  enum class Kind { kStatus, kStart, kStop };
  Kind kind = Kind::kStatus;
  uint64_t duration_ns = 0;  // kStart only; 0 = until `stop`
};

// Parses one request line (without or with its '\n'). On failure returns false and sets *error
// to the text that follows "error " in the reply.
bool ParseCommand(std::string_view line, Command* command, std::string* error);

// The reply lines (with their '\n').
std::string OkReply(std::string_view facts);
std::string ErrorReply(std::string_view why);

}  // namespace control
}  // namespace gs

#endif  // GPUSTALL_AGENT_CONTROL_COMMAND_H_
