"""gstest -- what the Python test drivers of tests/ share: failure collection and interval union.

The drivers (e2e, gsrun, scenarios, workloads' truth checker) each run several checks and report
every failure before exiting, rather than stopping at the first: `check()` records, `FAILURES`
holds them, `exit_status()` turns them into the process's exit code.
"""

FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL: " + msg, flush=True)


def check(cond, msg):
    """Records `msg` as a failure unless `cond`; returns `cond` so callers can stop early."""
    if not cond:
        fail(msg)
    return cond


def exit_status():
    """Prints the verdict of a driver's run and returns its exit code: 1 if any check failed."""
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("ok")
    return 0


def union_ns(intervals):
    """Total length covered by (start, end) intervals, overlaps counted once."""
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


# Sanitizer builds (tools/sanitize address): the agent and simgpu's libraries are instrumented,
# and a program that is not (python3, a shell, an nvcc-built binary) must load the ASan runtime
# ahead of them. tools/sanitize names it in GS_TEST_SANITIZER_PRELOAD; elsewhere it is unset and
# these change nothing.
SANITIZER_PRELOAD = __import__("os").environ.get("GS_TEST_SANITIZER_PRELOAD", "")


def preload(*libs):
    """The LD_PRELOAD value for a child that preloads `libs` (none: only the sanitizer runtime,
    when there is one)."""
    return " ".join(p for p in (SANITIZER_PRELOAD,) + libs if p)


def child_env(env):
    """`env` made ready for a child of a sanitizer build: the runtime first in LD_PRELOAD (kept
    if the caller set it already) and no leak report at exit (CPython does not free everything by
    design). Unchanged elsewhere."""
    if SANITIZER_PRELOAD:
        current = env.get("LD_PRELOAD", "")
        if not current.startswith(SANITIZER_PRELOAD):
            env["LD_PRELOAD"] = preload(*current.split())
        env["ASAN_OPTIONS"] = "halt_on_error=1:detect_leaks=0:abort_on_error=0"
    return env
