"""graph_replay -- a model step captured once as a CUDA graph and replayed every step (what
torch.compile's reduce-overhead mode and torch.cuda.graphs do): 50 short kernels captured by
capture_step() with cudaStreamBeginCapture/EndCapture -- half of them launched from
attention_block() (20 us each), half from mlp_block() (80 us each: 80% of the replayed device
time) -- instantiated, then one cudaGraphLaunch a step, from train_step(), which first uploads
the batch and then does host work (pure-Python CPU work, default 10 ms) before the replay, while
the replayed step takes 2.5 ms on the device.

Each step, in train_step(): cudaMemcpyAsync of the batch from a pinned buffer (~50 us on the
device), the host work, then cudaGraphLaunch of the captured step (25 attention kernels cycling
bias_add, layer_norm, gelu; 25 MLP kernels cycling matmul_tile, residual_add). Every other step
waits for the upload that last read the pinned buffer (cudaEventSynchronize).

Expected verdict: GPU utilisation ~ 2.5/10 ~ 25%; the idle time is host CPU work in
train_step(), and each gap ends with the replay's first kernel, whose host call is the
cudaGraphLaunch (the graph's kernels themselves run back to back); of the replayed kernels'
device time, 80% was captured in mlp_block() and 20% in attention_block().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 graph_replay.py [--steps N] [--load-ms MS]
"""

import ctypes
import sys
import time

import cudart
import workload

ATTENTION_KERNELS = [("bias_add", 20000), ("layer_norm", 20000), ("gelu", 20000)]
MLP_KERNELS = [("matmul_tile", 80000), ("residual_add", 80000)]


def train_step(rt, samples, pinned, nbytes, load_ms, device_input, graph, stream):
    """PLANTED: uploads the batch, then runs the step's host work on the training thread (slower
    than the replayed step), then replays the captured step: the graph launch that ends each idle
    gap is made from this function."""
    ctypes.memmove(pinned, cudart.address_of(samples), nbytes)
    rt.memcpy_async(device_input, pinned, nbytes, cudart.HOST_TO_DEVICE, stream)
    checksum = workload.cpu_work(samples, load_ms)
    rt.graph_launch(graph, stream)
    return checksum


def attention_block(rt, kernels, count, stream):
    for i in range(count):
        rt.launch(kernels[i % len(kernels)], 64, 256, stream)


def mlp_block(rt, kernels, count, stream):
    """The captured step's slow part: 80% of its device time."""
    for i in range(count):
        rt.launch(kernels[i % len(kernels)], 64, 256, stream)


def capture_step(rt, attention, mlp, nodes, stream):
    """The step's launches, captured once: nothing runs until the graph is launched."""
    attention_block(rt, attention, nodes // 2, stream)
    mlp_block(rt, mlp, nodes - nodes // 2, stream)


def main(argv=None):
    args = workload.parse_flags("graph_replay.py", __doc__, [
        ("steps", 60, "training steps"),
        ("load-ms", 10, "host CPU time of one step"),
        ("nodes", 50, "kernels in the captured step"),
        ("batch-kib", 1024, "batch size in KiB"),
    ], argv)
    rt = cudart.load()
    attention = [rt.simgpu_kernel(name, ns) for name, ns in ATTENTION_KERNELS]
    mlp = [rt.simgpu_kernel(name, ns) for name, ns in MLP_KERNELS]
    stream = rt.stream_create()
    nbytes = args.batch_kib * 1024
    device_input = rt.malloc(nbytes)
    samples = workload.float_buffer(nbytes)
    pinned = [rt.malloc_host(nbytes) for _ in range(2)]
    copied = [rt.event_create() for _ in range(2)]
    graph = rt.capture(stream, lambda: capture_step(rt, attention, mlp, args.nodes, stream))

    start = time.monotonic_ns()
    load_ns = 0
    checksum = 0.0
    for step in range(args.steps):
        slot = step % 2
        if step >= 2:
            rt.event_synchronize(copied[slot])  # the upload that last read this buffer is done
        t0 = time.monotonic_ns()
        checksum += train_step(rt, samples, pinned[slot], nbytes, args.load_ms, device_input, graph,
                               stream)
        load_ns += time.monotonic_ns() - t0
        rt.event_record(copied[slot], stream)
    rt.stream_synchronize(stream)
    end = time.monotonic_ns()

    rt.graph_exec_destroy(graph)
    for e in copied:
        rt.event_destroy(e)
    for p in pinned:
        rt.free_host(p)
    rt.free(device_input)
    rt.stream_destroy(stream)
    (workload.Summary("graph_replay").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("train_step_ms", load_ns / 1e6)
     .add("gpu_ms_per_step", (ATTENTION_KERNELS[0][1] * (args.nodes // 2)
                              + MLP_KERNELS[0][1] * (args.nodes - args.nodes // 2)) / 1e6)
     .add("kernels", args.steps * args.nodes).add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
