"""sampler_phases.py -- the Python twin of sampler_phases.cc: the main thread (which makes the CUDA
calls, so the sampled one) computes, sleeps, waits on a queue, reads a pipe, selects and reads,
receives on a socket and waits on a condition, one phase at a time, while helper threads feed it.
Each phase runs in its own function (phase_<name>) so that its samples' stacks can be checked.

Prints TID, PHASE <name> <start_ns> <end_ns> (time.monotonic_ns: the trace's clock) and
RESULT lines that must be identical with and without the agent. An exception (an EINTR that
escaped as InterruptedError, anything else) fails the run with a traceback.
Run: LD_LIBRARY_PATH=<simgpu lib> python3 sampler_phases.py <dir of cudart.py>
"""

import os
import queue
import select
import socket
import sys
import threading
import time

CHUNKS = 16
CHUNK_BYTES = 4096
FEED_S = 0.025


def phase(name, fn, *args):
    start = time.monotonic_ns()
    result = fn(*args)
    print("PHASE %s %d %d" % (name, start, time.monotonic_ns()), flush=True)
    print("RESULT %s %s" % (name, result), flush=True)


def busy_loop(seconds):
    end = time.monotonic() + seconds
    x, rounds = 1, 0
    while time.monotonic() < end:
        for i in range(2000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        rounds += 1
    return "done"


def phase_busy():
    return busy_loop(0.4)


def phase_sleep():
    for _ in range(40):
        time.sleep(0.01)
    return 40


def chunk(i):
    return bytes(((i * 131 + j * 7) & 0xFF) for j in range(CHUNK_BYTES))


def feeder(write):
    def run():
        for i in range(CHUNKS):
            time.sleep(FEED_S)
            write(chunk(i))
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def checksum(data):
    h = 1469598103934665603
    for b in data[::61]:
        h = ((h * 1099511628211) ^ b) & 0xFFFFFFFFFFFFFFFF
    return "%x/%d" % (h, len(data))


def phase_queue():
    q = queue.Queue()
    t = feeder(q.put)
    data = b"".join(q.get() for _ in range(CHUNKS))
    t.join()
    return checksum(data)


def read_exactly(fd, wait_first):
    data = bytearray()
    while len(data) < CHUNKS * CHUNK_BYTES:
        if wait_first:
            ready, _, _ = select.select([fd], [], [], 5.0)
            if not ready:
                raise TimeoutError("select timed out")
        data += os.read(fd, CHUNK_BYTES)
    return bytes(data)


def pipe_phase(wait_first):
    r, w = os.pipe()
    t = feeder(lambda b: os.write(w, b))
    data = read_exactly(r, wait_first)
    t.join()
    os.close(r)
    os.close(w)
    return checksum(data)


def phase_pipe():
    return pipe_phase(False)


def phase_select():
    return pipe_phase(True)


def phase_socket():
    a, b = socket.socketpair()
    t = feeder(b.sendall)
    data = bytearray()
    while len(data) < CHUNKS * CHUNK_BYTES:
        data += a.recv(CHUNK_BYTES)
    t.join()
    a.close()
    b.close()
    return checksum(bytes(data))


def phase_condition():
    cond = threading.Condition()
    state = {"produced": 0}

    def produce(_):
        with cond:
            state["produced"] += 1
            cond.notify()
    t = feeder(produce)
    consumed = 0
    with cond:
        while consumed < CHUNKS:
            cond.wait_for(lambda: state["produced"] > consumed)
            consumed += 1
    t.join()
    return consumed


def main():
    sys.path.insert(0, sys.argv[1])
    import cudart
    rt = cudart.load()
    buf = rt.malloc(1 << 20)
    rt.memset(buf, 0, 1 << 20)
    rt.device_synchronize()
    print("TID %d" % threading.get_native_id(), flush=True)
    for name in ("busy", "sleep", "queue", "pipe", "select", "socket", "condition"):
        phase(name, globals()["phase_" + name])
    rt.free(buf)


if __name__ == "__main__":
    main()
