#!/bin/sh
# run_python_test.sh PYTHON SCRIPT ARGS... — runs SCRIPT with PYTHON, or exits 77 (ctest SKIP)
# with a visible message when that interpreter is not installed.
# GS_PYTHON_PRELOAD (sanitizer builds): preloaded into the interpreter only, not into this shell.
py="$1"; shift
if [ ! -x "$py" ]; then
  echo "SKIP: $py is not installed; this CPython version is not tested here"
  exit 77
fi
if [ -n "$GS_PYTHON_PRELOAD" ]; then
  LD_PRELOAD="$GS_PYTHON_PRELOAD" exec "$py" "$@"
fi
exec "$py" "$@"
