# GsPortable.cmake — the native files gpustall ships (the wheel: libgsagent.so, simgpu's libraries,
# gs_agent_env) load on glibc 2.34 and need no C++ runtime from the host.
#
# Built with Debian 12's toolchain (glibc 2.36, GCC 12), a file imports:
#   - pthread_*/dl* at GLIBC_2.34 (libpthread and libdl were merged into libc in 2.34): the floor
#     for this toolchain. Going lower means linking against an older glibc (another sysroot, e.g.
#     zig's x86_64-linux-gnu.2.28 stubs) and rebuilding every static dependency with it. Measured:
#     `zig c++ -target x86_64-linux-gnu.2.28` (PyPI ziglang 0.17.1) makes a shared library with
#     threads, dlopen, exceptions and std::random_device that imports GLIBC_2.16 at most (NEEDED:
#     libc, libpthread.so.0, libdl.so.2) and compiles third_party's protobuf-lite; what stops it
#     today is -I/usr/include from the Protobuf/Abseil targets (Debian's glibc 2.36 headers shadow
#     zig's) and gsanalyze's Debian Abseil/protobuf (libstdc++ ABI, zig uses libc++);
#   - arc4random@GLIBC_2.36 and _dl_find_object@GLIBC_2.35 from the static C++ runtime and
#     unwinder: agent/core/glibc_compat.c defines both (hidden), so they bind inside the file;
#   - GLIBCXX_3.4.30 (GCC 12's libstdc++.so) where the runtime is shared: above manylinux_2_34's
#     3.4.29, hence -static-libstdc++ -static-libgcc (hidden by --exclude-libs).
# gsanalyze is left as it is: it needs GLIBCXX <= 3.4.29 and GLIBC <= 2.34 already, and auditwheel
# bundles its Abseil libraries. tests/wheel checks every shipped file against the wheel's tag.
#
# gs_portable(TARGET...) applies the above to the named targets (called from the top level, after
# the components defined them).

set(GS_PORTABLE_GLIBC "2.34" CACHE INTERNAL "the newest glibc version a shipped native file may import")

if(GS_WITH_CUDA)
  # An object library, not a static one: an archive member is only taken for references seen before
  # it, and libstdc++.a / libgcc_eh.a come last on the link line.
  add_library(gs_glibc_compat OBJECT ${PROJECT_SOURCE_DIR}/agent/core/glibc_compat.c)
  set_target_properties(gs_glibc_compat PROPERTIES
    C_VISIBILITY_PRESET hidden
    POSITION_INDEPENDENT_CODE ON)
endif()

function(gs_portable)
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:gs_glibc_compat>)
    # Loaded into (or run by) arbitrary jobs: carry the C++ runtime, export none of it.
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL)
  endforeach()
endfunction()
