# readme_config_table_test.cmake — README.md's table of GS_* settings must be what the one
# table in config_table.h generates (gs_config_doc), so the README never drifts from the code.
#   cmake -DDOC=gs_config_doc -DREADME=README.md -P readme_config_table_test.cmake
execute_process(COMMAND ${DOC} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gs_config_doc failed")
endif()
file(READ ${README} readme)
string(REGEX MATCH "<!-- GS_CONFIG_TABLE:BEGIN[^\n]*-->\n(.*)<!-- GS_CONFIG_TABLE:END -->" _ "${readme}")
set(in_readme "${CMAKE_MATCH_1}")
string(STRIP "${in_readme}" in_readme)
string(STRIP "${generated}" generated)
if(NOT in_readme STREQUAL generated)
  message(FATAL_ERROR "README.md's GS_* table differs from config_table.h. Regenerate it:\n"
                      "  build/agent/core/config/gs_config_doc, and paste between the GS_CONFIG_TABLE markers.\n"
                      "--- generated ---\n${generated}\n--- README ---\n${in_readme}")
endif()
