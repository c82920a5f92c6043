"""probe_pyspy.py PROBE_SO PY_SPY — our capture against py-spy's view of the same process.

A thread parks inside a C call of the probe (captured just before parking, so the stack is the
same); `py-spy dump --pid` reads that thread from outside. Every Python frame must agree:
function (py-spy prints co_name; ours is the qualname on 3.11+), file base name and line.
Exits 77 (skip) when py-spy is missing or may not attach to processes here.
"""
import ctypes
import os
import re
import subprocess
import sys
import threading
import time

PROBE, PY_SPY = sys.argv[1], sys.argv[2]
if not os.access(PY_SPY, os.X_OK):
    print("SKIP: py-spy not found at %s" % PY_SPY)
    sys.exit(77)

lib = ctypes.CDLL(PROBE)
lib.gs_probe_capture_and_park.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_double]
lib.gs_probe_capture_and_park.restype = ctypes.c_int
BUF = ctypes.create_string_buffer(1 << 16)
result = {}


class Trainer:
    def load_batch(self, k):
        if k > 0:
            return self.load_batch(k - 1)
        result["n"] = lib.gs_probe_capture_and_park(BUF, len(BUF), 64, 30.0)


def worker():
    gen = (Trainer().load_batch(3) for _ in range(1))
    next(gen)


t = threading.Thread(target=worker, name="parked")
t.start()
while not lib.gs_probe_parked():  # not BUF: the parked thread wrote it without the GIL
    time.sleep(0.05)
time.sleep(0.2)
try:
    dump = subprocess.run([PY_SPY, "dump", "--pid", str(os.getpid())], capture_output=True,
                          text=True, timeout=25)
finally:
    lib.gs_probe_unpark()
    t.join()
if dump.returncode != 0:
    print("SKIP: py-spy could not dump this process: %s" % dump.stderr.strip()[:300])
    sys.exit(77)

ours = [tuple(l.split("\t")) for l in BUF.value.decode().splitlines()]
# py-spy: 'Thread 123 (idle): "parked"' then '    function (file:line)' lines, innermost first.
theirs, in_thread = [], False
for line in dump.stdout.splitlines():
    if line.startswith("Thread "):
        in_thread = '"parked"' in line
    elif in_thread:
        m = re.match(r"\s+(.+) \((.+):(\d+)\)$", line)
        if m:
            theirs.append((m.group(1), os.path.basename(m.group(2)), int(m.group(3))))
print("CPython %s: ours %d frames, py-spy %d frames" % (sys.version.split()[0], len(ours), len(theirs)))
ok = len(ours) == len(theirs) and len(ours) > 0
for (f, fn, ln), (sfn, sf, sln) in zip(ours, theirs):
    same = fn.split(".")[-1] == sfn.split(".")[-1] and os.path.basename(f) == sf and int(ln) == sln
    ok &= same
    print("%s  ours %-40s py-spy %s" % ("  " if same else "!!", "%s %s:%s" % (fn, os.path.basename(f), ln),
                                        "%s %s:%d" % (sfn, sf, sln)))
if not ok:
    print(dump.stdout)
sys.exit(0 if ok else 1)
