"""sampler_bench_workload.py -- a CPU-bound Python training-loop stand-in for the sampler benchmark:
each step runs pure-Python work 20 frames deep, then one CUDA call (so the main thread is a thread
that issues CUDA work, the kind the sampler samples). Prints "wall_s cpu_s": the loop's wall time
and the process's CPU time over it (all threads: the agent's writer and sampler included), then
the main thread's CPU time and the agent's sampler thread's ("gpustall-sample", from /proc; 0
without it) over the whole run.
Run: LD_LIBRARY_PATH=<simgpu lib> python3 sampler_bench_workload.py <dir of cudart.py> [steps]
"""
import os
import sys
import time


def work(depth, n):
    if depth:
        return work(depth - 1, n)
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def main():
    sys.path.insert(0, sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    import cudart
    rt = cudart.load()
    buf = rt.malloc(4096)
    rt.memset(buf, 0, 4096)
    rt.device_synchronize()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        work(20, 20000)
        rt.memset(buf, 0, 4096)
    rt.device_synchronize()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    sampler = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            if open("/proc/self/task/%s/comm" % tid).read().strip() != "gpustall-sample":
                continue
            stat = open("/proc/self/task/%s/stat" % tid).read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        sampler += (int(fields[11]) + int(fields[12])) / tick
    print("%.6f %.6f %.6f %.6f" % (wall, cpu, time.thread_time(), sampler))


if __name__ == "__main__":
    main()
