// process_info.cc — see process_info.h.
#include "agent/core/process_info.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

namespace gs {
namespace core {

std::string ReadSmallFile(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buffer[4096];
  ssize_t n;
  while (out.size() < (1 << 20) && (n = read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  close(fd);
  return out;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string HostName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "localhost";
  return host;
}

}  // namespace core
}  // namespace gs
