"""compiled_model -- a torch.compile'd model's step as Triton runs it: the step's kernels are
Triton-style kernels of a real cubin loaded with cuModuleLoadData and launched with cuLaunchKernelEx
through the driver API (libcuda.so.1; no runtime call at all), as Triton's launcher does; the host
prepares each batch in prepare_inputs() (pure-Python CPU work, default 12 ms) and uploads it from
there with cuMemcpyHtoDAsync from a pinned buffer, while the step takes 4 ms on the device.

Each step: prepare_inputs() (CPU work, then the async upload), then run_compiled_step() launches
triton_poi_fused_add_relu_0 (1 ms), triton_red_fused_sum_1 (2 ms) and triton_per_fused_mul_2
(1 ms) on one stream. Every other step waits for the upload that last read the pinned buffer
(cuEventSynchronize), as a double-buffered loader does.

With --entry-points 1 the launcher does not call libcuda.so.1's exports: it fetches
cuLaunchKernelEx and cuMemcpyHtoDAsync_v2 through the runtime's cudaGetDriverEntryPoint (which
asks the driver's cuGetProcAddress), as cuBLAS and other libraries do, and calls the pointers.

Expected verdict: GPU utilisation ~ 4/12 ~ 33%; the idle time is host CPU work in
prepare_inputs() (the GPU waits for the next upload, submitted late from inside it).
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 compiled_model.py
         --cubin <build>/tests/workloads/compiled_model_kernels.cubin [--steps N] [--load-ms MS]
"""

import argparse
import ctypes
import os
import sys
import time

import cudart
import workload

# Device time of each kernel: simgpu's duration model by name (tests/simgpu/README.md), set before
# the driver loads unless the caller chose others.
KERNEL_MS = [("triton_poi_fused_add_relu_0", 1), ("triton_red_fused_sum_1", 2),
             ("triton_per_fused_mul_2", 1)]
os.environ.setdefault("SIMGPU_KERNEL_DURATIONS", ",".join("%s=%dms" % k for k in KERNEL_MS))


class CUlaunchConfig(ctypes.Structure):  # cuda.h, CUlaunchConfig_st
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


class Driver(object):
    """libcuda.so.1 through ctypes, every call checked. With entry_points, the functions named in
    ENTRY_POINTS are called through the pointers the runtime's cudaGetDriverEntryPoint returns."""

    ENTRY_POINTS = ("cuLaunchKernelEx", "cuMemcpyHtoDAsync")

    def __init__(self, entry_points=False):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.pointers = {}
        if entry_points:
            runtime = cudart.load()
            for name in self.ENTRY_POINTS:
                fn = ctypes.c_void_p()
                status = ctypes.c_int()
                # cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &status): the base name;
                # the driver hands out the current version (cuMemcpyHtoDAsync_v2).
                err = runtime.lib.cudaGetDriverEntryPoint(name.encode(), ctypes.byref(fn),
                                                          ctypes.c_ulonglong(0), ctypes.byref(status))
                if err != 0 or not fn.value:
                    raise RuntimeError("cudaGetDriverEntryPoint(%s): %d, status %d" % (name, err, status.value))
                self.pointers[name] = ctypes.CFUNCTYPE(ctypes.c_int)(fn.value)

    def __call__(self, name, *args):
        base = name[:-3] if name.endswith("_v2") else name
        f = self.pointers.get(base) or getattr(self.lib, name)
        err = f(*args)
        if err != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorName(err, ctypes.byref(text))
            raise RuntimeError("%s: %d (%s)" % (name, err, text.value.decode() if text.value else "?"))


def prepare_inputs(cu, samples, pinned, nbytes, load_ms, device_input, stream):
    """PLANTED: the input pipeline runs on the training thread and is slower than the compiled
    step. It prepares the batch in pinned memory and enqueues its upload, so the copy call (the one
    that ends each idle gap) is made from this function."""
    checksum = workload.cpu_work(samples, load_ms)
    ctypes.memmove(pinned, cudart.address_of(samples), nbytes)
    cu("cuMemcpyHtoDAsync_v2", ctypes.c_uint64(device_input), ctypes.c_void_p(pinned),
       ctypes.c_size_t(nbytes), stream)
    return checksum


def launch_ex(cu, fn, params, n, stream):
    """One launch as Triton's generated launcher makes it: cuLaunchKernelEx with a CUlaunchConfig
    (1024-thread blocks over n elements) and an array of pointers to the ctypes parameters."""
    args = (ctypes.c_void_p * len(params))(*[ctypes.cast(ctypes.byref(p), ctypes.c_void_p) for p in params])
    config = CUlaunchConfig(max(1, n // 1024), 1, 1, 1024, 1, 1, 0, stream, None, 0)
    cu("cuLaunchKernelEx", ctypes.byref(config), fn, args, None)


def run_compiled_step(cu, kernels, buffers, n, stream):
    """The compiled graph's launches."""
    x, y, out = buffers
    count = ctypes.c_int(n)
    scale = ctypes.c_float(0.5)
    for fn, params in ((kernels[0], (x, y, out, count)), (kernels[1], (out, y, count)),
                       (kernels[2], (out, scale, count))):
        launch_ex(cu, fn, params, n, stream)


def read_cubin(prog, argv):
    """--cubin PATH (a path; workload.parse_flags takes numbers): the module's bytes, and the
    other arguments. Exits with a message when the file is missing."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--cubin", default=os.environ.get("GS_COMPILED_MODEL_CUBIN", ""))
    known, rest = pre.parse_known_args(argv)
    if not known.cubin or not os.path.isfile(known.cubin):
        sys.exit("%s: --cubin must name compiled_model_kernels.cubin (built by nvcc into the "
                 "build's tests/workloads/)" % prog)
    with open(known.cubin, "rb") as f:
        return f.read(), rest


def main(argv=None):
    image, rest = read_cubin("compiled_model.py", argv)
    args = workload.parse_flags("compiled_model.py", __doc__, [
        ("steps", 60, "training steps"),
        ("load-ms", 12, "host CPU time to prepare one batch"),
        ("batch-kib", 1024, "batch size in KiB"),
        ("entry-points", 0, "1: launch and upload through cudaGetDriverEntryPoint's pointers"),
    ], rest)

    cu = Driver(entry_points=args.entry_points != 0)
    cu("cuInit", 0)
    device = ctypes.c_int()
    cu("cuDeviceGet", ctypes.byref(device), 0)
    context = ctypes.c_void_p()
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    cu("cuCtxSetCurrent", context)
    module = ctypes.c_void_p()
    cu("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(image))
    kernels = []
    for name, _ in KERNEL_MS:
        fn = ctypes.c_void_p()
        cu("cuModuleGetFunction", ctypes.byref(fn), module, name.encode())
        kernels.append(fn)

    nbytes = args.batch_kib * 1024
    n = nbytes // 4
    buffers = [ctypes.c_uint64() for _ in range(3)]
    for b in buffers:
        cu("cuMemAlloc_v2", ctypes.byref(b), ctypes.c_size_t(nbytes))
    stream = ctypes.c_void_p()
    cu("cuStreamCreate", ctypes.byref(stream), 0)
    samples = workload.float_buffer(nbytes)
    pinned = []
    for _ in range(2):
        p = ctypes.c_void_p()
        cu("cuMemAllocHost_v2", ctypes.byref(p), ctypes.c_size_t(nbytes))
        pinned.append(p.value)
    copied = []
    for _ in range(2):
        e = ctypes.c_void_p()
        cu("cuEventCreate", ctypes.byref(e), 0)
        copied.append(e)

    start = time.monotonic_ns()
    load_ns = 0
    checksum = 0.0
    for step in range(args.steps):
        slot = step % 2
        if step >= 2:
            cu("cuEventSynchronize", copied[slot])  # the upload that last read this buffer is done
        t0 = time.monotonic_ns()
        checksum += prepare_inputs(cu, samples, pinned[slot], nbytes, args.load_ms,
                                   buffers[0].value, stream)
        load_ns += time.monotonic_ns() - t0
        cu("cuEventRecord", copied[slot], stream)
        run_compiled_step(cu, kernels, buffers, n, stream)
    cu("cuStreamSynchronize", stream)
    end = time.monotonic_ns()

    for e in copied:
        cu("cuEventDestroy_v2", e)
    for p in pinned:
        cu("cuMemFreeHost", ctypes.c_void_p(p))
    for b in buffers:
        cu("cuMemFree_v2", b)
    (workload.Summary("compiled_model").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("prepare_inputs_ms", load_ns / 1e6)
     .add("gpu_ms_per_step", float(sum(ms for _, ms in KERNEL_MS)))
     .add("kernels", args.steps * len(KERNEL_MS)).add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
