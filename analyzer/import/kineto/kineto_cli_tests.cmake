# kineto.cli.*: gsanalyze's subcommands on the real PyTorch profiler traces in testdata/, found by
# content (a copy without .json in its name), alone, several, a folder of ranks; bad JSON exits 2
# like a bad .gstrace. kineto.hta.*: HTA's idle time equals gsanalyze's, over the complete profiler
# steps and per step (kineto_hta_test.py).
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

# kineto_cli_case(NAME EXPECTED_EXIT ARGS... MATCH regex [THEN command]): `gsanalyze ARGS` in
# ${_kt_dir} as kineto.cli.NAME; the exit code and the output both checked (cmake/GsCliCase.cmake).
include(GsCliCase)
function(kineto_cli_case)
  gs_analyzer_cli_case(${ARGV} DIR ${_kt_dir} PREFIX kineto.cli FIXTURE kineto_cli_inputs)
endfunction()

#               name               exit  arguments
kineto_cli_case(report_2x          0     report --width 200 ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "capture PyTorch profiler \\(Kineto JSON, PyTorch 2.x.*GPU 0 \\(NVIDIA A100-PG509-200\\).*79 kernels, 16 copies, 3 memsets.*exit=0")
kineto_cli_case(report_by_content  0     report alexnet.bin MATCH "NVIDIA A100.*exit=0")
kineto_cli_case(report_legacy      0     report ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz MATCH "DataLoader.*exit=0")
kineto_cli_case(report_rocm        0     report ${_kt_data}/mi250_rocm6.2.json.gz MATCH "GPU 2 \\(AMD Radeon Graphics\\).*14 kernels, 2 copies, 0 memsets.*exit=0")
kineto_cli_case(report_json        0     report --json ${_kt_data}/a100_triton.json.gz MATCH "^{\n  \"schema_version\": 1,.*\"path\": \"[^\"]*a100_triton.json.gz\",.*\"capture_mode\": \"PyTorch profiler \\(Kineto JSON.*\"name\": \"NVIDIA A100-PG509-200\",.*\"kernels\": 1,.*\n}\nexit=0")
# How full the kernels kept the device, from each kernel's grid, block, registers and shared memory
# and deviceProperties (timeline/fill_timeline.h, occupancy/occupancy.h): the line beside GPU-Util,
# the under-filled kernels with their launch sites, and JSON's figures.
kineto_cli_case(report_fill        0     report --width 200 ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "GPU-Util <0.1% over [^\n]*\n[^\n]*79 kernels[^\n]*\n  filled: SM coverage <0.1% · est. occupancy ≤ <0.1% \\(GPU-Util <0.1%\\)\n.*Under-filled kernels [^\n]*\n +1\\. +314 µs +4× ampere_sgemm_32x32_sliced1x4_tn\n +grid 128x4x1 block 128x1x1 · coverage 87.0% of 108 SMs, 4 blocks/SM \\(shared memory\\), 2 waves\n +launched from aten::addmm ← aten::linear.*exit=0")
kineto_cli_case(report_fill_json   0     report --json ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "\"sm_coverage_busy_ns\": 10173933,\n *\"sm_coverage_utilization\": 0\\.000234.*\"kernel_configs\": \\[\n *{\n *\"trace\": 0,\n *\"device\": 0,\n *\"name\": \"ampere_sgemm_32x32_sliced1x4_tn\",.*\"registers_per_thread\": 86,\n *\"shared_memory_bytes\": 32768,\n *\"count\": 4,.*\"active_blocks_per_sm\": 4,\n *\"limiter\": \"shared_memory\",.*\"waves\": 2,.*\"underfilled_ns\": 314481,.*exit=0")
kineto_cli_case(export_tables_fill 0     export --tables ${_kt_dir}/alexnet_tables ${_kt_data}/a100_alexnet.pt.trace.json.gz
                THEN "head -2 alexnet_tables/kernel_configs.csv"
                MATCH "1 ranks, ([0-9]+) kernel configurations -> .*alexnet_tables/\\{idle_intervals,stacks,ranks,kernel_configs\\}.*exit=0\nthen:\ntrace,rank,device,name,grid_x,grid_y,grid_z,block_x,block_y,block_z,registers_per_thread,shared_memory_bytes,count,total_ns,sms,blocks_per_sm,sm_coverage,wave_coverage,active_blocks_per_sm,limiter,theoretical_occupancy,waves,wave_efficiency,est_occupancy,underfilled_ns,launch_site\n0,0,0,ampere_sgemm_32x32_sliced1x4_tn,128,4,1,128,1,1,86,32768,4,2426000,108,[0-9.]+,1,0.87037,4,shared_memory,0.25,2,0.592593,0.148148,314481,aten::addmm\n")
# The re-export keeps each kernel's launch configuration and the devices' SM limits: the same fill.
kineto_cli_case(export_kineto_fill 0     export --kineto ${_kt_dir}/alexnet.kineto.json ${_kt_data}/a100_alexnet.pt.trace.json.gz
                THEN "'$<TARGET_FILE:gsanalyze>' report --json alexnet.kineto.json"
                MATCH "exit=0\nthen:\n.*\"sm_coverage_busy_ns\": 10173933,.*\"est_occupancy_busy_ns\": 3855331,.*\"kernel_configs\": \\[\n *{\n *\"trace\": 0,\n *\"device\": 0,\n *\"name\": \"ampere_sgemm_32x32_sliced1x4_tn\",.*\"underfilled_ns\": 314481,")
kineto_cli_case(diff_fill          0     diff ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz ${_kt_data}/v100_resnet50_workers4.pt.trace.json.gz
                MATCH "GPU-Util \\(compute busy / wall\\) +52.8% -> [0-9.]+%[^\n]*\n[^\n]*\nSM coverage \\(how full\\) +51.2% -> [0-9.]+%  \\([+-][0-9.]+ pp\\)\n.*exit=0")
kineto_cli_case(report_ranks       0     report ${_kt_data}/multirank MATCH "Ranks \\(2 ranks, 10 collective steps compared.*rank 0 \\(pid 4037\\).*rank 1 \\(pid 4045\\).*exit=0")
kineto_cli_case(summarize          0     summarize -o ${_kt_dir}/rank0.gssummary ${_kt_data}/multirank/rank-0.json.gz
                THEN "'$<TARGET_FILE:gsanalyze>' report --width 200 rank0.gssummary"
                MATCH "rank 0 \\(pid 4037\\): 10 collective steps, [0-9]+ stacks -> .*rank0.gssummary\nexit=0\nthen:\n.*Ranks \\(1 rank.*rank 0 \\(pid 4037\\) +[0-9.]+%")
kineto_cli_case(html               0     html -o ${_kt_dir}/alexnet.html ${_kt_data}/a100_alexnet.pt.trace.json.gz
                THEN "grep -o '<title>[^<]*' alexnet.html"
                MATCH "wrote .*alexnet.html: [0-9]+ KiB, [0-9]+ records.*exit=0\nthen:\n<title>gpustall report: .*a100_alexnet.pt.trace.json.gz")
kineto_cli_case(export_chrome      0     export --chrome ${_kt_dir}/alexnet.chrome.json ${_kt_data}/a100_alexnet.pt.trace.json.gz
                THEN "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/analyzer/export/check_chrome_trace.py' alexnet.chrome.json"
                MATCH "wrote .*alexnet.chrome.json: ([0-9]+) events \\(98 GPU activities.*exit=0\nthen:\nok: [0-9]+ events, 98 flows")
kineto_cli_case(export_collapsed   0     export --collapsed ${_kt_dir}/w0.folded ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz
                THEN "head -n 3 w0.folded"
                MATCH "wrote .*w0.folded: [1-9][0-9]* stacks, [0-9.]+ ms of idle time\nexit=0\nthen:\nProfilerStep#\\*.[^\n]+ [1-9][0-9]*\n")
kineto_cli_case(diff               0     diff ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz ${_kt_data}/v100_resnet50_workers4.pt.trace.json.gz MATCH "GPU-Util \\(compute busy / wall\\) +[0-9.]+% -> [0-9.]+%.*steady-state idle.*Idle by cause.*host work.*exit=0")
kineto_cli_case(cut_json_warns     0     report cut.json MATCH "warning: .*ends early.*exit=0")
kineto_cli_case(cut_gzip_warns     0     report cut.json.gz MATCH "warning: .*ends early.*exit=0")
kineto_cli_case(not_json           2     report not_json.json MATCH "not_json.json: .*exit=2")
kineto_cli_case(wrong_shape        2     report wrong_shape.json MATCH "wrong_shape.json: not a PyTorch profiler trace.*exit=2")
kineto_cli_case(cpu_only           2     report cpu_only.json MATCH "without GPU events.*exit=2")

if(GS_TEST_VENV_PYTHON)
  # Every real trace in testdata/, the full-length one with many steps included.
  foreach(trace a100_alexnet.pt.trace.json.gz a100_triton.json.gz mi250_rocm6.2.json.gz
                multirank/rank-0.json.gz multirank/rank-1.json.gz
                v100_resnet50_workers0.pt.trace.json.gz v100_resnet50_workers4.pt.trace.json.gz
                v100_resnet50_workers0_full.pt.trace.json.gz)
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
# Without HTA: the text report's step window and per-step rows on the full-length trace (the
# figures kineto.hta.v100_resnet50_workers0_full checks against HTA), beside the first-to-last ones.
add_test(NAME kineto.steps.full_report
         COMMAND sh -c "'$<TARGET_FILE:gsanalyze>' report --width 200 '${_kt_data}/v100_resnet50_workers0_full.pt.trace.json.gz'; echo exit=$?")
set_tests_properties(kineto.steps.full_report PROPERTIES PASS_REGULAR_EXPRESSION
  "steady state 393 ms in [0-9]+ gaps[^\n]*\n  over 5 complete profiler steps \\(ProfilerStep#5–#9\\), as HTA: idle 327 ms, busy 503 ms of 830 ms, GPU-Util 59\\.3% \\(first GPU work to last: idle 393 ms, GPU-Util 59\\.4%; ProfilerStep#10 left out, incomplete\\)\n    ProfilerStep#5: idle 18\\.2 ms, busy 101 ms of 119 ms, GPU-Util 82\\.9%\n(    ProfilerStep#[6-8]: [^\n]+\n){3}    ProfilerStep#9: idle 19\\.3 ms.*exit=0")
kineto_cli_case(export_kineto      0     export --kineto ${_kt_dir}/w0.kineto.json ${_kt_data}/v100_resnet50_workers0.pt.trace.json.gz
                THEN "/usr/bin/python3 '${PROJECT_SOURCE_DIR}/analyzer/export/check_chrome_trace.py' w0.kineto.json"
                MATCH "wrote .*w0.kineto.json: ([0-9]+) events \\(([0-9]+) GPU activities, [0-9]+ API calls, [0-9]+ flows, [1-9][0-9]* idle intervals = [0-9.]+ ms.*exit=0\nthen:\nok: [0-9]+ events, [1-9][0-9]* flows")
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
# A trace with one kernel 53 years after the rest (a timestamp that cannot be real): the rest is
# analysed, and the report says what was dropped (as for a .gstrace's impossible records).
add_test(NAME kineto.cli.make_stray_input COMMAND sh -c "mkdir -p '${_kt_dir}' && cd '${_kt_dir}' && \
printf '{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 1000, \"dur\": 2, \"args\": {\"correlation\": 1}}, \
{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1005, \"dur\": 5, \"args\": {\"correlation\": 1, \"device\": 0, \"stream\": 7}}, \
{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 2005, \"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7}}, \
{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1695835572943613, \"dur\": 1, \"args\": {\"device\": 0}}]}' > stray.json")
set_tests_properties(kineto.cli.make_stray_input PROPERTIES FIXTURES_SETUP kineto_cli_inputs)
kineto_cli_case(stray_event_dropped 0    report --width 200 stray.json MATCH "Data loss: 1 other records dropped\nwarning: stray.json: 1 event dropped: times that cannot be real.*GPU 0 — GPU-Util [0-9.]+% over 1.01 ms.*2 kernels, 0 copies.*exit=0")
# Synchronisations keep their stream: the stream-wait evidence shows on the A100 trace.
kineto_cli_case(stream_wait_evidence 0   report --width 200 ${_kt_data}/a100_alexnet.pt.trace.json.gz MATCH "work queued before the device went idle \\([1-9][0-9]* after a cudaStreamWaitEvent\\).*exit=0")
# Ranks' clocks: the real job's traces have epoch timestamps and no baseTimeNanoseconds (said so,
# no header pairs claimed), and its world size; two traces with baseTimeNanoseconds are aligned by it.
kineto_cli_case(ranks_clocks_epoch 0     report --width 250 ${_kt_data}/multirank MATCH "Ranks \\(2 ranks, 10 collective steps compared. clocks: wall clocks aligned by each rank's epoch timestamps as written, no baseTimeNanoseconds \\(NTP agreement unmeasured\\).*world size 128 \\(as the traces say\\): 2 of its ranks are here.*exit=0")
kineto_cli_case(ranks_clocks_base  0     report --json ${_kt_data}/a100_triton.json.gz ${_kt_data}/mi250_rocm6.2.json.gz MATCH "\"clock_offset_ns\": 7889238000000000\n.*\"method\": \"wall clocks aligned by each rank's baseTimeNanoseconds \\(NTP agreement unmeasured\\)\".*exit=0")
kineto_cli_case(ranks_world_json   0     report --json ${_kt_data}/multirank MATCH "\"ranks\": {\n    \"rows\": \\[.*\n    \\],\n    \"world_size\": 128,.*exit=0")
