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
