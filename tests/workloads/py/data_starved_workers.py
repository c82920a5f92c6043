"""data_starved_workers -- a training loop fed by --workers worker PROCESSES (multiprocessing, start
method --start-method fork|spawn|forkserver) through a multiprocessing.Queue, as a PyTorch
DataLoader with num_workers does. Each worker makes one batch per --work-ms: with --wait none
(default) by CPU work in make_batch(); with --wait sleep by sleeping in wait_for_storage(); with
--wait pipe by reading a slow pipe that a feeder thread of the worker fills in
wait_for_storage(). The training thread blocks in get_batch_from_workers() until a batch arrives,
copies it H2D (pinned, async) and launches the step's kernels ((layers+1) ms).

Expected verdict: GPU utilisation ~ (layers+1) / (work_ms / workers), 25% at the defaults; the
idle time is the training thread waiting on the queue in get_batch_from_workers(). The agent's
process records say the workers are CPU-busy (--wait none) or sleeping (sleep, pipe).
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 data_starved_workers.py [--steps N]
     [--workers N] [--work-ms MS] [--start-method fork|spawn|forkserver] [--wait none|sleep|pipe]
     [--start-workers after-cuda|before-cuda]
"""

import argparse
import multiprocessing
import os
import queue
import sys
import threading
import time

import cudart
import workload


def make_batch(samples, work_ms):
    """PLANTED: a worker's CPU work for one batch (decoding, augmentation)."""
    return workload.cpu_work(samples, work_ms)


def wait_for_storage(work_ms, slow_pipe):
    """PLANTED (--wait sleep|pipe): the worker waits for its data instead of computing it."""
    if slow_pipe is None:
        time.sleep(work_ms / 1000.0)
        return 0
    return len(os.read(slow_pipe, 1))


def slow_feeder(write_fd, work_ms, stop):
    """--wait pipe: one byte per --work-ms into the worker's pipe (a slow remote file)."""
    while not stop.is_set():
        time.sleep(work_ms / 1000.0)
        try:
            os.write(write_fd, b"x")
        except OSError:
            return


def worker_main(worker_id, workers, batches, stop, nbytes, work_ms, wait):
    """One input worker process: make a batch, put it on the queue, until told to stop. Worker i
    starts i/workers of a batch late, so batches arrive evenly spaced."""
    time.sleep(work_ms / 1000.0 * worker_id / workers)
    samples = workload.float_buffer(64 * 1024, 0.5)
    slow_pipe = None
    feeder_stop = threading.Event()
    if wait == "pipe":
        read_fd, write_fd = os.pipe()
        slow_pipe = read_fd
        threading.Thread(target=slow_feeder, args=(write_fd, work_ms, feeder_stop), daemon=True).start()
    step = 0
    while not stop.is_set():
        if wait == "none":
            make_batch(samples, work_ms)
        else:
            wait_for_storage(work_ms, slow_pipe)
        batch = bytearray(nbytes)
        batch[0:8] = (worker_id * 1000000 + step).to_bytes(8, "little")
        step += 1
        while not stop.is_set():
            try:
                batches.put(bytes(batch), timeout=0.05)
                break
            except queue.Full:
                pass
    feeder_stop.set()
    batches.cancel_join_thread()  # exit without flushing batches nobody will read


def get_batch_from_workers(batches):
    """PLANTED: the training thread waits for the worker processes, slower than the GPU."""
    return batches.get()


def main(argv=None):
    # The string options first (workload.parse_flags takes numbers only).
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--start-method", choices=["fork", "spawn", "forkserver"], default="fork")
    pre.add_argument("--wait", choices=["none", "sleep", "pipe"], default="none")
    # before-cuda: the workers are forked before the process's first CUDA call, so no fork falls
    # inside the device's steady window (a fork there waits for the profiler's locks, if any).
    pre.add_argument("--start-workers", choices=["after-cuda", "before-cuda"],
                     default="after-cuda")
    known, rest = pre.parse_known_args(argv)
    args = workload.parse_flags("data_starved_workers.py", __doc__, [
        ("steps", 40, "training steps"),
        ("workers", 2, "worker processes"),
        ("work-ms", 40.0, "time one worker takes to make one batch"),
        ("layers", 4, "model layers; one step is (layers+1) ms of device time"),
        ("batch-kib", 256, "batch size in KiB (sent through the queue, copied H2D)"),
    ], rest)
    if args.workers < 1:
        raise SystemExit("data_starved_workers.py: --workers must be at least 1")
    nbytes = args.batch_kib * 1024
    ctx = multiprocessing.get_context(known.start_method)
    batches = ctx.Queue(maxsize=2 * args.workers)
    stop = ctx.Event()
    procs = [ctx.Process(target=worker_main, name="input-worker-%d" % i, daemon=True,
                         args=(i, args.workers, batches, stop, nbytes, args.work_ms, known.wait))
             for i in range(args.workers)]
    if known.start_workers == "before-cuda":
        for p in procs:
            p.start()
    rt = cudart.load()
    loop = workload.InputFedLoop(rt, args.layers, nbytes)
    if known.start_workers == "after-cuda":
        for p in procs:
            p.start()
    # The first batch also waits for the workers to start (an interpreter each under spawn).
    first = get_batch_from_workers(batches)

    wall_ns, wait_ns = loop.run(
        args.steps, lambda step: first if step == 0 else get_batch_from_workers(batches))
    stop.set()
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.terminate()
            p.join()
    pids = ",".join(str(p.pid) for p in procs)

    loop.close()
    (workload.Summary("data_starved_workers").add("steps", args.steps)
     .add("workers", args.workers).add("start_method", known.start_method).add("wait", known.wait)
     .add("worker_pids", pids)
     .add("wall_ms", wall_ns / 1e6).add("queue_wait_ms", wait_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers)).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
