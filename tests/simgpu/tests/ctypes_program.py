#!/usr/bin/env python3
"""ctypes_program.py — drives simgpu's libcudart.so.13 from Python through ctypes, as the Python
workloads do, and checks the basics: exact kernel handles, real-time timing, pageable staging,
real bytes, and errors. Run with LD_LIBRARY_PATH=<simgpu lib folder>. Exit 0 = all good."""
import ctypes
import sys
import time

rt = ctypes.CDLL("libcudart.so.13")
rt.simgpuKernel.restype = ctypes.c_void_p
rt.simgpuKernel.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
rt.cudaGetErrorString.restype = ctypes.c_char_p


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def check(err, what):
    if err != 0:
        sys.exit(f"{what}: error {err} ({rt.cudaGetErrorString(err).decode()})")


count = ctypes.c_int()
check(rt.cudaGetDeviceCount(ctypes.byref(count)), "cudaGetDeviceCount")
assert count.value >= 1

n = 8 << 20
dev = ctypes.c_void_p()
check(rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(n)), "cudaMalloc")
stream = ctypes.c_void_p()
check(rt.cudaStreamCreate(ctypes.byref(stream)), "cudaStreamCreate")
host = (ctypes.c_ubyte * n)(*([7] * 16))
check(rt.simgpuSetCopyBandwidth(1, 0, ctypes.c_double(1e9)), "simgpuSetCopyBandwidth")

t0 = time.monotonic()
check(rt.cudaMemcpyAsync(dev, host, ctypes.c_size_t(n), 1, stream), "cudaMemcpyAsync")
staged = time.monotonic() - t0
assert staged >= n / 1e9, f"pageable async H2D must hold the host ({staged:.4f}s)"

step = rt.simgpuKernel(b"train_step", 30_000_000)
t0 = time.monotonic()
for _ in range(2):
    check(rt.cudaLaunchKernel(ctypes.c_void_p(step), Dim3(4, 1, 1), Dim3(256, 1, 1), None,
                              ctypes.c_size_t(0), stream), "cudaLaunchKernel")
launched = time.monotonic() - t0
check(rt.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
synced = time.monotonic() - t0
assert launched < 0.03, f"launches must be asynchronous ({launched:.4f}s)"
assert synced >= 0.06, f"two 30 ms kernels in order take 60 ms ({synced:.4f}s)"

back = (ctypes.c_ubyte * 16)()
check(rt.cudaMemcpy(back, dev, ctypes.c_size_t(16), 2), "cudaMemcpy")
assert list(back) == [7] * 16, list(back)

err = rt.cudaLaunchKernel(ctypes.c_void_p(step), Dim3(1, 1, 1), Dim3(4096, 1, 1), None,
                          ctypes.c_size_t(0), stream)
assert err == 9, err  # cudaErrorInvalidConfiguration
assert rt.cudaGetLastError() == 9 and rt.cudaGetLastError() == 0
check(rt.cudaFree(dev), "cudaFree")
print("ctypes program: ok")
