# deps.agent_style_link, run with cmake -P: LIB (the test library), LOADER (the program that
# dlopens it), READELF, NM, SANITIZE (GS_SANITIZE: its runtime is then an expected dependency). Checks what a process that loads an agent-style library sees: its
# dependencies, its exports, and that it works.
cmake_minimum_required(VERSION 3.22)

# 1. Dependencies: only C-library-level libraries (no libprotobuf, libunwind, liblzma, libstdc++,
#    libgcc_s), and no text relocations.
execute_process(COMMAND ${READELF} -dW ${LIB} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIB} failed")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]+\\]" needed_lines "${dynamic}")
set(allowed libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 ld-linux-x86-64.so.2)
if(SANITIZE STREQUAL "address")
  list(APPEND allowed libasan.so.8 libubsan.so.1)
elseif(SANITIZE STREQUAL "thread")
  list(APPEND allowed libtsan.so.2)
endif()
set(bad "")
foreach(line IN LISTS needed_lines)
  string(REGEX REPLACE ".*\\[([^]]+)\\]$" "\\1" name "${line}")
  if(NOT name IN_LIST allowed)
    list(APPEND bad ${name})
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "NEEDED beyond the C library: ${bad}")
endif()
if(dynamic MATCHES "\\(TEXTREL\\)")
  message(FATAL_ERROR "${LIB} has text relocations (non-PIC code inside)")
endif()

# 2. Exports: exactly gs_deps_probe, unversioned (no protobuf, unw_*/_U*, C++ runtime symbols).
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE exported RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D ${LIB} failed")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${exported}")
set(names "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^[0-9a-fA-F]* *[A-Za-z] " "" name "${line}")
  list(APPEND names "${name}")
endforeach()
if(NOT names STREQUAL "gs_deps_probe")
  message(FATAL_ERROR "exported symbols should be exactly gs_deps_probe, are:\n${exported}")
endif()

# 3. It loads with dlopen and works: encoding and unwinding (the loader checks the results).
execute_process(COMMAND ${LOADER} ${LIB} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "loader failed (${rc}):\n${out}${err}")
endif()
message(STATUS "${out}")
