# GsPortable.cmake — the native files gpustall ships (the wheel: libgsagent.so, gsanalyze,
# gs_agent_env, simgpu's libraries) load on glibc 2.28 (manylinux_2_28, PyTorch's own floor: RHEL /
# Rocky 8, Ubuntu 20.04) and need no C++ runtime from the host.
#
# Why another toolchain: built with Debian 12's (glibc 2.36, GCC 12) a file imports pthread_*/dl*
# at GLIBC_2.34 (libpthread and libdl were merged into libc in 2.34), stat/fstat at 2.33,
# __libc_single_threaded at 2.32 (GCC 12's libstdc++), pthread_cond_clockwait at 2.30 (its
# std::condition_variable) and __libc_start_main at 2.34 (Debian's crt1.o): glibc's symbol versions
# follow the headers and libraries linked against, so going lower means linking against an older
# glibc. zig's `-target x86_64-linux-gnu.2.28` does that (it carries glibc 2.28's headers and
# generates that version's symbol stubs), with clang and LLVM's libc++ linked in statically; PyPI's
# ziglang wheel (tools/requirements-wheel.txt, installed by tools/setup) makes it reproducible
# without a second sysroot or a container. Measured with ziglang 0.17.0: every shipped file imports
# GLIBC_2.27 at most (NEEDED: libc, libm, libpthread.so.0, libdl.so.2, ld-linux; simgpu also
# librt.so.1), and gsanalyze built so prints byte-for-byte the reports of the GCC-built one.
#
# How (the shipped targets are built twice; everything else once):
#   - gs_add_portable_tree() (the top level) adds `portable/`, an external CMake build of this same
#     source tree with cmake/toolchains/zig-glibc-2.28.cmake, building only the shipped targets.
#     tools/wheel packages that tree. GS_BUILD_PORTABLE=OFF leaves it out (the wheel tests then
#     skip, saying so).
#   - In that tree (GS_PORTABLE_TARGET set by the toolchain file) every static dependency is built
#     from source with zig: protobuf-lite, libunwind and zstd (third_party/, as always) and Abseil
#     (gs_find_abseil: Debian's source of the installed version); zlib is Debian's PIC libz.a.
#     /usr/include is never on an include path (it would put glibc 2.36's headers in front of
#     zig's): gs_host_headers() copies the few host headers needed (zlib, RapidJSON).
#
# The development build (GCC) keeps its own rules for files loaded into other processes:
#   - arc4random@GLIBC_2.36 and _dl_find_object@GLIBC_2.35 from the static C++ runtime and
#     unwinder: agent/core/glibc_compat.c defines both (hidden), so they bind inside the file;
#   - -static-libstdc++ -static-libgcc (hidden by --exclude-libs): a job's own libstdc++ may be
#     older (conda) than GCC 12's GLIBCXX_3.4.30.
# gs_portable(TARGET...) applies those to the named targets (called from the top level, after the
# components defined them); tests/wheel checks every shipped file against the wheel's tag.

if(GS_WITH_CUDA)
  # An object library, not a static one: an archive member is only taken for references seen before
  # it, and libstdc++.a / libgcc_eh.a come last on the link line.
  add_library(gs_glibc_compat OBJECT ${PROJECT_SOURCE_DIR}/agent/core/glibc_compat.c)
  set_target_properties(gs_glibc_compat PROPERTIES
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON)
endif()

# How a shipped file carries the C++ runtime and keeps static archives' symbols to itself: GCC's
# runtime linked in, hidden by --exclude-libs; zig always links its libc++ statically with hidden
# visibility, and its linker has no --exclude-libs.
if(GS_PORTABLE_TARGET)
  set(GS_STATIC_RUNTIME_LINK_OPTIONS "")
else()
  set(GS_STATIC_RUNTIME_LINK_OPTIONS -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL)
endif()

function(gs_portable)
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    if(NOT GS_PORTABLE_TARGET)  # zig's libc++ and unwinder import neither function
      target_sources(${target} PRIVATE $<TARGET_OBJECTS:gs_glibc_compat>)
    endif()
    # Loaded into (or run by) arbitrary jobs: carry the C++ runtime, export none of it.
    target_link_options(${target} PRIVATE ${GS_STATIC_RUNTIME_LINK_OPTIONS})
  endforeach()
endfunction()

# gs_host_headers(TARGET SCOPE DIR ITEM...): TARGET includes the headers ITEM (files or folders)
# of DIR, a host library's include folder (zlib's, RapidJSON's). Normally that is DIR itself. Where
# the glibc 2.28 toolchain builds, DIR is usually /usr/include, which would put the host's C library
# headers in front of zig's: the named items are copied into a folder of TARGET's own instead.
function(gs_host_headers target scope dir)
  if(NOT GS_PORTABLE_TARGET)
    target_include_directories(${target} SYSTEM ${scope} ${dir})
    return()
  endif()
  set(_copy ${CMAKE_BINARY_DIR}/host-headers/${target})
  foreach(_item IN LISTS ARGN)
    if(NOT EXISTS ${dir}/${_item})
      message(FATAL_ERROR "gs_host_headers: ${dir}/${_item} is missing")
    endif()
    if(IS_DIRECTORY ${dir}/${_item})
      file(COPY ${dir}/${_item} DESTINATION ${_copy})
    else()
      configure_file(${dir}/${_item} ${_copy}/${_item} COPYONLY)
    endif()
  endforeach()
  target_include_directories(${target} SYSTEM ${scope} ${_copy})
endfunction()

# _gs_drop_link_items(DIR ITEMS): removes ITEMS from the link libraries of every target defined in
# DIR (a source folder added with add_subdirectory) and its subfolders.
function(_gs_drop_link_items dir items)
  get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_target IN LISTS _targets)
    foreach(_property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(_libraries ${_target} ${_property})
      if(_libraries)
        list(REMOVE_ITEM _libraries ${items})
        set_target_properties(${_target} PROPERTIES ${_property} "${_libraries}")
      endif()
    endforeach()
  endforeach()
  get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(_subdir IN LISTS _subdirs)
    _gs_drop_link_items(${_subdir} "${items}")
  endforeach()
endfunction()

# gs_find_abseil(): the absl:: targets. Debian's libabsl-dev normally; where the glibc 2.28 toolchain
# builds, Abseil's own CMake build of Debian's source of the same version (tools/fetch-deps), in
# this tree, so that gsanalyze links an Abseil compiled for zig's libc++ and glibc 2.28. Only what a
# built target needs is compiled (EXCLUDE_FROM_ALL).
macro(gs_find_abseil)
  if(GS_PORTABLE_TARGET)
    _gs_add_abseil_source()
  else()
    find_package(absl REQUIRED)
  endif()
endmacro()

# A function: its settings (third-party code, no warnings of ours: -w) stay with Abseil's folder;
# the targets it defines are global all the same.
function(_gs_add_abseil_source)
  gs_unpack_debian_source(abseil _source _version)
  set(ABSL_PROPAGATE_CXX_STD ON)
  set(ABSL_ENABLE_INSTALL OFF)
  set(BUILD_TESTING OFF)
  string(APPEND CMAKE_CXX_FLAGS " -w")
  add_subdirectory(${_source} ${CMAKE_BINARY_DIR}/third_party/abseil EXCLUDE_FROM_ALL SYSTEM)
  # Debian's latomic.diff links every Abseil library with `-Wl,--push-state,--as-needed -latomic
  # -Wl,--pop-state` (for armel); zig's linker has no --push-state, and x86-64 needs no libatomic.
  _gs_drop_link_items(${_source} "-Wl,--push-state,--as-needed;-latomic;-Wl,--pop-state")
endfunction()

# gs_add_portable_tree(): the external build `portable/` described at the top, when zig is there.
# GS_ZIG: the zig binary; by default PyPI ziglang's in the wheel venv ($GS_WHEEL_VENV or
# ~/.cache/gpustall/wheel-venv, as tools/setup makes it).
option(GS_BUILD_PORTABLE "Build the wheel's shipped files again with zig for glibc 2.28 (portable/)" ON)
if(DEFINED ENV{GS_WHEEL_VENV} AND NOT "$ENV{GS_WHEEL_VENV}" STREQUAL "")
  set(GS_WHEEL_VENV "$ENV{GS_WHEEL_VENV}")
else()
  set(GS_WHEEL_VENV "$ENV{HOME}/.cache/gpustall/wheel-venv")
endif()
# The files the wheel ships, built in portable/.
set(GS_SHIPPED_TARGETS gsagent gsanalyze gs_agent_env simgpu_driver simgpu_cudart simgpu_cupti simgpu_cuda)
set(GS_PORTABLE_DIR ${CMAKE_BINARY_DIR}/portable)

function(gs_add_portable_tree)
  # Not inside itself, and not beside a sanitizer or fuzzing build (those trees test, never ship).
  if(NOT GS_BUILD_PORTABLE OR GS_PORTABLE_TARGET OR GS_SANITIZE OR GS_FUZZ)
    return()
  endif()
  if(NOT GS_ZIG)
    file(GLOB _zigs ${GS_WHEEL_VENV}/lib/python3*/site-packages/ziglang/zig)
    set(_zig "")
    if(_zigs)
      list(GET _zigs 0 _zig)
    endif()
  else()
    set(_zig ${GS_ZIG})
  endif()
  if(NOT _zig OR NOT EXISTS "${_zig}")
    message(STATUS "gpustall: no zig in ${GS_WHEEL_VENV} (tools/setup installs it): the glibc 2.28 "
                   "build (portable/) is left out and the wheel tests skip")
    return()
  endif()
  include(ExternalProject)
  # The same source tree, its own build folder, only the shipped targets; rebuilt incrementally
  # with every build of this tree (BUILD_ALWAYS: ninja there decides what is out of date).
  set(_build_commands "")
  foreach(_target IN LISTS GS_SHIPPED_TARGETS)
    list(APPEND _build_commands --target ${_target})
  endforeach()
  ExternalProject_Add(gs_portable_tree
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${GS_PORTABLE_DIR}
    CMAKE_GENERATOR ${CMAKE_GENERATOR}
    CMAKE_ARGS
      -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/toolchains/zig-glibc-2.28.cmake
      -DGS_ZIG=${_zig}
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
      -DGS_BUILD_TESTS=OFF
      -DGS_BUILD_BENCH=OFF
      -DGS_DEPS_CACHE=${_deps_cache}  # cmake/GsDebianSource.cmake
      -DGS_CUDA12_CACHE=${GS_CUDA12_CACHE}
      -DCUDAToolkit_ROOT=${GS_CUDA_ROOT}
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> ${_build_commands}
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    USES_TERMINAL_BUILD ON)
endfunction()
