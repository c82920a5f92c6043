# analyzer.cli.tty.*: colour and the progress line under a real pseudo-terminal (tty_test.py, on
# the system's Python: the standard library's pty module).
add_executable(gs_analyzer_tty_test_traces ${CMAKE_CURRENT_LIST_DIR}/tty_test_traces.cc)
target_link_libraries(gs_analyzer_tty_test_traces PRIVATE gs_analyzer_trace_files)
if(EXISTS /usr/bin/python3)
  foreach(mode colour progress progress_json)
    add_test(NAME analyzer.cli.tty.${mode}
             COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/tty_test.py ${mode}
                     --gsanalyze $<TARGET_FILE:gsanalyze>
                     --traces-tool $<TARGET_FILE:gs_analyzer_tty_test_traces>
                     --work-dir ${CMAKE_CURRENT_BINARY_DIR}/tty_work/${mode})
  endforeach()
  # The large trace is ~12 M records: one at a time, and not beside the timing-sensitive suites.
  # progress_json writes and parses a 150 MB JSON trace.
  set_tests_properties(analyzer.cli.tty.colour analyzer.cli.tty.progress analyzer.cli.tty.progress_json
                       PROPERTIES TIMEOUT 180)
else()
  message(STATUS "gpustall: no /usr/bin/python3: analyzer.cli.tty.* not added")
endif()
