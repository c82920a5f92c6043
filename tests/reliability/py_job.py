"""py_job.py -- a Python training-job shape for the reliability tests (run on simgpu).

    py_job.py --py-dir DIR workers-fork|workers-spawn|os-exit

workers-*: a DataLoader-style input pipeline: a multiprocessing Pool (start method fork or spawn)
of 2 worker processes prepares batches on the CPU (no CUDA in the workers); the main process
copies each batch to the device, launches a kernel and synchronises, 8 steps. Exits 0.
os-exit: 1000 steps, prints, then os._exit(7) (no atexit handlers, no interpreter teardown).

stdout holds only deterministic lines, so it can be compared with and without the agent.
"""
import argparse
import ctypes
import multiprocessing
import os
import sys


def make_batch(index):
    """A worker's batch: deterministic CPU work, no CUDA."""
    acc = 0
    for i in range(20000):
        acc = (acc * 31 + i + index) % 1000003
    return index, acc


def step(rt, kernel, host, device, nbytes, value):
    ctypes.memset(host, value % 256, nbytes)
    rt.memcpy(device, host, nbytes, 1)  # HOST_TO_DEVICE
    rt.launch(kernel)
    rt.device_synchronize()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--py-dir", required=True)
    parser.add_argument("mode", choices=["workers-fork", "workers-spawn", "os-exit"])
    args = parser.parse_args()
    sys.path.insert(0, args.py_dir)
    import cudart  # noqa: E402  (tests/workloads/py)

    rt = cudart.load()
    nbytes = 1 << 16
    host = rt.malloc_host(nbytes)
    device = rt.malloc(nbytes)
    kernel = rt.simgpu_kernel("py_job_kernel", 300_000)
    if args.mode == "os-exit":
        for i in range(1000):  # ~0.3-1 s: many periodic flushes happen before the end
            step(rt, kernel, host, device, nbytes, i)
        print("os-exit: 1000 steps", flush=True)
        os._exit(7)

    method = args.mode.split("-")[1]
    ctx = multiprocessing.get_context(method)
    total = 0
    with ctx.Pool(2) as pool:
        for index, acc in pool.imap(make_batch, range(8)):
            step(rt, kernel, host, device, nbytes, acc)
            total += acc
    rt.free(device)
    rt.free_host(host)
    print("%s: 8 batches from 2 workers, checksum %d" % (args.mode, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
