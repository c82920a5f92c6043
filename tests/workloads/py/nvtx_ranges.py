"""nvtx_ranges -- cpp/nvtx_ranges.cu in Python: data_starved's loop annotated with NVTX ranges, every
phase synchronised so that each range has a clear share of device idle time:

  "step"        the whole step, containing:
    "data"      load_batch(): host CPU work (--load-ms 8); the device is idle throughout
    "forward"   H2D copy, normalize_batch, forward_layer x 4, loss_reduce, stream sync (4.4 ms)
    "backward"  backward_layer x 4, stream sync (4.8 ms)
    "optimizer" sgd_update, stream sync (1.4 ms)
(kernels twice as long as workload.py's toy model, as in the C++ shape).

NVTX comes from the toolkit's libnvtx3interop.so.1 through ctypes (the library a Python binding
without its own NVTX copy would use; it injects the tool named by NVTX_INJECTION64_PATH at its
first call). GS_NVTX_LIBRARY=/path/libnvtx3interop.so.1 overrides the search. The training thread
is named "trainer" with nvtxNameOsThreadA.

--ranges-out FILE appends one JSON object per range instance (name, start_ns, end_ns on
CLOCK_MONOTONIC, tid, depth), taken right after the push and right before the pop, like the C++
shape: the truth for idle time per range.
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 nvtx_ranges.py [--steps N] [--ranges-out FILE]
"""

import ctypes
import json
import os
import sys
import threading
import time

import cudart
import workload

NVTX_CANDIDATES = ("/usr/local/cuda/lib64/libnvtx3interop.so.1",
                   "/usr/local/cuda/targets/x86_64-linux/lib/libnvtx3interop.so.1",
                   "libnvtx3interop.so.1")


def load_nvtx():
    paths = [os.environ["GS_NVTX_LIBRARY"]] if os.environ.get("GS_NVTX_LIBRARY") else list(NVTX_CANDIDATES)
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
        lib.nvtxRangePushA.restype = ctypes.c_int
        lib.nvtxRangePop.argtypes = []
        lib.nvtxRangePop.restype = ctypes.c_int
        lib.nvtxNameOsThreadA.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
        lib.nvtxNameOsThreadA.restype = None
        return lib
    sys.stderr.write("nvtx_ranges.py: libnvtx3interop.so.1 not found (set GS_NVTX_LIBRARY)\n")
    sys.exit(2)


class RangeLog(object):
    def __init__(self, nvtx):
        self.nvtx = nvtx
        self.open = []
        self.done = []

    def push(self, name):
        self.nvtx.nvtxRangePushA(name.encode())
        self.open.append({"name": name, "start_ns": time.monotonic_ns(), "depth": len(self.open)})

    def pop(self):
        r = self.open.pop()
        r["end_ns"] = time.monotonic_ns()
        self.nvtx.nvtxRangePop()
        self.done.append(r)

    def write(self, path):
        tid = threading.get_native_id()
        with open(path, "a") as fh:
            for r in self.done:
                fh.write(json.dumps(dict(r, tid=tid)) + "\n")


def load_batch(samples, load_ms):
    """PLANTED: the data pipeline runs on the training thread, inside the "data" range."""
    return workload.cpu_work(samples, load_ms)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ranges_out = ""
    if "--ranges-out" in argv:  # a path: parse_flags takes numbers only
        i = argv.index("--ranges-out")
        ranges_out = argv[i + 1]
        del argv[i:i + 2]
    args = workload.parse_flags("nvtx_ranges.py", __doc__, [
        ("steps", 25, "training steps"),
        ("load-ms", 8.0, "host CPU time to prepare one batch in load_batch()"),
        ("layers", 4, "model layers"),
    ], argv)
    nvtx = load_nvtx()
    rt = cudart.load()
    nbytes = 4 << 20
    model = workload.Mlp(rt, args.layers, nbytes // 4, scale=2)
    k, grid = model.kernels, model.grid
    stream = rt.stream_create()
    samples = workload.float_buffer(nbytes)
    pinned = rt.malloc_host(nbytes)
    rt.device_synchronize()
    nvtx.nvtxNameOsThreadA(threading.get_native_id(), b"trainer")

    ranges = RangeLog(nvtx)
    start = time.monotonic_ns()
    checksum = 0.0
    for _ in range(args.steps):
        ranges.push("step")
        ranges.push("data")
        checksum += load_batch(samples, args.load_ms)
        ranges.pop()

        ranges.push("forward")
        rt.memcpy_async(model.input, pinned, nbytes, cudart.HOST_TO_DEVICE, stream)
        rt.launch(k["normalize_batch"], grid, 256, stream)
        for _ in range(args.layers):
            rt.launch(k["forward_layer"], grid, 256, stream)
        rt.launch(k["loss_reduce"], grid, 256, stream)
        rt.stream_synchronize(stream)
        ranges.pop()

        ranges.push("backward")
        for _ in range(args.layers):
            rt.launch(k["backward_layer"], grid, 256, stream)
        rt.stream_synchronize(stream)
        ranges.pop()

        ranges.push("optimizer")
        rt.launch(k["sgd_update"], grid, 256, stream)
        rt.stream_synchronize(stream)
        ranges.pop()
        ranges.pop()  # step
    end = time.monotonic_ns()

    if ranges_out:
        ranges.write(ranges_out)
    rt.free_host(pinned)
    rt.stream_destroy(stream)
    model.close()
    (workload.Summary("nvtx_ranges").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6)
     .add("gpu_ms_per_step", 2 * workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers))
     .add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
