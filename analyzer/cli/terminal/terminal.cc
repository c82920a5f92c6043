#include "analyzer/cli/terminal/terminal.h"

#include <unistd.h>

namespace gs::analyzer::cli {

bool ColorWanted(bool is_terminal, const char* no_color_env) {
  return is_terminal && (no_color_env == nullptr || no_color_env[0] == '\0');
}

bool IsTerminal(int fd) { return isatty(fd) == 1; }

}  // namespace gs::analyzer::cli
