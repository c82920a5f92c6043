"""probe_torture.py PROBE_SO [SECONDS] — captures while the interpreter churns frames and code.

Hammer threads run freshly exec()'d functions (a new code object each time, with a unique name,
so a stale code-table entry for a reused address would show up as a wrong name) at random
recursion depths and capture from inside them, through CDLL (GIL released) and PyDLL (GIL
held). Churn threads meanwhile exec() throw-away code, run generators, recursion and lambdas,
materialise frame objects with sys._current_frames() and collect garbage.
Pass: no crash, every capture is the interpreter's own stack or an innermost prefix of it;
frames whose code object could not be stored ("<unknown>", a counted loss) are tolerated.
"""
import ctypes
import gc
import random
import sys
import threading
import time

PROBE = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
MAX = 256
UNKNOWN = ("<unknown>", "<unknown>", -1)

cdll = ctypes.CDLL(PROBE)
pydll = ctypes.PyDLL(PROBE)
for lib in (cdll, pydll):
    lib.gs_probe_capture.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.gs_probe_capture.restype = ctypes.c_int
    lib.gs_probe_stats.argtypes = [ctypes.c_char_p, ctypes.c_int]

stop = threading.Event()
lock = threading.Lock()
counts = {"captures": 0, "exact": 0, "shorter": 0, "lost_frames": 0, "wrong": 0}
wrong_examples = []
errors = []


def frames_here():
    exp = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        exp.append((code.co_filename, getattr(code, "co_qualname", code.co_name),
                    f.f_lineno if f.f_lineno is not None else -1))
        f = f.f_back
    return exp


TEMPLATE = """
def {name}(cap, buf, frames_here, depth):
    if depth > 0:
        return {name}(cap, buf, frames_here, depth - 1)
    n, exp = cap(buf, len(buf), {max}), frames_here()
    return n, exp
"""


def judge(buf, n, exp):
    got = []
    for line in buf.value.decode("utf-8").splitlines():
        f, fn, ln = line.split("\t")
        got.append((f, fn, int(ln)))
    want = exp[:MAX]
    lost = sum(1 for g in got if g == UNKNOWN)
    ok = len(got) <= len(want) and all(g == w or g == UNKNOWN for g, w in zip(got, want))
    with lock:
        counts["captures"] += 1
        counts["lost_frames"] += lost
        if not ok:
            counts["wrong"] += 1
            if len(wrong_examples) < 3:
                wrong_examples.append((got[:4], want[:4]))
        elif len(got) == len(want):
            counts["exact"] += 1
        else:
            counts["shorter"] += 1


def hammer(lib, tid):
    try:
        buf = ctypes.create_string_buffer(1 << 18)
        i = 0
        while not stop.is_set():
            i += 1
            name = "fresh_%d_%d" % (tid, i)
            ns = {}
            src = TEMPLATE.format(name=name, max=MAX)
            exec(compile(src, "<torture-%d-%d>" % (tid, i % 5), "exec"), ns)
            n, exp = ns[name](lib.gs_probe_capture, buf, frames_here, random.randint(0, 40))
            judge(buf, n, exp)
            del ns
    except Exception as e:  # noqa: BLE001 - reported as a failure below
        errors.append("hammer %d: %r" % (tid, e))


def churn(tid):
    try:
        i = 0
        while not stop.is_set():
            i += 1
            src = (
                "def g%d(k):\n"
                "    for j in range(k):\n"
                "        yield (lambda q: q * %d)(j)\n"
                "def r%d(k):\n"
                "    return 0 if k == 0 else 1 + r%d(k - 1)\n"
                "total = sum(g%d(20)) + r%d(%d)\n" % (i, i, i, i, i, i, i % 50))
            ns = {}
            exec(compile(src, "<churn-%d>" % tid, "exec"), ns)
            del ns
            if i % 50 == 0:
                sys._current_frames()
            if i % 500 == 0:
                gc.collect()
    except Exception as e:  # noqa: BLE001
        errors.append("churn %d: %r" % (tid, e))


def main():
    print("CPython %s, %.1f s" % (sys.version.split()[0], SECONDS))
    threads = [threading.Thread(target=hammer, args=(cdll, 1)),
               threading.Thread(target=hammer, args=(pydll, 2)),
               threading.Thread(target=churn, args=(3,)),
               threading.Thread(target=churn, args=(4,))]
    for t in threads:
        t.start()
    hammer_main = threading.Thread(target=hammer, args=(cdll, 5))
    hammer_main.start()
    time.sleep(SECONDS)
    stop.set()
    for t in threads + [hammer_main]:
        t.join()
    stats = ctypes.create_string_buffer(256)
    cdll.gs_probe_stats(stats, 256)
    print("%s; %s" % (counts, stats.value.decode()))
    for got, want in wrong_examples:
        print("WRONG: got %s\n       want %s" % (got, want))
    for e in errors:
        print("ERROR:", e)
    ok = not errors and counts["wrong"] == 0 and counts["captures"] > 100 and counts["exact"] > 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
