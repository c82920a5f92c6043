cmake_minimum_required(VERSION 3.22)
# symbol_hygiene_test.cmake — checks what libgsagent.so shows the process it is injected into.
#   cmake -DLIB=libgsagent.so -DMAP=gsagent.map -P symbol_hygiene_test.cmake
# 1. `nm -D --defined-only` lists exactly the names of the export list (no protobuf, abseil,
#    libstdc++ or agent symbol leaked), each UNVERSIONED (a named version node stops interposition).
# 2. The library defines no version node of its own (readelf: no .gnu.version_d).
# 3. NEEDED holds only C-library-level libraries: never libcudart/libcupti (dlopen'ed), never
#    libstdc++/libgcc_s (linked statically), nor protobuf/abseil/unwind .so files.
# 4. The export list holds the entry points that matter (so an empty table cannot pass): CUDA
#    calls from cuda_api.def, blocking libc calls from host_wait.def.
function(fail msg)
  message(FATAL_ERROR "symbol hygiene: ${msg}")
endfunction()

file(STRINGS ${MAP} map_lines)
set(expected "")
foreach(line IN LISTS map_lines)
  if(line MATCHES "^[ \t]*([A-Za-z_][A-Za-z0-9_]*);[ \t]*$")
    list(APPEND expected ${CMAKE_MATCH_1})
  endif()
endforeach()
foreach(required InitializeInjection InitializeInjectionNvtx2 cudaMemcpy cudaMemcpyAsync cudaLaunchKernel __cudaLaunchKernel
                 __cudaLaunchKernel_ptsz cudaMemcpyAsync_ptsz cudaMemcpy_ptds cudaStreamSynchronize
                 cudaHostAlloc cudaFreeHost
                 nanosleep clock_nanosleep pthread_cond_wait pthread_cond_timedwait pthread_cond_clockwait
                 sem_wait read poll select epoll_wait __read_chk __poll_chk)
  if(NOT required IN_LIST expected)
    fail("${required} is missing from the export list ${MAP}")
  endif()
endforeach()
list(SORT expected)

execute_process(COMMAND nm -D --defined-only ${LIB} OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("nm failed on ${LIB}")
endif()
string(REPLACE "\n" ";" nm_lines "${nm_out}")
set(exported "")
foreach(line IN LISTS nm_lines)
  if(line MATCHES "^[0-9a-fA-F]+ ([A-Za-z]) (.+)$")
    set(name ${CMAKE_MATCH_2})
    if(name MATCHES "@")
      fail("${name} is exported with a symbol version; interposers must be unversioned")
    endif()
    list(APPEND exported ${name})
  endif()
endforeach()
list(SORT exported)
if(NOT exported STREQUAL expected)
  set(extra ${exported})
  list(REMOVE_ITEM extra ${expected})
  set(missing ${expected})
  list(REMOVE_ITEM missing ${exported})
  fail("exports differ from the export list.\n  exported but not listed: ${extra}\n  listed but not exported: ${missing}")
endif()

execute_process(COMMAND readelf -V ${LIB} OUTPUT_VARIABLE readelf_v)
if(readelf_v MATCHES "Version definition section")
  fail("libgsagent.so defines a version node (named version script?)")
endif()

execute_process(COMMAND readelf -d ${LIB} OUTPUT_VARIABLE readelf_d RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("readelf -d failed")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" needed_entries "${readelf_d}")
set(allowed libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 ld-linux-x86-64.so.2)
set(needed "")
foreach(entry IN LISTS needed_entries)
  string(REGEX REPLACE "Shared library: \\[([^]]+)\\]" "\\1" lib "${entry}")
  list(APPEND needed ${lib})
  if(lib IN_LIST allowed)
    continue()
  endif()
  # A sanitizer build (GS_SANITIZE) links the sanitizer runtimes into everything, by design.
  if(SANITIZE AND lib MATCHES "^lib(asan|ubsan|tsan)\\.so")
    continue()
  endif()
  if(lib MATCHES "libcudart|libcupti|libcuda\\.|libstdc\\+\\+|libgcc_s")
    fail("NEEDED ${lib}: CUDA libraries are dlopen'ed and the C++ runtime is static")
  endif()
  fail("NEEDED ${lib}: only C-library-level dependencies are allowed (${allowed})")
endforeach()
execute_process(COMMAND ldd ${LIB} OUTPUT_VARIABLE ldd_out)
if(ldd_out MATCHES "libcudart|libcupti|libcuda\\.so")
  fail("ldd shows a CUDA library (they are dlopen'ed, never linked):\n${ldd_out}")
endif()
if(NOT SANITIZE AND ldd_out MATCHES "libstdc\\+\\+|libgcc_s")
  fail("ldd shows the shared C++ runtime (it must be linked statically):\n${ldd_out}")
endif()
list(LENGTH exported n)
message(STATUS "libgsagent.so exports ${n} symbols; NEEDED: ${needed}")
