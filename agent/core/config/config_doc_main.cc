// gs_config_doc: prints the README table of GS_* settings, generated from config_table.h.
#include <cstdio>

#include "agent/core/config/config.h"

int main() {
  std::fputs(gs::ConfigMarkdownTable().c_str(), stdout);
  return 0;
}
