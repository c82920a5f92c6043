#!/usr/bin/env python3
"""driver_ctypes_program.py — a Triton-launcher-shaped Python program on simgpu's libcuda.so.1
through ctypes: cuInit, the primary context made current, cuModuleLoadData on a real cubin,
cuPointerGetAttribute on each pointer argument, cuLaunchKernelEx with a CUlaunchConfig, host-side
input preparation between steps, then cuStreamSynchronize; checks the wall time and the truth
log. Usage: driver_ctypes_program.py <cubin> (runs itself as `--child <cubin>` with a truth log,
then checks the log); run with LD_LIBRARY_PATH=<simgpu lib folder>. Exit 0 = all good."""
import ctypes
import json
import os
import sys
import time

cu = ctypes.CDLL("libcuda.so.1")
CUDA_SUCCESS = 0
CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3
STEPS = 5


def check_truth(path):
    ops = [json.loads(line) for line in open(path)]
    kernels = [o for o in ops if o["kind"] == "kernel"]
    assert len(kernels) == STEPS, kernels
    for k in kernels:
        assert k["name"] == "triton_add" and k["end_ns"] - k["start_ns"] == 2000000, k
        assert k["submit_api"] == "cuLaunchKernelEx" and k["submit_domain"] == "driver", k
    copies = [o for o in ops if o["kind"] == "memcpy"]
    assert len(copies) == STEPS and all(c["submit_api"] == "cuMemcpyHtoDAsync_v2" for c in copies)
    assert len({o["correlation_id"] for o in kernels + copies}) == 2 * STEPS
    print("truth log: %d driver launches, %d copies" % (len(kernels), len(copies)))


if sys.argv[1] != "--child":
    # Run the program in a child with a truth log (written at its exit), then check the log.
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "truth.jsonl")
        env = dict(os.environ, SIMGPU_TRUTH=truth, SIMGPU_KERNEL_DURATIONS="triton_add=2ms",
                   CUDA_INJECTION64_PATH="none")
        rc = subprocess.run([sys.executable, __file__, "--child", sys.argv[1]], env=env).returncode
        if rc != 0:
            sys.exit(f"the driver program failed ({rc})")
        check_truth(truth)
    sys.exit(0)


class CUlaunchConfig(ctypes.Structure):  # cuda.h, CUlaunchConfig_st
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


def check(err, what):
    if err != CUDA_SUCCESS:
        name = ctypes.c_char_p()
        cu.cuGetErrorName(err, ctypes.byref(name))
        sys.exit(f"{what}: {err} ({name.value.decode() if name.value else '?'})")


check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
assert ctx.value is None, "a fresh thread has no current context"
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

image = open(sys.argv[2], "rb").read()
module = ctypes.c_void_p()
check(cu.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)), "cuModuleLoadData")
fn = ctypes.c_void_p()
check(cu.cuModuleGetFunction(ctypes.byref(fn), module, b"triton_add"), "cuModuleGetFunction")

n = 1 << 20
bufs = [ctypes.c_uint64() for _ in range(3)]
for b in bufs:
    check(cu.cuMemAlloc_v2(ctypes.byref(b), ctypes.c_size_t(n * 4)), "cuMemAlloc_v2")
stream = ctypes.c_void_p()
check(cu.cuStreamCreate(ctypes.byref(stream), 0), "cuStreamCreate")

host = (ctypes.c_float * n)()
t0 = time.monotonic()
for step in range(STEPS):
    for i in range(0, n, 4096):  # host-side input preparation between steps
        host[i] = float(step)
    check(cu.cuMemcpyHtoDAsync_v2(bufs[0], host, ctypes.c_size_t(n * 4), stream), "cuMemcpyHtoDAsync_v2")
    for b in bufs:  # Triton's launcher validates every pointer argument
        dptr = ctypes.c_uint64()
        check(cu.cuPointerGetAttribute(ctypes.byref(dptr), CU_POINTER_ATTRIBUTE_DEVICE_POINTER, b),
              "cuPointerGetAttribute")
        assert dptr.value == b.value
    nn = ctypes.c_int(n)
    args = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in (*bufs, nn)])
    config = CUlaunchConfig(n // 1024, 1, 1, 1024, 1, 1, 0, stream, None, 0)
    check(cu.cuLaunchKernelEx(ctypes.byref(config), fn, args, None), "cuLaunchKernelEx")
check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
elapsed = time.monotonic() - t0
assert elapsed >= STEPS * 0.002, f"{STEPS} kernels of 2 ms took {elapsed:.4f}s"

# cuGetProcAddress hands out the same entry point a library would call.
pfn = ctypes.c_void_p()
status = ctypes.c_int()
check(cu.cuGetProcAddress_v2(b"cuLaunchKernelEx", ctypes.byref(pfn), 12000, ctypes.c_uint64(0),
                             ctypes.byref(status)), "cuGetProcAddress_v2")
assert pfn.value == ctypes.cast(cu.cuLaunchKernelEx, ctypes.c_void_p).value

