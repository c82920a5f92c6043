"""well_fed -- the healthy reference: the data_starved model 4x bigger (every kernel 4x as long:
20 ms of device time per step in 11 kernels), input multi-buffered (--slots, default 6) in pinned
memory, copied on a separate copy stream, ordered with events; host preparation (default 0.5 ms)
is far shorter than the GPU step, so the host runs up to five steps (100 ms) ahead and the GPU
runs kernels back to back even when the host thread is descheduled for a while.

Each step: prepare_batch() into pinned slot s (after the copy that last read it finished); the
copy stream waits until compute no longer reads device slot s, copies, records an event; the
compute stream waits for it, runs the step's 11 kernels and records "slot s consumed".

Expected verdict: GPU utilisation > 95%; no recommendation.
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 well_fed.py [--steps N]
"""

import ctypes
import sys
import time

import cudart
import workload

MODEL_SCALE = 4  # every kernel of the model takes 4x its data_starved duration


def prepare_batch(pinned_samples, load_ms):
    """Not planted: host preparation, straight into pinned memory, hidden behind the GPU."""
    return workload.cpu_work(pinned_samples, load_ms)


def main(argv=None):
    args = workload.parse_flags("well_fed.py", __doc__, [
        ("steps", 25, "training steps"),
        ("load-ms", 0.5, "host CPU time to prepare one batch (hidden behind the GPU)"),
        ("layers", 4, "model layers; one step is 4*(layers+1) ms of device time"),
        ("batch-kib", 4096, "batch size in KiB"),
        ("slots", 6, "input buffers (pinned and device); the host runs up to slots-1 steps ahead"),
    ], argv)
    slots = max(2, args.slots)
    rt = cudart.load()
    nbytes = args.batch_kib * 1024
    model = workload.Mlp(rt, args.layers, nbytes // 4, scale=MODEL_SCALE)
    compute = rt.stream_create(cudart.STREAM_NON_BLOCKING)
    copy = rt.stream_create(cudart.STREAM_NON_BLOCKING)
    pinned = [rt.malloc_host(nbytes) for _ in range(slots)]
    for p in pinned:
        ctypes.memset(p, 0, nbytes)
    pinned_samples = [(ctypes.c_float * (nbytes // 4)).from_address(p) for p in pinned]
    device_in = [rt.malloc(nbytes) for _ in range(slots)]
    copied = [rt.event_create() for _ in range(slots)]
    consumed = [rt.event_create() for _ in range(slots)]
    rt.device_synchronize()

    start = time.monotonic_ns()
    checksum = 0.0
    for step in range(args.steps):
        s = step % slots
        if step >= slots:
            rt.event_synchronize(copied[s])  # pinned[s] is free again
        checksum += prepare_batch(pinned_samples[s], args.load_ms)
        if step >= slots:
            rt.stream_wait_event(copy, consumed[s])
        rt.memcpy_async(device_in[s], pinned[s], nbytes, cudart.HOST_TO_DEVICE, copy)
        rt.event_record(copied[s], copy)
        rt.stream_wait_event(compute, copied[s])
        model.enqueue_step(compute)
        rt.event_record(consumed[s], compute)
    rt.stream_synchronize(compute)
    end = time.monotonic_ns()

    for e in copied + consumed:
        rt.event_destroy(e)
    for p in pinned:
        rt.free_host(p)
    for p in device_in:
        rt.free(p)
    rt.stream_destroy(compute)
    rt.stream_destroy(copy)
    model.close()
    (workload.Summary("well_fed").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6)
     .add("gpu_ms_per_step", MODEL_SCALE * workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers))
     .add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
