# GsPyenv.cmake — the CPython versions the Python stack reader supports (3.9 to 3.13), as pyenv
# installs them, for the tests that run each one (agent/python, tests/sampler, tests/scenarios).
# A version that is not installed still gets its tests: they SKIP (exit 77) with a message that
# names the missing interpreter, so a missing version shows in every test summary.
#   GS_PYTHON_ROOT           pyenv root holding versions/3.X.Y (-DGS_PYTHON_ROOT=... overrides)
#   GS_PYENV_MINORS          9 10 11 12 13
#   gs_pyenv_python(MINOR <var>)   the interpreter of 3.MINOR, or a .../3.MINOR.missing/... path

if(DEFINED ENV{PYENV_ROOT})
  set(_gs_pyenv_default "$ENV{PYENV_ROOT}")
elseif(EXISTS "$ENV{HOME}/.pyenv")
  set(_gs_pyenv_default "$ENV{HOME}/.pyenv")
else()
  set(_gs_pyenv_default "/root/.pyenv")
endif()
set(GS_PYTHON_ROOT "${_gs_pyenv_default}" CACHE PATH "pyenv root holding versions/3.X.Y")
set(GS_PYENV_MINORS 9 10 11 12 13)

function(gs_pyenv_python minor var)
  # The newest patch release of 3.MINOR, not a free-threaded build (3.13t: a trailing "t").
  file(GLOB _found LIST_DIRECTORIES true "${GS_PYTHON_ROOT}/versions/3.${minor}.*")
  list(SORT _found COMPARE NATURAL)
  set(_exe "${GS_PYTHON_ROOT}/versions/3.${minor}.missing/bin/python3")
  foreach(dir IN LISTS _found)
    if(EXISTS "${dir}/bin/python3" AND NOT dir MATCHES "t$")
      set(_exe "${dir}/bin/python3")
    endif()
  endforeach()
  set(${var} "${_exe}" PARENT_SCOPE)
endfunction()
