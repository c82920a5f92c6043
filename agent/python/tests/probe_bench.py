"""probe_bench.py PROBE_SO — cost of one Python stack capture at depth 20 and 50 of distinct
functions, and 10 levels of nested modules (their calling functions repeat), not in ctest.

Run per interpreter, e.g.
  for p in /root/.pyenv/versions/3.*/bin/python3 /usr/bin/python3; do
    agent/python/tests/run_python_test.sh $p agent/python/tests/probe_bench.py \
        build-python/libgs_python_probe.so; done
Reports the mean over 200k captures (walk + code-table lookups, no symbolization), best of 5,
in the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that other tenants of a shared machine
do not count.
"""
import ctypes
import sys

lib = ctypes.PyDLL(sys.argv[1])
lib.gs_probe_bench.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
lib.gs_probe_bench.restype = ctypes.c_double


def stack_depth():
    d, f = 0, sys._getframe(1)
    while f is not None:
        d, f = d + 1, f.f_back
    return d


# A chain of distinct functions (distinct code objects, as in a real stack, not recursion).
SRC = "".join("def level%d(fn, n):\n    return level%d(fn, n - 1) if n > 0 else fn()\n" % (i, i + 1)
              for i in range(60)) + "def level60(fn, n):\n    return fn()\n"
NS = {}
exec(compile(SRC, "bench_levels.py", "exec"), NS)


# Nested modules the way torch.nn calls them: every level goes through the same two functions
# (Module._wrapped_call_impl and Module._call_impl) into its own forward, so two code objects
# repeat at every level of a real stack.
MODULES = "".join("def forward%d(fn, n):\n    return wrapped_call_impl(forward%d, fn, n - 1) if n > 0 else fn()\n"
                  % (i, i + 1) for i in range(40)) + "def forward40(fn, n):\n    return fn()\n" + (
    "def wrapped_call_impl(forward, fn, n):\n    return call_impl(forward, fn, n)\n"
    "def call_impl(forward, fn, n):\n    return forward(fn, n)\n")
MODULES_NS = {}
exec(compile(MODULES, "bench_modules.py", "exec"), MODULES_NS)


def in_modules(levels, fn):
    return MODULES_NS["forward0"](fn, levels)


def at_depth(target, fn):
    # This frame, the levelN frames and fn's frame make the captured depth.
    return NS["level0"](fn, target - stack_depth() - 2)


def measure():
    depth = ctypes.c_int()
    best = None
    for _ in range(5):  # a loop, not a generator: no extra frame on the measured stack
        ns = lib.gs_probe_bench(200000, 128, ctypes.byref(depth))
        best = ns if best is None else min(best, ns)
    return depth.value, best


results = [at_depth(d, measure) for d in (20, 50)]
modules = in_modules(10, measure)
print("CPython %-8s " % sys.version.split()[0] +
      "  ".join("depth %d: %.0f ns (%.1f ns/frame)" % (d, ns, ns / d) for d, ns in results) +
      "  10 nested modules, depth %d: %.0f ns (%.1f ns/frame)" % (modules[0], modules[1], modules[1] / modules[0]))
