# -*- coding: utf-8 -*-
"""probe_check.py PROBE_SO — compares gs_python_stacks captures with the interpreter's own view.

At each check point the probe's capture, traceback.extract_stack() and sys._getframe() are
taken on the same line, so the innermost line numbers agree. Every frame must match exactly:
file, function (co_qualname on 3.11+, co_name before) and line. Each check runs twice: through
ctypes.CDLL (GIL released during the call) and ctypes.PyDLL (GIL held).
"""
import ctypes
import sys
import traceback

PROBE = sys.argv[1]
MAX = 64
BUF = ctypes.create_string_buffer(1 << 20)
STATE_ACTIVE = 8
failures = []
checks = 0

libs = {"CDLL": ctypes.CDLL(PROBE), "PyDLL": ctypes.PyDLL(PROBE)}
for lib in libs.values():
    lib.gs_probe_capture.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.gs_probe_capture.restype = ctypes.c_int
    lib.gs_probe_merged.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.gs_probe_merged.restype = ctypes.c_int
    lib.gs_probe_stats.argtypes = [ctypes.c_char_p, ctypes.c_int]
MODE = "CDLL"


def cap():
    """The probe entry point for the current mode; call it on the line being checked."""
    return libs[MODE].gs_probe_capture


def parse(n):
    assert n >= 0, "buffer too small"
    lines = BUF.value.decode("utf-8").splitlines()
    assert len(lines) == n
    out = []
    for line in lines:
        f, fn, ln = line.split("\t")
        out.append((f, fn, int(ln)))
    return out


def frames_here():
    """Innermost-first (file, qualname, line) of the caller's stack, read now (f_lineno of a
    live frame moves on with it)."""
    exp = []
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        name = getattr(code, "co_qualname", code.co_name)
        exp.append((code.co_filename, name, f.f_lineno if f.f_lineno is not None else -1))
        f = f.f_back
    return exp


def expected_from(exp, summary):
    """The frame-chain view, cross-checked with the traceback module's view of the same stack."""
    tb = [(s.filename, s.name, s.lineno if s.lineno is not None else -1) for s in reversed(summary)]
    assert len(tb) == len(exp), (tb, exp)
    for (tf, tn, tl), (ef, en, el) in zip(tb, exp):
        assert tf == ef and tl == el and en.split(".")[-1] == tn, ((tf, tn, tl), (ef, en, el))
    return exp


def compare(label, got, exp, max_frames=MAX):
    global checks
    checks += 1
    want = exp[:max_frames]
    if got != want:
        failures.append("%s [%s]: got %d frames, want %d\n  got:  %s\n  want: %s" % (
            label, MODE, len(got), len(want), got[:6], want[:6]))


def check(label):
    n, tb, fr = cap()(BUF, len(BUF), MAX), traceback.extract_stack(), frames_here()
    compare(label, parse(n), expected_from(fr, tb))
    return 1


# --- scenarios -------------------------------------------------------------------------------

def nested_outer():
    def middle():
        def inner():
            return check("nested closures")
        return inner()
    return middle()


class Model:
    def method(self):
        return check("method")

    @staticmethod
    def static():
        return check("staticmethod")

    @classmethod
    def klass(cls):
        return check("classmethod")

    class Inner:
        def deep(self):
            return check("nested class method")


def call_lambda():
    f = lambda: check("lambda")  # noqa: E731
    return f()


def generator():
    yield check("generator")


def run_generator():
    return next(generator())


async def coroutine():
    return check("coroutine")


def run_coroutine():
    c = coroutine()
    try:
        c.send(None)
    except StopIteration as stop:
        return stop.value


def comprehension():
    return [check("comprehension") for _ in range(1)]


def through_c_code():
    # Python -> sorted() (C) -> lambda: several evaluation-loop activations on the C stack.
    return sorted([2, 1], key=lambda x: check("lambda called from C") + x)


def función_latina():
    return check("latin-1 identifier")


def 関数():
    return check("non-latin identifier")


def recurse(k):
    if k == 0:
        n, tb, fr = cap()(BUF, len(BUF), MAX), traceback.extract_stack(), frames_here()
        got, exp = parse(n), expected_from(fr, tb)
        assert len(exp) > MAX, "recursion must exceed the capture depth"
        compare("deep recursion (%d frames, capture %d)" % (len(exp), MAX), got, exp)
        truncated = libs[MODE].gs_probe_last_truncated()
        if not truncated:
            failures.append("deep recursion [%s]: truncated flag not set" % MODE)
        return 1
    return recurse(k - 1)


def exec_code():
    ns = {"check": check}
    exec(compile("def from_exec():\n    return check('exec')\nfrom_exec()\n", "<exec-src>", "exec"), ns)


def check_merged():
    """Native frames merged with Python frames: every eval frame replaced by its run."""
    n = libs[MODE].gs_probe_merged(BUF, len(BUF))
    assert n >= 0
    lines = BUF.value.decode("utf-8").splitlines()
    head = lines[0].split()
    evals, runs, npy = int(head[1]), int(head[3]), int(head[5])
    frames = lines[1:]
    py = [l for l in frames if l.startswith("py\t")]
    leftover_evals = [l for l in frames if l.endswith("(eval)")]
    global checks
    checks += 1
    if evals != runs:
        failures.append("merge [%s]: %d native eval frames but %d Python runs\n%s" % (
            MODE, evals, runs, "\n".join(lines)))
    if len(py) != npy or leftover_evals:
        failures.append("merge [%s]: %d of %d Python frames placed, %d eval frames left\n%s" % (
            MODE, len(py), npy, len(leftover_evals), "\n".join(lines)))
    return frames


def merged_through_c():
    return sorted([2, 1], key=lambda x: merged_check_inner(x))


def merged_check_inner(x):
    frames = check_merged()
    # The lambda (called by sorted's C code) and merged_through_c must have native frames of the
    # C code between them.
    names = [l.split("\t")[2] if l.startswith("py\t") else "native" for l in frames]
    try:
        i = next(k for k, v in enumerate(names) if v.endswith("<lambda>"))
        j = next(k for k, v in enumerate(names) if v.endswith("merged_through_c"))
        if not any(v == "native" for v in names[i + 1:j]):
            failures.append("merge [%s]: no native frame between <lambda> and its C caller" % MODE)
    except StopIteration:
        failures.append("merge [%s]: frames missing: %s" % (MODE, names))
    return x


SCENARIOS = [
    lambda: check("module-level caller"),
    nested_outer,
    lambda: Model().method(),
    Model.static,
    Model.klass,
    lambda: Model.Inner().deep(),
    call_lambda,
    run_generator,
    run_coroutine,
    comprehension,
    through_c_code,
    función_latina,
    関数,
    lambda: recurse(MAX + 40),
    exec_code,
    merged_through_c,
]


def main():
    global MODE
    print("CPython %s" % sys.version.split()[0])
    state = libs["CDLL"].gs_probe_activate()
    for mode in ("CDLL", "PyDLL"):
        MODE = mode
        for scenario in SCENARIOS:
            scenario()
    # Again under a trace function (debuggers, coverage): 3.12+ instrument the bytecode for it.
    MODE = "CDLL"
    sys.settrace(lambda frame, event, arg: None)
    try:
        for scenario in SCENARIOS:
            scenario()
    finally:
        sys.settrace(None)
    # The GIL as the reader sees it: released in a CDLL call, held in a PyDLL call.
    gil = (libs["CDLL"].gs_probe_gil_held(), libs["PyDLL"].gs_probe_gil_held())
    if gil != (0, 1):
        failures.append("GilHeldByCaller through (CDLL, PyDLL) = %s, want (0, 1)" % (gil,))
    state = libs["CDLL"].gs_probe_state()
    if state != STATE_ACTIVE:
        failures.append("reader state %d, want %d (active)" % (state, STATE_ACTIVE))
    stats = ctypes.create_string_buffer(256)
    libs["CDLL"].gs_probe_stats(stats, 256)
    print("%d checks, %d failures; %s" % (checks, len(failures), stats.value.decode()))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
