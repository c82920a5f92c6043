# export.hta.*: Holistic Trace Analysis (the test venv's holistictraceanalysis 0.5.0) reads
# `gsanalyze export --kineto` of a real simgpu workload run under the agent, and its idle numbers
# agree with gsanalyze's where the definitions agree (hta_idle_test.py says which). Included by
# export/CMakeLists.txt; the tests need the agent, simgpu and the workloads, which exist only when
# CUDA is built (GS_WITH_CUDA) and are defined later in the tree, so they are added once the whole
# tree has been read.
function(_gs_hta_add_tests src bin)
  if(NOT TARGET gsagent OR NOT TARGET simgpu_cudart OR NOT SIMGPU_LIB_DIR)
    message(STATUS "gpustall: no agent/simgpu: export.hta.* not added")
    return()
  endif()
  if(NOT EXISTS /usr/bin/python3)
    message(STATUS "gpustall: no /usr/bin/python3: export.hta.* not added")
    return()
  endif()
  # The C++ workloads where nvcc built them, else the same shapes in Python (ctypes on simgpu).
  set(_cases data_starved multi_thread)
  set(_args_data_starved --steps 20)
  set(_args_multi_thread --steps 10)
  set(_tests "")
  foreach(shape IN LISTS _cases)
    if(GS_WORKLOADS_DIR AND shape IN_LIST GS_WORKLOADS_CPP)
      set(_cmd ${GS_WORKLOADS_DIR}/workload_${shape})
    elseif(GS_WORKLOADS_PY_DIR AND EXISTS ${GS_WORKLOADS_PY_DIR}/${shape}.py)
      set(_cmd /usr/bin/python3 ${GS_WORKLOADS_PY_DIR}/${shape}.py)
    else()
      continue()
    endif()
    # data_starved's step stream runs alone (its set-up memsets are on another stream, before it):
    # the per-stream comparison must run there.
    set(_lone "")
    if(shape STREQUAL "data_starved")
      set(_lone --expect-lone-stream)
    endif()
    add_test(NAME export.hta.${shape}
             COMMAND /usr/bin/python3 ${src}/hta_idle_test.py --gsanalyze $<TARGET_FILE:gsanalyze>
                     --agent $<TARGET_FILE:gsagent> --simgpu-lib ${SIMGPU_LIB_DIR}
                     --venv-python ${GS_TEST_VENV_PYTHON} --work-dir ${bin}/hta_work/${shape} ${_lone}
                     -- ${_cmd} ${_args_${shape}})
    list(APPEND _tests export.hta.${shape})
  endforeach()
  if(_tests)
    set_tests_properties(${_tests} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS hta)
  endif()
endfunction()
if(GS_BUILD_TESTS)
  # EVAL so that the directories are substituted now, not when the deferred call runs.
  cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY \"${PROJECT_SOURCE_DIR}\" CALL _gs_hta_add_tests \"${CMAKE_CURRENT_LIST_DIR}\" \"${CMAKE_CURRENT_BINARY_DIR}\")")
endif()
