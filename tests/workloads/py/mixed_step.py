"""mixed_step -- one training step that reaches the GPU three ways, as a partly compiled model
does: eager runtime launches (cudaLaunchKernel, the uncompiled ops), a Triton-style kernel of a
real cubin launched through the driver (cuLaunchKernelEx, a compiled region) and a replay of a
captured CUDA graph (cudaGraphLaunch, a reduce-overhead region). train_step() uploads the batch,
does the step's host work (pure-Python CPU work, default 9 ms), then submits the three parts;
which part comes first rotates step by step, so the idle gaps are ended by each path in turn.

Device time per step ~3.5 ms: 5 eager kernels of 100 us, triton_poi_fused_add_relu_0 (1 ms, set
by compiled_model.py's SIMGPU_KERNEL_DURATIONS default) and a graph of 20 kernels of 100 us.

Expected verdict: GPU utilisation ~ 3.5/9 ~ 40%; the idle time is host CPU work in train_step(),
whichever of the three calls ends each gap (no `other` idle).
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 mixed_step.py
         --cubin <build>/tests/workloads/compiled_model_kernels.cubin [--steps N] [--load-ms MS]
"""

import ctypes
import sys
import time

import compiled_model
import cudart
import workload


def submit_eager(rt, kernels, stream):
    for k in kernels:
        rt.launch(k, 64, 256, stream)


def submit_compiled(cu, fn, buffers, n, stream):
    x, y, out = buffers
    compiled_model.launch_ex(cu, fn, (x, y, out, ctypes.c_int(n)), n, stream)


def train_step(step, rt, cu, parts, samples, pinned, nbytes, load_ms, device_input, stream):
    """PLANTED: uploads the batch, runs the step's host work on the training thread (slower than
    the device's share of the step), then submits the step's three parts, the first of which ends
    the idle gap: so every gap's resume call is made from this function."""
    ctypes.memmove(pinned, cudart.address_of(samples), nbytes)
    rt.memcpy_async(device_input, pinned, nbytes, cudart.HOST_TO_DEVICE, stream)
    checksum = workload.cpu_work(samples, load_ms)
    for i in range(len(parts)):
        parts[(step + i) % len(parts)]()
    return checksum


def main(argv=None):
    image, rest = compiled_model.read_cubin("mixed_step.py", argv)
    args = workload.parse_flags("mixed_step.py", __doc__, [
        ("steps", 60, "training steps"),
        ("load-ms", 9, "host CPU time of one step"),
        ("batch-kib", 1024, "batch size in KiB"),
    ], rest)

    rt = cudart.load()
    stream_value = rt.stream_create()
    stream = ctypes.c_void_p(stream_value)
    cu = compiled_model.Driver()
    # The runtime made the device's primary context current on this thread; the module is the
    # compiled region's.
    module = ctypes.c_void_p()
    cu("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(image))
    fn = ctypes.c_void_p()
    cu("cuModuleGetFunction", ctypes.byref(fn), module, b"triton_poi_fused_add_relu_0")

    nbytes = args.batch_kib * 1024
    n = nbytes // 4
    buffers = [ctypes.c_uint64(rt.malloc(nbytes)) for _ in range(3)]
    eager = [rt.simgpu_kernel(name, 100000) for name in ("embedding", "dropout", "layer_norm",
                                                          "softmax", "cross_entropy")]
    node = rt.simgpu_kernel("graph_block", 100000)
    graph = rt.capture(stream_value, lambda: [rt.launch(node, 64, 256, stream_value) for _ in range(20)])
    parts = [lambda: submit_eager(rt, eager, stream_value),
             lambda: submit_compiled(cu, fn, buffers, n, stream),
             lambda: rt.graph_launch(graph, stream_value)]
    samples = workload.float_buffer(nbytes)
    pinned = [rt.malloc_host(nbytes) for _ in range(2)]
    copied = [rt.event_create() for _ in range(2)]

    start = time.monotonic_ns()
    checksum = 0.0
    for step in range(args.steps):
        slot = step % 2
        if step >= 2:
            rt.event_synchronize(copied[slot])  # the upload that last read this buffer is done
        checksum += train_step(step, rt, cu, parts, samples, pinned[slot], nbytes, args.load_ms,
                               buffers[0].value, stream_value)
        rt.event_record(copied[slot], stream_value)
    rt.stream_synchronize(stream_value)
    end = time.monotonic_ns()

    rt.graph_exec_destroy(graph)
    for e in copied:
        rt.event_destroy(e)
    for p in pinned:
        rt.free_host(p)
    for b in buffers:
        rt.free(b.value)
    rt.stream_destroy(stream_value)
    (workload.Summary("mixed_step").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("gpu_ms_per_step", 3.5)
     .add("kernels", args.steps * 26).add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
