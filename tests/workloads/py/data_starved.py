"""data_starved -- the demo's workload in Python: the host prepares every batch in load_batch()
(pure-Python CPU work, default 20 ms) and the step's GPU work is shorter (default 5 ms), so the GPU
idles waiting for input.

Each step: load_batch() is the common "prepare and upload" loader: it augments the batch, writes
it into a pinned staging buffer and enqueues the async H2D copy of it to the device; then the step's
11 kernels are launched on the same stream. No synchronisation per step.

Expected verdict: GPU utilisation ~ 5/20 ~ 25%; the idle time is host CPU work in load_batch()
(the GPU waits for the next copy, submitted late from inside load_batch()).
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 data_starved.py [--steps N] [--load-ms MS]
"""

import ctypes
import sys
import time

import cudart
import workload


def load_batch(rt, samples, pinned, nbytes, load_ms, device_input, stream):
    """PLANTED: the data pipeline runs on the training thread and is slower than the GPU step. It
    prepares the batch in pinned memory and enqueues its upload, so the copy call (the one that
    ends each idle gap) is made from this function."""
    checksum = workload.cpu_work(samples, load_ms)
    ctypes.memmove(pinned, cudart.address_of(samples), nbytes)
    rt.memcpy_async(device_input, pinned, nbytes, cudart.HOST_TO_DEVICE, stream)
    return checksum


def main(argv=None):
    args = workload.parse_flags("data_starved.py", __doc__, [
        ("steps", 40, "training steps"),
        ("load-ms", 20.0, "host CPU time to prepare one batch in load_batch()"),
        ("layers", 4, "model layers; one step is (layers+1) ms of device time"),
        ("batch-kib", 4096, "batch size in KiB (copied H2D from pinned memory)"),
    ], argv)
    rt = cudart.load()
    nbytes = args.batch_kib * 1024
    model = workload.Mlp(rt, args.layers, nbytes // 4)
    stream = rt.stream_create()
    samples = workload.float_buffer(nbytes)
    pinned = [rt.malloc_host(nbytes) for _ in range(2)]
    copied = [rt.event_create() for _ in range(2)]

    start = time.monotonic_ns()
    load_ns = 0
    checksum = 0.0
    for step in range(args.steps):
        slot = step % 2
        if step >= 2:
            rt.event_synchronize(copied[slot])  # the copy that last read this buffer is done
        t0 = time.monotonic_ns()
        checksum += load_batch(rt, samples, pinned[slot], nbytes, args.load_ms, model.input, stream)
        load_ns += time.monotonic_ns() - t0
        rt.event_record(copied[slot], stream)
        model.enqueue_step(stream)
    rt.stream_synchronize(stream)
    end = time.monotonic_ns()

    for e in copied:
        rt.event_destroy(e)
    for p in pinned:
        rt.free_host(p)
    rt.stream_destroy(stream)
    model.close()
    (workload.Summary("data_starved").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("load_batch_ms", load_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers))
     .add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
