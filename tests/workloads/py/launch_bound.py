"""launch_bound -- a step is hundreds of tiny unfused elementwise kernels (1.5-2.5 us each on the
device) launched back to back from launch_tiny_kernels(). Each launch costs the host more (Python
and ctypes overhead plus simgpu's ~5 us launch cost) than the kernel runs, so the GPU drains its
queue and waits for the next launch.

Each step: --kernels launches cycling bias_add, relu_inplace, scale_inplace, residual_add on one
stream. No synchronisation until the end.

Expected verdict: GPU utilisation ~15-30%; the idle time is launch overhead in
launch_tiny_kernels().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 launch_bound.py [--steps N] [--kernels K]
"""

import sys
import time

import cudart
import workload

TINY_KERNEL_NS = [("bias_add", 2000), ("relu_inplace", 1500), ("scale_inplace", 2500),
                  ("residual_add", 2000)]


def launch_tiny_kernels(rt, kernels, count, stream):
    """PLANTED: one launch per tiny op; the launches cannot outrun the device."""
    for i in range(count):
        rt.launch(kernels[i % 4], 16, 256, stream)


def main(argv=None):
    args = workload.parse_flags("launch_bound.py", __doc__, [
        ("steps", 100, "training steps"),
        ("kernels", 200, "tiny kernel launches per step"),
    ], argv)
    rt = cudart.load()
    kernels = [rt.simgpu_kernel(name, ns) for name, ns in TINY_KERNEL_NS]
    stream = rt.stream_create()
    rt.device_synchronize()

    start = time.monotonic_ns()
    for _ in range(args.steps):
        launch_tiny_kernels(rt, kernels, args.kernels, stream)
    launched = time.monotonic_ns()
    rt.stream_synchronize(stream)
    end = time.monotonic_ns()

    rt.stream_destroy(stream)
    total = args.steps * args.kernels
    (workload.Summary("launch_bound").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("kernels", total)
     .add("host_us_per_launch", (launched - start) / 1e3 / max(total, 1))
     .add("gpu_us_per_kernel", 2.0).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
