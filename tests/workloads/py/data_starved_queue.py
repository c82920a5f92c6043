"""data_starved_queue -- a data-starved loop fed by a pool of loader threads through a queue:
each of --workers threads "fetches" a batch in --fetch-ms (default 2 workers x 40 ms, waiting as
on storage) and puts it on a queue.Queue; the training loop blocks in get_batch_from_workers()
until one arrives, then copies it H2D (pinned, async) and launches the step's kernels (5 ms).

Expected verdict: GPU utilisation ~ 5/20 ~ 25%; the idle time is the training thread waiting on
the queue (a lock/condition wait) in get_batch_from_workers().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 data_starved_queue.py [--steps N]
"""

import queue
import sys
import threading
import time

import cudart
import workload


def get_batch_from_workers(batches):
    """PLANTED: the training thread waits for the loader pool, which is slower than the GPU."""
    return batches.get()


def loader_worker(worker_id, workers, batches, nbytes, fetch_ms, stop):
    """One loader thread: fetch (slow, off the CPU), then hand the batch over. Worker i starts
    i/workers of a fetch late, so that batches arrive evenly spaced, as a pool's do once it has
    been running for a while."""
    time.sleep(fetch_ms / 1000.0 * worker_id / workers)
    step = 0
    while not stop.is_set():
        time.sleep(fetch_ms / 1000.0)  # the slow storage
        batch = bytearray(nbytes)
        batch[0:8] = (worker_id * 1000000 + step).to_bytes(8, "little")
        step += 1
        while not stop.is_set():
            try:
                batches.put(batch, timeout=0.05)
                break
            except queue.Full:
                pass


def main(argv=None):
    args = workload.parse_flags("data_starved_queue.py", __doc__, [
        ("steps", 40, "training steps"),
        ("workers", 2, "loader threads"),
        ("fetch-ms", 40.0, "time one loader takes to fetch one batch"),
        ("layers", 4, "model layers; one step is (layers+1) ms of device time"),
        ("batch-kib", 1024, "batch size in KiB (copied H2D)"),
    ], argv)
    if args.workers < 1:
        raise SystemExit("data_starved_queue.py: --workers must be at least 1")
    nbytes = args.batch_kib * 1024
    rt = cudart.load()
    loop = workload.InputFedLoop(rt, args.layers, nbytes)
    batches = queue.Queue(maxsize=2)
    stop = threading.Event()
    workers = [threading.Thread(target=loader_worker, name="loader-%d" % i,
                                args=(i, args.workers, batches, nbytes, args.fetch_ms, stop),
                                daemon=True)
               for i in range(args.workers)]
    for w in workers:
        w.start()

    wall_ns, wait_ns = loop.run(args.steps, lambda step: get_batch_from_workers(batches))
    stop.set()
    for w in workers:
        w.join()
    loop.close()
    (workload.Summary("data_starved_queue").add("steps", args.steps)
     .add("wall_ms", wall_ns / 1e6).add("queue_wait_ms", wait_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers)).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
