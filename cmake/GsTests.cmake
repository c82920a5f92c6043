# GsTests.cmake — what the cross-component test folders (tests/*/CMakeLists.txt) share: the check
# of their prerequisites, with one status line saying what is missing when they are skipped, and
# the data_starved workload (C++ when nvcc built it, else the Python twin).

# gs_tests_require(WHAT "<tests>" [TARGETS t...] [VARIABLES v...] [PYTHON])
# A macro, so that return() leaves the calling CMakeLists.txt: the folder's tests are not added.
#   TARGETS    targets that must exist (gsagent, simgpu_cudart, ...)
#   VARIABLES  variables that must be true (GS_NVCC, GS_WORKLOADS_PY_DIR, ...)
#   PYTHON     find Python 3.9+ (Python3_EXECUTABLE) for the test drivers
macro(gs_tests_require)
  cmake_parse_arguments(_gsreq "PYTHON" "WHAT" "TARGETS;VARIABLES" ${ARGN})
  set(_gsreq_missing "")
  foreach(_gsreq_t IN LISTS _gsreq_TARGETS)
    if(NOT TARGET ${_gsreq_t})
      list(APPEND _gsreq_missing ${_gsreq_t})
    endif()
  endforeach()
  foreach(_gsreq_v IN LISTS _gsreq_VARIABLES)
    if(NOT ${_gsreq_v})
      list(APPEND _gsreq_missing ${_gsreq_v})
    endif()
  endforeach()
  if(_gsreq_PYTHON AND NOT _gsreq_missing)
    find_package(Python3 3.9 COMPONENTS Interpreter)
    if(NOT Python3_Interpreter_FOUND)
      list(APPEND _gsreq_missing "Python 3.9+")
    endif()
  endif()
  if(_gsreq_missing)
    list(JOIN _gsreq_missing ", " _gsreq_missing)
    message(STATUS "gpustall: ${_gsreq_WHAT} skipped: missing ${_gsreq_missing}")
    return()
  endif()
endmacro()

# gs_tests_data_starved_workload(<var>): the command line of the data_starved workload, or ""
# when neither the nvcc-built one nor the Python one (with an interpreter) is at hand.
function(gs_tests_data_starved_workload var)
  if(TARGET workload_data_starved)
    set(${var} "$<TARGET_FILE:workload_data_starved>" PARENT_SCOPE)
  elseif(GS_WORKLOADS_PYTHON AND GS_WORKLOADS_PY_DIR)
    set(${var} "${GS_WORKLOADS_PYTHON} ${GS_WORKLOADS_PY_DIR}/data_starved.py" PARENT_SCOPE)
  else()
    set(${var} "" PARENT_SCOPE)
  endif()
endfunction()
