// terminal.h — what gsanalyze may do to the streams it writes: colour and progress lines are for
// people at a terminal, never for pipes, files or logs.
#ifndef GPUSTALL_ANALYZER_CLI_TERMINAL_TERMINAL_H_
#define GPUSTALL_ANALYZER_CLI_TERMINAL_TERMINAL_H_

namespace gs::analyzer::cli {

// Colour on a terminal unless NO_COLOR (https://no-color.org) is set to a non-empty value
// (`no_color_env` is getenv("NO_COLOR"): null or "" leave colour on).
bool ColorWanted(bool is_terminal, const char* no_color_env);

// isatty(fd), named for what the callers ask.
bool IsTerminal(int fd);

}  // namespace gs::analyzer::cli

#endif  // GPUSTALL_ANALYZER_CLI_TERMINAL_TERMINAL_H_
