"""sampler_threads_workload.py -- 8 threads that issue CUDA work (so the sampler samples all 8), half
computing and half blocked, for run_sampler_threads_bench:
  running  the main thread and 3 others: SHA-256 over 256 KiB (C code, the GIL released, so they
           are on a CPU, not waiting for the GIL), then one CUDA call, in a loop;
  blocked  4 threads, each in a loop of one blocking call then one CUDA call: time.sleep(25 ms),
           queue.Queue.get, socket recv, pipe read; a feeder thread (no CUDA: not sampled) puts
           an item on the queue, the socket and the pipe every 25 ms. Each wait is a new one
           (the thread ran in between), the sampler's costliest case for a blocked thread.
Prints "wall_s cpu_s sampler_cpu_s sleep_call_s sleep_calls start_ns end_ns": the window's wall time, the
process's CPU time over it (all threads), the agent's sampler thread's ("gpustall-sample") CPU
time over it (/proc/self/task/<tid>/schedstat, ns; 0 without the agent or with GS_SAMPLE_HZ=0:
no such thread), the mean wall time of one time.sleep(25 ms) call and how many were made, and the
window's bounds on CLOCK_MONOTONIC (the trace's clock: its samples are counted in the window).
Run: LD_LIBRARY_PATH=<simgpu lib> python3 sampler_threads_workload.py <dir of cudart.py> [seconds]
"""
import hashlib
import os
import queue
import socket
import sys
import threading
import time

WAIT_S = 0.025


def sampler_cpu_s():
    for tid in os.listdir("/proc/self/task"):
        try:
            if open("/proc/self/task/%s/comm" % tid).read().strip() == "gpustall-sample":
                return int(open("/proc/self/task/%s/schedstat" % tid).read().split()[0]) / 1e9
        except OSError:
            continue
    return 0.0


def main():
    sys.path.insert(0, sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    import cudart
    rt = cudart.load()
    bufs = [rt.malloc(4096) for _ in range(8)]
    rt.memset(bufs[0], 0, 4096)  # the agent activates here: the sampler thread exists from now
    rt.device_synchronize()
    stop = threading.Event()
    data = os.urandom(256 * 1024)
    items = queue.Queue()
    sock_in, sock_out = socket.socketpair()
    pipe_in, pipe_out = os.pipe()
    sleeps = []

    def running(buf):
        while not stop.is_set():
            hashlib.sha256(data).digest()
            rt.memset(buf, 0, 4096)

    def blocked(kind, buf):
        while not stop.is_set():
            if kind == "sleep":
                t0 = time.perf_counter()
                time.sleep(WAIT_S)
                sleeps.append(time.perf_counter() - t0)
            elif kind == "queue":
                items.get()
            elif kind == "socket":
                sock_in.recv(1)
            else:
                os.read(pipe_in, 1)
            rt.memset(buf, 0, 4096)

    def feeder():
        while not stop.is_set():
            time.sleep(WAIT_S)
            items.put(1)
            sock_out.send(b"x")
            os.write(pipe_out, b"x")
        for _ in range(2):  # unblock the last waits
            items.put(1)
            sock_out.send(b"x")
            os.write(pipe_out, b"x")

    threads = [threading.Thread(target=running, args=(bufs[i],)) for i in (1, 2, 3)]
    threads += [threading.Thread(target=blocked, args=(k, bufs[4 + i]))
                for i, k in enumerate(("sleep", "queue", "socket", "pipe"))]
    feed = threading.Thread(target=feeder)
    m0 = time.monotonic_ns()
    t0, c0, s0 = time.perf_counter(), time.process_time(), sampler_cpu_s()
    for t in threads + [feed]:
        t.start()
    end = t0 + seconds
    while time.perf_counter() < end:
        hashlib.sha256(data).digest()
        rt.memset(bufs[0], 0, 4096)
    stop.set()
    for t in threads + [feed]:
        t.join()
    rt.device_synchronize()
    wall, cpu, sampler = time.perf_counter() - t0, time.process_time() - c0, sampler_cpu_s() - s0
    print("%.6f %.6f %.6f %.9f %d %d %d" % (wall, cpu, sampler, sum(sleeps) / len(sleeps),
                                            len(sleeps), m0, time.monotonic_ns()))


if __name__ == "__main__":
    main()
