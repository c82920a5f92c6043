"""allocator_churn -- activations and their gradients are cudaMalloc'ed at the start of every step
in allocate_activations() and cudaFree'd at its end in free_activations(). cudaFree synchronises
the device implicitly, so every step drains the GPU, and the host then spends the gap inside the
allocator (simgpu: ~20 us per cudaMalloc, ~10 us per cudaFree, plus Python overhead).

Each step (layers=32): 64 cudaMalloc, 32 forward_layer (15 us) + 32 backward_layer (20 us)
kernels = 1.12 ms of device time, 64 cudaFree.

Expected verdict: GPU utilisation ~30-37%; the idle time is host time in the allocator:
cudaMalloc in allocate_activations() and cudaFree in free_activations().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 allocator_churn.py [--steps N]
"""

import sys
import time

import cudart
import workload


def allocate_activations(rt, layers, nbytes):
    """PLANTED: fresh device buffers every step instead of reusing them."""
    acts, grads = [], []
    for _ in range(layers):
        acts.append(rt.malloc(nbytes))
        grads.append(rt.malloc(nbytes))
    return acts, grads


def free_activations(rt, acts, grads):
    """PLANTED: cudaFree waits for the device to drain, every step."""
    for a, g in zip(acts, grads):
        rt.free(a)
        rt.free(g)


def main(argv=None):
    args = workload.parse_flags("allocator_churn.py", __doc__, [
        ("steps", 60, "training steps"),
        ("layers", 32, "layers; each allocates an activation and a gradient buffer"),
        ("act-kib", 256, "size of each activation buffer in KiB"),
    ], argv)
    rt = cudart.load()
    nbytes = args.act_kib * 1024
    forward = rt.simgpu_kernel("forward_layer", 15000)
    backward = rt.simgpu_kernel("backward_layer", 20000)
    grid = max(1, min(1024, nbytes // 4 // 256))
    rt.device_synchronize()

    start = time.monotonic_ns()
    alloc_ns = free_ns = 0
    for _ in range(args.steps):
        t0 = time.monotonic_ns()
        acts, grads = allocate_activations(rt, args.layers, nbytes)
        alloc_ns += time.monotonic_ns() - t0
        for _ in range(args.layers):
            rt.launch(forward, grid, 256)
        for _ in range(args.layers):
            rt.launch(backward, grid, 256)
        t1 = time.monotonic_ns()
        free_activations(rt, acts, grads)
        free_ns += time.monotonic_ns() - t1
    rt.device_synchronize()
    end = time.monotonic_ns()

    (workload.Summary("allocator_churn").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("allocate_ms", alloc_ns / 1e6)
     .add("free_ms", free_ns / 1e6).add("mallocs", args.steps * args.layers * 2)
     .add("kernels", args.steps * args.layers * 2)
     .add("gpu_ms_per_step", args.layers * 0.035).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
