"""pageable_copies -- the batch lives in pageable host memory (one Python array per sample, as a
naive collate leaves it) and copy_batch() moves it sample by sample with cudaMemcpyAsync. From
pageable memory those copies block the host until each transfer is done (pageable bandwidth), so
the host cannot queue anything ahead and the device idles between the per-sample round trips.

Each step: copy_batch() (default 128 samples x 32 KiB), then 5 kernels of a model 4x smaller than
data_starved's (layers=1: 0.5 ms of device time) on the same stream. See cpp/pageable_copies.cu
for why per-sample copies: in simgpu's model a pageable copy keeps the device busy for its own
(slow) transfer.

Expected verdict: GPU utilisation ~5-40% (lower on a loaded machine); the idle time is the
host blocked in pageable cudaMemcpyAsync calls in copy_batch().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 pageable_copies.py [--steps N]
"""

import sys
import time

import cudart
import workload

MODEL_SCALE = 0.25  # a small model: the copies, not the kernels, decide the step


def copy_batch(rt, device_batch, sample_addresses, sample_bytes, stream):
    """PLANTED: per-sample copies from pageable memory; each call blocks until it is done."""
    offset = 0
    for address in sample_addresses:
        rt.memcpy_async(device_batch + offset, address, sample_bytes, cudart.HOST_TO_DEVICE, stream)
        offset += sample_bytes


def main(argv=None):
    args = workload.parse_flags("pageable_copies.py", __doc__, [
        ("steps", 30, "training steps"),
        ("samples", 128, "samples per batch (one pageable copy each)"),
        ("sample-kib", 32, "size of one sample in KiB"),
        ("layers", 1, "model layers; one step is (layers+1)/4 ms of device time"),
    ], argv)
    rt = cudart.load()
    sample_bytes = args.sample_kib * 1024
    model = workload.Mlp(rt, args.layers, sample_bytes * args.samples // 4,
                         scale=MODEL_SCALE)
    samples = [workload.float_buffer(sample_bytes, 0.25) for _ in range(args.samples)]
    addresses = [cudart.address_of(s) for s in samples]  # the arrays are never resized
    stream = rt.stream_create()
    rt.device_synchronize()

    start = time.monotonic_ns()
    copy_ns = 0
    for step in range(args.steps):
        samples[step % len(samples)][0] = float(step)  # "new data"
        t0 = time.monotonic_ns()
        copy_batch(rt, model.input, addresses, sample_bytes, stream)
        copy_ns += time.monotonic_ns() - t0
        model.enqueue_step(stream)
    rt.stream_synchronize(stream)
    end = time.monotonic_ns()

    rt.stream_destroy(stream)
    model.close()
    (workload.Summary("pageable_copies").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("copy_batch_ms", copy_ns / 1e6)
     .add("copies", args.steps * args.samples)
     .add("gpu_ms_per_step", MODEL_SCALE * workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers)).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
