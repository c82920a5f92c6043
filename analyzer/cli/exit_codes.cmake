# gsanalyze's exit codes as a table of ctest cases (google/benchmark's add_filter_test style):
# each row runs gsanalyze on a trace written by gs_analyzer_make_test_traces and checks the exit
# code and the line that says why.
set(GS_ANALYZER_CLI_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli_traces)
add_test(NAME analyzer.cli.make_traces
         COMMAND ${CMAKE_COMMAND} -E env sh -c "mkdir -p '${GS_ANALYZER_CLI_DIR}' && '$<TARGET_FILE:gs_analyzer_make_test_traces>' '${GS_ANALYZER_CLI_DIR}'")
set_tests_properties(analyzer.cli.make_traces PROPERTIES FIXTURES_SETUP analyzer_cli_traces)

# gs_analyzer_cli_case (cmake/GsCliCase.cmake): each case checks the exit code and a part of the
# output that only a correct run prints.
include(GsCliCase)

#                    name                     exit  arguments
gs_analyzer_cli_case(report_ok                0     report starved.gstrace MATCH "Data loss: none.*exit=0")
gs_analyzer_cli_case(report_json_ok           0     report --json starved.gstrace MATCH "\"schema_version\": 1.*exit=0")
gs_analyzer_cli_case(healthy_passes_threshold 0     report --fail-under 90% healthy.gstrace MATCH "healthy.gstrace: pid 4242.*GPU-Util 100.0%.*exit=0")
gs_analyzer_cli_case(starved_fails_threshold  1     report --fail-under 0.5 starved.gstrace MATCH "below --fail-under 50.0%.*exit=1")
gs_analyzer_cli_case(starved_no_threshold     0     report starved.gstrace MATCH "starved.gstrace: pid 4242.*36 kernels, 24 copies.*exit=0")
gs_analyzer_cli_case(truncated_warns          0     report truncated.gstrace MATCH "warning: .*cut.*exit=0")
gs_analyzer_cli_case(not_a_trace              2     report not_a_trace.txt MATCH "gsanalyze: not_a_trace.txt: not a gpustall trace\nexit=2")
gs_analyzer_cli_case(newer_schema             2     report newer.gstrace MATCH "newer.gstrace: trace schema version 999 is newer.*upgrade gsanalyze\nexit=2")
gs_analyzer_cli_case(missing_file             2     report does_not_exist.gstrace MATCH "gsanalyze: does_not_exist.gstrace: No such file or directory\nexit=2")
gs_analyzer_cli_case(one_bad_among_good       2     report starved.gstrace not_a_trace.txt MATCH "^gsanalyze: not_a_trace.txt: not a gpustall trace\nexit=2")
gs_analyzer_cli_case(no_arguments             2     MATCH "missing subcommand.*usage: gsanalyze.*exit=2")
gs_analyzer_cli_case(unknown_subcommand       2     frobnicate starved.gstrace MATCH "unknown subcommand 'frobnicate'.*usage: gsanalyze.*exit=2")
gs_analyzer_cli_case(unknown_flag             2     report --bogus starved.gstrace MATCH "unknown option '--bogus' for report.*exit=2")
gs_analyzer_cli_case(bad_threshold            2     report --fail-under lots starved.gstrace MATCH "--fail-under: 'lots' is not a utilisation.*exit=2")
gs_analyzer_cli_case(help                     0     --help MATCH "usage: gsanalyze.*exit=0")
gs_analyzer_cli_case(dump_ok                  0     dump starved.gstrace MATCH "cudaLaunchKernel.*exit=0")
gs_analyzer_cli_case(dump_not_a_trace         2     dump not_a_trace.txt MATCH "gsanalyze: not_a_trace.txt: not a gpustall trace\nexit=2")

# export and diff (analyzer/export/).
gs_analyzer_cli_case(export_chrome_ok         0     export --chrome out.chrome.json starved.gstrace MATCH "wrote out.chrome.json: .*flows, 35 idle intervals.*exit=0")
gs_analyzer_cli_case(export_collapsed_ok      0     export --collapsed out.folded.txt starved.gstrace MATCH "wrote out.folded.txt: 3 stacks.*exit=0")
gs_analyzer_cli_case(export_truncated_warns   0     export --collapsed out.cut.txt truncated.gstrace MATCH "warning: .*cut.*exit=0")
gs_analyzer_cli_case(export_no_output         2     export starved.gstrace MATCH "export: give --chrome OUT.json.*exit=2")
gs_analyzer_cli_case(export_not_a_trace       2     export --chrome out.bad.json not_a_trace.txt MATCH "gsanalyze: not_a_trace.txt: not a gpustall trace\nexit=2")
gs_analyzer_cli_case(export_missing_file      2     export --collapsed out.bad.txt does_not_exist.gstrace MATCH "does_not_exist.gstrace: No such file or directory\nexit=2")
gs_analyzer_cli_case(export_two_traces        2     export --chrome out.two.json starved.gstrace healthy.gstrace MATCH "export: exactly one trace file.*exit=2")
gs_analyzer_cli_case(export_newer_schema      2     export --chrome out.newer.json newer.gstrace MATCH "newer.gstrace: trace schema version 999 is newer.*exit=2")
# An agent trace with launch configurations (testing/trace_files.h WriteSizedTrace: 10,075,758 ns
# covered and 5,009,470 ns occupied of a 29.5 ms wall): the Kineto export keeps what sizes its
# kernels, so its report is the trace's; the per-rank table and the ranks section say how full.
gs_analyzer_cli_case(export_kineto_fill       0     export --kineto sized.kineto.json sized.gstrace
                     THEN "'$<TARGET_FILE:gsanalyze>' report --json sized.kineto.json"
                     MATCH "exit=0\nthen:\n.*\"sm_coverage_busy_ns\": 10075758,.*\"est_occupancy_busy_ns\": 5009470,.*\"kernel_configs\": \\[\n *{\n *\"trace\": 0,\n *\"device\": 0,\n *\"name\": \"tiny_kernel\",.*\"underfilled_ns\": 9924242,")
gs_analyzer_cli_case(export_tables_fill       0     export --tables sized_tables sized.gstrace
                     THEN "head -2 sized_tables/ranks.csv"
                     MATCH "then:\ntrace,source,rank,host,pid,utilization,steady_utilization,sm_coverage_utilization,est_occupancy_utilization,wall_ns,[^\n]*\n0,sized.gstrace,,testhost,4242,[0-9.]+,[0-9.]+,0.341551,0.169813,29500000,")
gs_analyzer_cli_case(report_ranks_fill        0     report --width 200 sized_r0.gstrace sized_r1.gstrace
                     MATCH "Ranks \\(2 ranks[^\n]*\n +rank +GPU-Util +steady +SM cov\\. +occ\\. ≤ +idle [^\n]*\n +rank 0 \\(pid 4242 on testh… +[0-9.]+% +[0-9.]+% +34\\.2% +17\\.0% .*exit=0")
gs_analyzer_cli_case(diff_ok                  0     diff healthy.gstrace starved.gstrace MATCH "Idle by cause.*grew most.*load_batch.*exit=0")
gs_analyzer_cli_case(diff_json_ok             0     diff --json healthy.gstrace starved.gstrace MATCH "\"stacks_grew\".*exit=0")
gs_analyzer_cli_case(diff_several             0     diff starved.gstrace truncated.gstrace -- healthy.gstrace MATCH "warning: before: truncated.gstrace: .*GPU-Util \\(compute busy / wall\\) +[0-9.]+% -> 100.0%.*Idle by cause.*exit=0")
gs_analyzer_cli_case(diff_one_trace           2     diff starved.gstrace MATCH "diff: give BEFORE and AFTER.*exit=2")
gs_analyzer_cli_case(diff_bad_after           2     diff starved.gstrace not_a_trace.txt MATCH "gsanalyze: not_a_trace.txt: not a gpustall trace\nexit=2")
gs_analyzer_cli_case(diff_empty_side          2     diff starved.gstrace -- MATCH "diff: traces needed on both sides of '--'.*exit=2")

# A job folder holding what gsanalyze wrote there (its `report --json`, a Kineto export of its
# trace): those are left out by their content and said so in one line; the folder is its one rank.
add_test(NAME analyzer.cli.make_job_folder
         COMMAND sh -c "cd '${GS_ANALYZER_CLI_DIR}' && rm -rf job && mkdir job && cp starved.gstrace job/r0.gstrace && '$<TARGET_FILE:gsanalyze>' report --json job >job/report.json && '$<TARGET_FILE:gsanalyze>' export --kineto job/r0.json job/r0.gstrace")
set_tests_properties(analyzer.cli.make_job_folder PROPERTIES FIXTURES_SETUP analyzer_cli_job
                     FIXTURES_REQUIRED analyzer_cli_traces)
gs_analyzer_cli_case(job_folder_leaves_out_own 0     report job FIXTURE analyzer_cli_job
                     MATCH "gsanalyze: skipped 2 files in job: r0.json \\(exported by gsanalyze from r0.gstrace\\), report.json \\(a gsanalyze report\\)\n.*gpustall: 1 trace, .*job/r0.gstrace: pid 4242.*exit=0")

# The exported file read by Python's json module (an independent parser), as a viewer would.
find_program(GS_ANALYZER_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(GS_ANALYZER_PYTHON3)
  add_test(NAME analyzer.export.chrome_json_loads
           COMMAND sh -c "cd '${GS_ANALYZER_CLI_DIR}' && '$<TARGET_FILE:gsanalyze>' export --chrome py.chrome.json starved.gstrace && '${GS_ANALYZER_PYTHON3}' '${PROJECT_SOURCE_DIR}/analyzer/export/check_chrome_trace.py' py.chrome.json")
  set_tests_properties(analyzer.export.chrome_json_loads PROPERTIES FIXTURES_REQUIRED analyzer_cli_traces
                       PASS_REGULAR_EXPRESSION "ok: [0-9]+ events, [0-9]+ flows")
  # An agent trace with launch configurations: the kernels' launch args and the devices' "SM
  # coverage" counter (4 samples a step: export/fill_export_test.cc) read as a viewer reads them.
  add_test(NAME analyzer.export.chrome_json_loads_fill
           COMMAND sh -c "cd '${GS_ANALYZER_CLI_DIR}' && '$<TARGET_FILE:gsanalyze>' export --chrome sized.chrome.json sized.gstrace && '${GS_ANALYZER_PYTHON3}' '${PROJECT_SOURCE_DIR}/analyzer/export/check_chrome_trace.py' sized.chrome.json")
  set_tests_properties(analyzer.export.chrome_json_loads_fill PROPERTIES FIXTURES_REQUIRED analyzer_cli_traces
                       PASS_REGULAR_EXPRESSION "ok: [0-9]+ events, 20 flows, 40 counter samples")
endif()
