// process_info.h — small facts about this process and host, read from the kernel at activation
// (never on a hot path: they allocate and make system calls).
#ifndef GPUSTALL_AGENT_CORE_PROCESS_INFO_H_
#define GPUSTALL_AGENT_CORE_PROCESS_INFO_H_

#include <string>

namespace gs {
namespace core {

// The first MiB of a small file (/proc, /etc), or "" when it cannot be read.
std::string ReadSmallFile(const char* path);

// `s` without trailing newlines and spaces.
std::string Trimmed(std::string s);

// gethostname(), or "localhost".
std::string HostName();

}  // namespace core
}  // namespace gs

#endif  // GPUSTALL_AGENT_CORE_PROCESS_INFO_H_
