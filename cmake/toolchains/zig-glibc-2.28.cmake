# zig-glibc-2.28.cmake — a CMake toolchain file: zig's clang, linking against glibc 2.28's symbol
# stubs, so every file built with it imports nothing newer than GLIBC_2.28 (the manylinux_2_28
# floor, PyTorch's own). tools/wheel builds the shipped shared libraries with it (cmake/GsPortable.cmake
# says why and what); it is not the development toolchain.
#
#   cmake -S . -B DIR -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/zig-glibc-2.28.cmake -DGS_ZIG=/path/to/zig
#
# GS_ZIG: the zig binary of PyPI's ziglang (tools/setup installs it into the wheel venv; pinned in
# tools/requirements-wheel.txt). zig takes `cc`/`c++` and the target as arguments, CMake wants one
# program per language: two wrapper scripts in the build folder.
# C++ code is compiled and linked against zig's libc++ (statically); no libstdc++ is involved.

set(GS_PORTABLE_TARGET "x86_64-linux-gnu.2.28" CACHE STRING "zig's target triple (glibc version last)")
if(NOT GS_ZIG)
  set(GS_ZIG "$ENV{GS_ZIG}")
endif()
if(NOT GS_ZIG OR NOT EXISTS "${GS_ZIG}")
  message(FATAL_ERROR "zig-glibc-2.28.cmake: set GS_ZIG to the zig binary (PyPI ziglang; tools/setup "
                      "installs it in the wheel venv)")
endif()
# Try-compiles run in their own projects: hand them the setting.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GS_ZIG GS_PORTABLE_TARGET)

# Not a cross build (CMAKE_SYSTEM_NAME stays unset): the host's programs (protoc) run, and find_*
# looks where Debian keeps x86-64 files, which zig's driver does not report.
set(CMAKE_LIBRARY_ARCHITECTURE x86_64-linux-gnu)

set(_gs_zig_wrappers "${CMAKE_BINARY_DIR}/zig-wrappers")
foreach(_tool cc c++)
  file(WRITE "${_gs_zig_wrappers}/tmp/zig-${_tool}"
       "#!/bin/sh\nexec \"${GS_ZIG}\" ${_tool} -target ${GS_PORTABLE_TARGET} \"$@\"\n")
  file(COPY "${_gs_zig_wrappers}/tmp/zig-${_tool}" DESTINATION "${_gs_zig_wrappers}"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endforeach()
set(CMAKE_C_COMPILER "${_gs_zig_wrappers}/zig-cc")
set(CMAKE_CXX_COMPILER "${_gs_zig_wrappers}/zig-c++")
