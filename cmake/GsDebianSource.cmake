# GsDebianSource.cmake — gs_unpack_debian_source(): a Debian source package from the cache that
# tools/fetch-deps fills (tools/setup runs it), unpacked with Debian's patches applied into the build
# folder at configure time. Nothing is downloaded here. Used by third_party/ (the agent's static
# libraries) and cmake/GsPortable.cmake (Abseil, for the glibc 2.28 build).

set(GS_DEPS_CACHE "" CACHE PATH
    "Folder of Debian source packages filled by tools/fetch-deps (empty: the same default as the script)")
if(GS_DEPS_CACHE)
  set(_deps_cache ${GS_DEPS_CACHE})
elseif(DEFINED ENV{GS_DEPS_CACHE} AND NOT "$ENV{GS_DEPS_CACHE}" STREQUAL "")
  set(_deps_cache $ENV{GS_DEPS_CACHE})
elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_deps_cache $ENV{XDG_CACHE_HOME}/gpustall/deps)
else()
  set(_deps_cache $ENV{HOME}/.cache/gpustall/deps)
endif()

# gs_unpack_debian_source(<package> <out-dir-var> <out-upstream-version-var>)
# Unpacks <cache>/<package>.dsc (a link to the version in use) with dpkg-source, which also checks
# the files' checksums and applies Debian's patches. Re-unpacks only when the .dsc changes.
function(gs_unpack_debian_source package out_dir out_version)
  set(_link ${_deps_cache}/${package}.dsc)
  if(NOT EXISTS ${_link})
    message(FATAL_ERROR
      "third_party: the source of ${package} is not in ${_deps_cache}.\n"
      "Run tools/fetch-deps (tools/setup runs it), or set GS_DEPS_CACHE to the folder it filled.")
  endif()
  get_filename_component(_dsc ${_link} REALPATH)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_link} ${_dsc})
  file(STRINGS ${_dsc} _version_line REGEX "^Version: " LIMIT_COUNT 1)
  string(REGEX REPLACE "^Version: ([0-9]+:)?([^-]+)(-.*)?$" "\\2" _upstream "${_version_line}")
  string(REGEX REPLACE "^Version: ([0-9]+:)?" "" _debian_version "${_version_line}")
  if(NOT _upstream)
    message(FATAL_ERROR "third_party: ${_dsc} has no Version field")
  endif()

  set(_dir ${CMAKE_BINARY_DIR}/third_party/src/${package}-${_debian_version})
  set(_stamp ${_dir}.unpacked)
  file(SHA256 ${_dsc} _dsc_sum)
  set(_stamp_sum "")
  if(EXISTS ${_stamp})
    file(READ ${_stamp} _stamp_sum)
  endif()
  if(NOT _stamp_sum STREQUAL _dsc_sum OR NOT EXISTS ${_dir})
    find_program(GS_DPKG_SOURCE dpkg-source)
    if(NOT GS_DPKG_SOURCE)
      message(FATAL_ERROR "third_party: dpkg-source is missing (package dpkg-dev; tools/setup installs it)")
    endif()
    file(REMOVE_RECURSE ${_dir} ${_stamp})
    file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/third_party/src)
    execute_process(
      COMMAND ${GS_DPKG_SOURCE} -x ${_dsc} ${_dir}
      WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/third_party/src
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _log ERROR_VARIABLE _log)
    if(NOT _rc EQUAL 0)
      file(REMOVE_RECURSE ${_dir})
      message(FATAL_ERROR "third_party: dpkg-source -x ${_dsc} failed:\n${_log}\n"
                          "Run tools/fetch-deps again to repair the cache.")
    endif()
    file(WRITE ${_stamp} ${_dsc_sum})
  endif()
  set(${out_dir} ${_dir} PARENT_SCOPE)
  set(${out_version} ${_upstream} PARENT_SCOPE)
endfunction()
