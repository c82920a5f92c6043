"""event_polling -- a loop that polls cudaEventQuery while the device runs the step (as progress
loops, NCCL watchdogs and some schedulers do; one real A100 step trace held 25,000 of them), and
then prepares the next input on the host in prepare_input() (pure-Python CPU work, default 6 ms)
while the device has nothing to do.

Each step: 10 kernels of 300 us (3 ms) and an event record; then cudaEventQuery every ~50 us
(a little host work between polls) until the event completes; then prepare_input() does its CPU
work and uploads the batch with cudaMemcpyAsync from a pinned buffer, which ends the idle gap.

Expected verdict: GPU utilisation ~ 3/9 ~ 33%; the idle time is host CPU work in prepare_input();
the polling happens while the device is busy and costs no idle time.
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 event_polling.py [--steps N] [--load-ms MS]
"""

import ctypes
import sys
import time

import cudart
import workload


def prepare_input(rt, samples, pinned, nbytes, load_ms, device_input, stream):
    """PLANTED: prepares the next batch on the training thread after the step finished, and
    enqueues its upload: the copy call that ends each idle gap is made from this function."""
    checksum = workload.cpu_work(samples, load_ms)
    ctypes.memmove(pinned, cudart.address_of(samples), nbytes)
    rt.memcpy_async(device_input, pinned, nbytes, cudart.HOST_TO_DEVICE, stream)
    return checksum


def wait_by_polling(rt, event, samples):
    """Polls the step's event, with a little bookkeeping between polls; returns the poll count."""
    polls = 0
    while not rt.event_query(event):
        workload.cpu_work(samples, 0.05)
        polls += 1
    return polls


def main(argv=None):
    args = workload.parse_flags("event_polling.py", __doc__, [
        ("steps", 60, "training steps"),
        ("load-ms", 6, "host CPU time to prepare one input"),
        ("batch-kib", 256, "batch size in KiB"),
    ], argv)
    rt = cudart.load()
    kernels = [rt.simgpu_kernel(name, 300000) for name in ("conv_fwd", "bn_fwd", "relu_fwd", "pool_fwd",
                                                            "fc_fwd")]
    stream = rt.stream_create()
    nbytes = args.batch_kib * 1024
    device_input = rt.malloc(nbytes)
    samples = workload.float_buffer(nbytes)
    small = workload.float_buffer(4096)
    pinned = rt.malloc_host(nbytes)
    done = rt.event_create()

    start = time.monotonic_ns()
    polls = 0
    prepare_ns = 0  # the planted function's own time: the idle it can hold (scenarios.py)
    checksum = 0.0
    for _ in range(args.steps):
        t0 = time.monotonic_ns()
        checksum += prepare_input(rt, samples, pinned, nbytes, args.load_ms, device_input, stream)
        prepare_ns += time.monotonic_ns() - t0
        for i in range(10):
            rt.launch(kernels[i % len(kernels)], 64, 256, stream)
        rt.event_record(done, stream)
        polls += wait_by_polling(rt, done, small)
    rt.stream_synchronize(stream)
    end = time.monotonic_ns()

    rt.event_destroy(done)
    rt.free_host(pinned)
    rt.free(device_input)
    rt.stream_destroy(stream)
    (workload.Summary("event_polling").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("prepare_input_ms", prepare_ns / 1e6).add("polls", polls)
     .add("gpu_ms_per_step", 3.0)
     .add("kernels", args.steps * 10).add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
