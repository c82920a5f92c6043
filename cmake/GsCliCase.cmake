# GsCliCase.cmake — gsanalyze's command line as a table of ctest cases (google/benchmark's
# add_filter_test style): analyzer/cli/exit_codes.cmake on .gstrace files, and
# analyzer/import/kineto/kineto_cli_tests.cmake on PyTorch profiler traces.
include_guard(GLOBAL)

# gs_analyzer_cli_case(NAME EXPECTED_EXIT ARGS... MATCH regex [THEN shell-command]
#                      [DIR dir] [PREFIX prefix] [FIXTURE fixture])
# Runs `gsanalyze ARGS` in DIR (relative names resolve there) as the test PREFIX.NAME, with the
# FIXTURE that writes DIR's inputs; defaults: the analyzer's traces folder (GS_ANALYZER_CLI_DIR),
# analyzer.cli, analyzer_cli_traces. THEN, when given, runs after gsanalyze exited as expected and
# its output follows a line "then:", so that MATCH can look at what the command wrote.
# A case passes only when both hold: the exit code is EXPECTED_EXIT, and MATCH (required) matches
# stdout+stderr, then "exit=<code>", then THEN's output. The exit code is compared in the shell: a
# PASS_REGULAR_EXPRESSION makes CTest ignore the exit status, so a wrong one prints a line that
# FAIL_REGULAR_EXPRESSION catches.
function(gs_analyzer_cli_case name expected)
  cmake_parse_arguments(PARSE_ARGV 2 CASE "" "MATCH;THEN;DIR;PREFIX;FIXTURE" "")
  if(NOT CASE_MATCH)
    message(FATAL_ERROR "gs_analyzer_cli_case(${name}): MATCH is required (output only a correct run prints)")
  endif()
  if(NOT CASE_DIR)
    set(CASE_DIR ${GS_ANALYZER_CLI_DIR})
  endif()
  if(NOT CASE_PREFIX)
    set(CASE_PREFIX analyzer.cli)
  endif()
  if(NOT CASE_FIXTURE)
    set(CASE_FIXTURE analyzer_cli_traces)
  endif()
  set(cmd "cd '${CASE_DIR}' && '$<TARGET_FILE:gsanalyze>'")
  foreach(arg IN LISTS CASE_UNPARSED_ARGUMENTS)
    string(APPEND cmd " '${arg}'")
  endforeach()
  string(APPEND cmd " >out.${name} 2>&1; rc=$?; cat out.${name}; echo exit=$rc; "
                    "if test $rc -ne ${expected}; then "
                    "echo \"gs_analyzer_cli_case: exit code $rc, expected ${expected}\"; exit 1; fi")
  if(CASE_THEN)
    string(APPEND cmd "; echo then:; ${CASE_THEN}")
  endif()
  add_test(NAME ${CASE_PREFIX}.${name} COMMAND sh -c "${cmd}")
  set_tests_properties(${CASE_PREFIX}.${name} PROPERTIES FIXTURES_REQUIRED "${CASE_FIXTURE}"
                       PASS_REGULAR_EXPRESSION "${CASE_MATCH}"
                       FAIL_REGULAR_EXPRESSION "gs_analyzer_cli_case: exit code")
endfunction()
