# kineto.cli.*: gsanalyze's subcommands on the real PyTorch profiler traces in testdata/, found by
# content (a copy without .json in its name), alone, several, a folder of ranks; bad JSON exits 2
# like a bad .gstrace. kineto.hta.*: HTA's idle time equals gsanalyze's (kineto_hta_test.py).
set(_kt_data ${CMAKE_CURRENT_SOURCE_DIR}/testdata)
set(_kt_dir ${CMAKE_CURRENT_BINARY_DIR}/cli)
# Inputs made at test time: a trace under a name that says nothing, bad JSON of each kind.
add_test(NAME kineto.cli.make_inputs COMMAND sh -c "\
mkdir -p '${_kt_dir}' && cd '${_kt_dir}' && \
cp '${_kt_data}/a100_alexnet.pt.trace.json.gz' ./alexnet.bin && \
printf 'hello, not json' > not_json.json && \
printf '{\"schemaVersion\": 1, \"something\": [1, 2]}' > wrong_shape.json && \
printf '{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5}]}' > cpu_only.json && \
zcat '${_kt_data}/multirank/rank-0.json.gz' | head -c 900000 > cut.json && \
head -c 60000 '${_kt_data}/multirank/rank-1.json.gz' > cut.json.gz")
set_tests_properties(kineto.cli.make_inputs PROPERTIES FIXTURES_SETUP kineto_cli_inputs)

# kineto_cli_case(NAME EXPECTED_EXIT ARGS... [MATCH regex]): `gsanalyze ARGS` in ${_kt_dir}.
function(kineto_cli_case name expected)
  cmake_parse_arguments(PARSE_ARGV 2 CASE "" "MATCH" "")
  set(cmd "cd '${_kt_dir}' && '$<TARGET_FILE:gsanalyze>'")
  foreach(arg IN LISTS CASE_UNPARSED_ARGUMENTS)
    string(APPEND cmd " '${arg}'")
  endforeach()
  string(APPEND cmd " >out.${name} 2>&1; rc=$?; cat out.${name}; echo exit=$rc; test $rc -eq ${expected}")
  add_test(NAME kineto.cli.${name} COMMAND sh -c "${cmd}")
  set_tests_properties(kineto.cli.${name} PROPERTIES FIXTURES_REQUIRED kineto_cli_inputs)
  if(CASE_MATCH)
    set_tests_properties(kineto.cli.${name} PROPERTIES PASS_REGULAR_EXPRESSION "${CASE_MATCH}")
  endif()
endfunction()

#               name               exit  arguments
kineto_cli_case(report_2x          0     report --width 200 ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "capture PyTorch profiler \\(Kineto JSON, PyTorch 2.x.*GPU 0 \\(NVIDIA A100-PG509-200\\).*79 kernels, 16 copies, 3 memsets.*exit=0")
kineto_cli_case(report_by_content  0     report alexnet.bin MATCH "NVIDIA A100.*exit=0")
kineto_cli_case(report_legacy      0     report ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz MATCH "DataLoader.*exit=0")
kineto_cli_case(report_rocm        0     report ${_kt_data}/mi250_rocm6.2.json.gz MATCH "exit=0")
kineto_cli_case(report_json        0     report --json ${_kt_data}/a100_triton.json.gz MATCH "triton_poi_fused_add_cos_sin_0|\"schema_version\".*exit=0")
kineto_cli_case(report_ranks       0     report ${_kt_data}/multirank MATCH "[Rr]ank.*exit=0")
kineto_cli_case(summarize          0     summarize -o ${_kt_dir}/rank0.gssummary ${_kt_data}/multirank/rank-0.json.gz MATCH "exit=0")
kineto_cli_case(html               0     html -o ${_kt_dir}/alexnet.html ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "exit=0")
kineto_cli_case(export_chrome      0     export --chrome ${_kt_dir}/alexnet.chrome.json ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "exit=0")
kineto_cli_case(export_collapsed   0     export --collapsed ${_kt_dir}/w0.folded ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz MATCH "exit=0")
kineto_cli_case(diff               0     diff ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz ${_kt_data}/v100_resnet50_workers4.pt.trace.json.gz MATCH "exit=0")
kineto_cli_case(cut_json_warns     0     report cut.json MATCH "warning: .*ends early.*exit=0")
kineto_cli_case(cut_gzip_warns     0     report cut.json.gz MATCH "warning: .*ends early.*exit=0")
kineto_cli_case(not_json           2     report not_json.json MATCH "not_json.json: .*exit=2")
kineto_cli_case(wrong_shape        2     report wrong_shape.json MATCH "wrong_shape.json: not a PyTorch profiler trace.*exit=2")
kineto_cli_case(cpu_only           2     report cpu_only.json MATCH "without GPU events.*exit=2")

if(GS_TEST_VENV_PYTHON)
  foreach(trace a100_alexnet.pt.trace.json.gz multirank/rank-0.json.gz multirank/rank-1.json.gz
                v100_resnet50_workers0.pt.trace.json.gz v100_resnet50_workers4.pt.trace.json.gz)
    string(REGEX REPLACE "[./].*$" "" _n "${trace}")
    if(trace MATCHES "^multirank/(.*)\\.json\\.gz$")
      set(_n ${CMAKE_MATCH_1})
    endif()
    string(REPLACE "-" "_" _n "${_n}")
    add_test(NAME kineto.hta.${_n}
             COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/kineto_hta_test.py
                     --gsanalyze $<TARGET_FILE:gsanalyze> --venv-python ${GS_TEST_VENV_PYTHON}
                     --work-dir ${CMAKE_CURRENT_BINARY_DIR}/hta/${_n} ${_kt_data}/${trace})
    set_tests_properties(kineto.hta.${_n} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS hta)
  endforeach()
endif()
kineto_cli_case(export_kineto      0     export --kineto ${_kt_dir}/w0.kineto.json ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz MATCH "wrote .*idle intervals.*exit=0")
# What `export --chrome` wrote from a PyTorch profiler trace reads as a viewer reads it.
add_test(NAME kineto.cli.export_chrome_is_valid
         COMMAND sh -c "'$<TARGET_FILE:gsanalyze>' export --chrome '${_kt_dir}/w0.chrome.json' '${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz' && /usr/bin/python3 '${PROJECT_SOURCE_DIR}/analyzer/export/check_chrome_trace.py' '${_kt_dir}/w0.chrome.json'")
set_tests_properties(kineto.cli.export_chrome_is_valid PROPERTIES FIXTURES_REQUIRED kineto_cli_inputs
                     PASS_REGULAR_EXPRESSION "ok: [0-9]+ events, [1-9][0-9]* flows")
# Mixed with a .gstrace (analyzer/cli/exit_codes.cmake writes starved.gstrace): two traces, one report.
add_test(NAME kineto.cli.mixed_with_gstrace
         COMMAND sh -c "'$<TARGET_FILE:gsanalyze>' report '${CMAKE_BINARY_DIR}/analyzer/cli/cli_traces/starved.gstrace' '${_kt_data}/a100_triton.json.gz'; echo exit=$?")
set_tests_properties(kineto.cli.mixed_with_gstrace PROPERTIES FIXTURES_REQUIRED "kineto_cli_inputs;analyzer_cli_traces"
                     PASS_REGULAR_EXPRESSION "2 traces.*starved.gstrace.*a100_triton.json.gz.*exit=0")
