"""probe_remote.py PROBE_SO [SECONDS] — reads other threads' Python frames while they run.

The sampler reads a thread's frames from its own thread (PythonStackReader::CaptureThread) when
that thread is blocked, or running without being signalled. A running thread pushes and pops
frames meanwhile: a read can see a frame whose `previous` is not written yet, or a slot already
reused by the next call. Such a read must be discarded, never returned as a shorter stack that a
flame graph would show as a second root.

Target threads call through layers of functions, generators, `with` blocks on a Condition and
queue hand-overs (the data-loader pattern), as fast as they can; this thread reads them through
CDLL (GIL released, so they keep running on the other core).
Pass: no crash; every non-empty read ends at the thread's root (threading's Thread._bootstrap)
and contains the target's own root function; at least one read of each kind of target succeeded.
"""
import ctypes
import queue
import sys
import threading
import time

PROBE = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
MAX = 256

lib = ctypes.CDLL(PROBE)
lib.gs_probe_capture_thread.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
lib.gs_probe_capture_thread.restype = ctypes.c_int
lib.gs_probe_activate.restype = ctypes.c_int
lib.gs_probe_stats.argtypes = [ctypes.c_char_p, ctypes.c_int]

stop = threading.Event()
errors = []


def leaf(k):
    return k * 3


def gen(k):
    for j in range(k):
        yield leaf(j)


def layer(depth, cond):
    if depth == 0:
        with cond:
            total = sum(gen(4))
        return total + (lambda q: q + 1)(depth)
    return layer(depth - 1, cond)


def churn_root(ready):
    """Target 1: pushes and pops frames without a pause."""
    cond = threading.Condition()
    ready.set()
    i = 0
    while not stop.is_set():
        i += 1
        layer(i % 12, cond)


def handover_root(ready, batches):
    """Target 2: a consumer that blocks on a queue and wakes for each item (the loader pattern)."""
    ready.set()
    while not stop.is_set():
        try:
            batches.get(timeout=0.05)
        except queue.Empty:
            pass


def producer(batches):
    while not stop.is_set():
        try:
            batches.put(bytearray(64), timeout=0.05)
        except queue.Full:
            pass
        time.sleep(0.0002)


def judge(buf, n, root, counts):
    if n <= 0:
        counts["empty"] += 1
        return
    frames = [line.split("\t") for line in buf.value.decode("utf-8").splitlines()]
    functions = [f[1] for f in frames]
    outer_file, outer_function = frames[-1][0], frames[-1][1]
    if (outer_function.endswith("_bootstrap") and outer_file.endswith("threading.py")
            and root in functions):
        counts["rooted"] += 1
    else:
        counts["stray"] += 1
        if len(counts["examples"]) < 3:
            counts["examples"].append(functions[:4] + ["..."] + functions[-2:])


def read_target(target, root, seconds):
    counts = {"rooted": 0, "stray": 0, "empty": 0, "examples": []}
    buf = ctypes.create_string_buffer(1 << 16)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        n = lib.gs_probe_capture_thread(target.native_id, buf, len(buf), MAX)
        if n == -2:
            errors.append("no thread state for %s" % root)
            break
        judge(buf, n, root, counts)
    return counts


def main():
    print("CPython %s, %.1f s" % (sys.version.split()[0], SECONDS))
    if sys.version_info < (3, 8):
        print("SKIP: threading.Thread.native_id needs 3.8")
        return 77
    lib.gs_probe_activate()
    batches = queue.Queue(maxsize=2)
    ready = [threading.Event(), threading.Event()]
    targets = [(threading.Thread(target=churn_root, args=(ready[0],)), "churn_root"),
               (threading.Thread(target=handover_root, args=(ready[1], batches)), "handover_root")]
    feeder = threading.Thread(target=producer, args=(batches,))
    for t, _ in targets:
        t.start()
    feeder.start()
    for r in ready:
        r.wait()
    results = [(root, read_target(t, root, SECONDS / 2)) for t, root in targets]
    stop.set()
    for t, _ in targets:
        t.join()
    feeder.join()
    stats = ctypes.create_string_buffer(256)
    lib.gs_probe_stats(stats, len(stats))
    failed = list(errors)
    for root, c in results:
        print("%s: %d rooted, %d stray, %d empty (discarded or no frames); examples %s" % (
            root, c["rooted"], c["stray"], c["empty"], c["examples"]))
        if c["stray"]:
            failed.append("%s: %d read(s) not rooted at Thread._bootstrap" % (root, c["stray"]))
        if c["rooted"] == 0:
            failed.append("%s: no read succeeded" % root)
    print("reader stats: %s" % stats.value.decode())
    if failed:
        print("FAIL: " + "; ".join(failed))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
