"""expandable_segments -- PyTorch's caching allocator with expandable segments
(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): instead of cudaMalloc it reserves one large
address range once (cuMemAddressReserve) and grows the segment by mapping physical memory into it
(cuMemCreate, cuMemMap, cuMemSetAccess), and gives memory back by unmapping it (cuMemUnmap,
cuMemRelease). Here a loop whose activations do not stay cached: every step grow_segment() maps
--granules 2 MiB allocations at the start of the range, the step's kernels run on that memory
(a 64 KiB memset at its start, then --layers forward kernels of 480 us), and after the step's
synchronisation shrink_segment() unmaps and releases them (what torch.cuda.empty_cache does).

Expected verdict: the idle time is host time in the allocator's driver calls: cuMemCreate and
cuMemMap in grow_segment(), cuMemUnmap and cuMemRelease in shrink_segment().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 expandable_segments.py [--steps N]
"""

import ctypes
import sys
import time

import cudart
import workload

CU_MEM_ALLOCATION_TYPE_PINNED = 1      # cuda.h
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1


class CUmemLocation(ctypes.Structure):  # cuda.h, CUmemLocation_st
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CUmemAllocationProp(ctypes.Structure):  # cuda.h, CUmemAllocationProp_st
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", CUmemLocation),
                ("win32HandleMetaData", ctypes.c_void_p), ("compressionType", ctypes.c_ubyte),
                ("gpuDirectRDMACapable", ctypes.c_ubyte), ("usage", ctypes.c_ushort),
                ("reserved", ctypes.c_ubyte * 4)]


class CUmemAccessDesc(ctypes.Structure):  # cuda.h, CUmemAccessDesc_st
    _fields_ = [("location", CUmemLocation), ("flags", ctypes.c_int)]


class Driver(object):
    """libcuda.so.1 through ctypes, every call checked."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def __call__(self, name, *args):
        err = getattr(self.lib, name)(*args)
        if err != 0:
            raise RuntimeError("%s: %d" % (name, err))


def grow_segment(cu, base, granule, count, prop, access):
    """PLANTED: maps fresh physical memory into the segment every step instead of keeping it."""
    handles = []
    for i in range(count):
        handle = ctypes.c_uint64()
        cu("cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(granule), ctypes.byref(prop), ctypes.c_ulonglong(0))
        cu("cuMemMap", ctypes.c_uint64(base + i * granule), ctypes.c_size_t(granule), ctypes.c_size_t(0), handle,
           ctypes.c_ulonglong(0))
        handles.append(handle)
    cu("cuMemSetAccess", ctypes.c_uint64(base), ctypes.c_size_t(count * granule), ctypes.byref(access),
       ctypes.c_size_t(1))
    return handles


def shrink_segment(cu, base, granule, handles):
    """PLANTED: gives the step's memory back (empty_cache), so the next step must map it again."""
    for i, handle in enumerate(handles):
        cu("cuMemUnmap", ctypes.c_uint64(base + i * granule), ctypes.c_size_t(granule))
        cu("cuMemRelease", handle)


def run_step(rt, kernels, base, stream):
    # 64 KiB: simgpu really writes what a memset sets, and a host writing the whole segment every
    # step would hold the synchronisation long after the device's work ended.
    rt.call("cudaMemsetAsync", ctypes.c_void_p(base), 0, ctypes.c_size_t(64 << 10), stream)
    for k in kernels:
        rt.launch(k, 64, 256, stream)
    rt.stream_synchronize(stream)


def main(argv=None):
    args = workload.parse_flags("expandable_segments.py", __doc__, [
        ("steps", 60, "training steps"),
        ("granules", 32, "2 MiB allocations mapped (and unmapped) per step"),
        ("layers", 2, "forward kernels of 480 us per step (few launches: the idle is the allocator's)"),
    ], argv)
    rt = cudart.load()
    rt.lib.cudaFree(None)  # the runtime's primary context, current for the driver calls too
    cu = Driver()
    prop = CUmemAllocationProp()
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location = CUmemLocation(CU_MEM_LOCATION_TYPE_DEVICE, 0)
    access = CUmemAccessDesc(CUmemLocation(CU_MEM_LOCATION_TYPE_DEVICE, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    granule = ctypes.c_size_t()
    cu("cuMemGetAllocationGranularity", ctypes.byref(granule), ctypes.byref(prop),
       ctypes.c_int(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    granule = granule.value
    reserved = 4 * args.granules * granule
    base = ctypes.c_uint64()
    cu("cuMemAddressReserve", ctypes.byref(base), ctypes.c_size_t(reserved), ctypes.c_size_t(0),
       ctypes.c_uint64(0), ctypes.c_ulonglong(0))
    base = base.value
    kernels = [rt.simgpu_kernel("forward_layer", 480000) for _ in range(args.layers)]
    stream = rt.stream_create()

    start = time.monotonic_ns()
    alloc_ns = 0
    for _ in range(args.steps):
        t0 = time.monotonic_ns()
        handles = grow_segment(cu, base, granule, args.granules, prop, access)
        alloc_ns += time.monotonic_ns() - t0
        run_step(rt, kernels, base, stream)
        t0 = time.monotonic_ns()
        shrink_segment(cu, base, granule, handles)
        alloc_ns += time.monotonic_ns() - t0
    end = time.monotonic_ns()

    cu("cuMemAddressFree", ctypes.c_uint64(base), ctypes.c_size_t(reserved))
    rt.stream_destroy(stream)
    (workload.Summary("expandable_segments").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("allocator_ms", alloc_ns / 1e6)
     .add("gpu_ms_per_step", args.layers * 0.48).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
