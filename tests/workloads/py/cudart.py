"""cudart.py -- the CUDA runtime API through ctypes, for the Python workloads.

Loads libcudart.so.13 and declares the functions the workloads use, with their real argument and
result types, from one table (_DECLARATIONS). Every call is checked: a CUDA error raises
CudaError naming the call, the error and its description.

Which library: load(path) takes, in order, the explicit `path`, the environment variable
GS_CUDART_PATH, or "libcudart.so.13" as the dynamic loader finds it (LD_LIBRARY_PATH). Run on
the simulated device with LD_LIBRARY_PATH=<build>/simgpu/lib.

simgpu extensions (tests/simgpu/simgpu.h) are bound when the library has them: simgpu_kernel()
returns a kernel handle of exact device duration for launch(); has_simgpu tells whether they exist.
A real libcudart has no way to launch a kernel from Python without a module, so the workloads need
simgpu.

Works on CPython 3.9 and later, standard library only. Thread safety: a Runtime may be used from
any thread (the CUDA runtime is thread-safe; ctypes releases the GIL during calls).
"""

import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p

# cudaMemcpyKind
HOST_TO_HOST = 0
HOST_TO_DEVICE = 1
DEVICE_TO_HOST = 2
DEVICE_TO_DEVICE = 3
DEFAULT = 4

# Flags
STREAM_DEFAULT = 0x0
STREAM_NON_BLOCKING = 0x1
EVENT_DEFAULT = 0x0
EVENT_DISABLE_TIMING = 0x2

ERROR_NOT_READY = 600  # cudaErrorNotReady: a query whose work is still pending


class Dim3(ctypes.Structure):
    """struct dim3 (vector_types.h), passed by value to cudaLaunchKernel."""

    _fields_ = [("x", c_uint), ("y", c_uint), ("z", c_uint)]


class CudaError(RuntimeError):
    """A CUDA runtime call returned an error."""

    def __init__(self, call, code, name, description):
        super().__init__("%s failed: %s (%d): %s" % (call, name, code, description))
        self.call = call
        self.code = code
        self.name = name


_cudaError_t = c_int
_cudaStream_t = c_void_p
_cudaEvent_t = c_void_p

# (function, argument types). Every one returns cudaError_t and is checked.
_DECLARATIONS = [
    ("cudaGetDeviceCount", [POINTER(c_int)]),
    ("cudaSetDevice", [c_int]),
    ("cudaGetDevice", [POINTER(c_int)]),
    ("cudaDeviceSynchronize", []),
    ("cudaMalloc", [POINTER(c_void_p), c_size_t]),
    ("cudaFree", [c_void_p]),
    ("cudaMallocHost", [POINTER(c_void_p), c_size_t]),
    ("cudaFreeHost", [c_void_p]),
    ("cudaHostAlloc", [POINTER(c_void_p), c_size_t, c_uint]),
    ("cudaHostRegister", [c_void_p, c_size_t, c_uint]),
    ("cudaHostUnregister", [c_void_p]),
    ("cudaMemcpy", [c_void_p, c_void_p, c_size_t, c_int]),
    ("cudaMemcpyAsync", [c_void_p, c_void_p, c_size_t, c_int, _cudaStream_t]),
    ("cudaMemset", [c_void_p, c_int, c_size_t]),
    ("cudaMemsetAsync", [c_void_p, c_int, c_size_t, _cudaStream_t]),
    ("cudaStreamCreate", [POINTER(_cudaStream_t)]),
    ("cudaStreamCreateWithFlags", [POINTER(_cudaStream_t), c_uint]),
    ("cudaStreamDestroy", [_cudaStream_t]),
    ("cudaStreamSynchronize", [_cudaStream_t]),
    ("cudaStreamWaitEvent", [_cudaStream_t, _cudaEvent_t, c_uint]),
    ("cudaEventCreateWithFlags", [POINTER(_cudaEvent_t), c_uint]),
    ("cudaEventDestroy", [_cudaEvent_t]),
    ("cudaEventRecord", [_cudaEvent_t, _cudaStream_t]),
    ("cudaEventSynchronize", [_cudaEvent_t]),
    ("cudaEventElapsedTime", [POINTER(c_float), _cudaEvent_t, _cudaEvent_t]),
    ("cudaLaunchKernel", [c_void_p, Dim3, Dim3, POINTER(c_void_p), c_size_t, _cudaStream_t]),
    ("cudaGetLastError", []),
    ("cudaStreamBeginCapture", [_cudaStream_t, c_int]),
    ("cudaStreamEndCapture", [_cudaStream_t, POINTER(c_void_p)]),
    ("cudaGraphInstantiate", [POINTER(c_void_p), c_void_p, ctypes.c_ulonglong]),
    ("cudaGraphLaunch", [c_void_p, _cudaStream_t]),
    ("cudaGraphExecDestroy", [c_void_p]),
    ("cudaGraphDestroy", [c_void_p]),
]
# Calls whose non-success results are answers, not failures.
_UNCHECKED = [("cudaStreamQuery", [_cudaStream_t]), ("cudaEventQuery", [_cudaEvent_t])]


def _library_path(path):
    return path or os.environ.get("GS_CUDART_PATH") or "libcudart.so.13"


class Runtime(object):
    """One loaded libcudart. Methods mirror the runtime API with Python values: pointers,
    streams and events are ints (or None for NULL / the default stream)."""

    def __init__(self, path=None):
        name = _library_path(path)
        try:
            self.lib = ctypes.CDLL(name)
        except OSError as e:
            raise OSError(
                "cannot load the CUDA runtime %r (%s); point LD_LIBRARY_PATH at simgpu's lib "
                "folder, set GS_CUDART_PATH, or pass the path explicitly" % (name, e))
        self.path = name
        self.lib.cudaGetErrorName.restype = c_char_p
        self.lib.cudaGetErrorName.argtypes = [_cudaError_t]
        self.lib.cudaGetErrorString.restype = c_char_p
        self.lib.cudaGetErrorString.argtypes = [_cudaError_t]
        for fname, argtypes in _DECLARATIONS + _UNCHECKED:
            f = getattr(self.lib, fname)
            f.restype = _cudaError_t
            f.argtypes = argtypes
        self.has_simgpu = hasattr(self.lib, "simgpuKernel")
        if self.has_simgpu:
            self.lib.simgpuKernel.restype = c_void_p
            self.lib.simgpuKernel.argtypes = [c_char_p, c_uint64]
            self.lib.simgpuNowNs.restype = c_uint64
            self.lib.simgpuNowNs.argtypes = []
            self.lib.simgpuSetCopyBandwidth.restype = c_int
            self.lib.simgpuSetCopyBandwidth.argtypes = [c_int, c_int, ctypes.c_double]
        self._no_args = (c_void_p * 1)()

    # -- checking -------------------------------------------------------------------------------

    def error_name(self, code):
        return (self.lib.cudaGetErrorName(code) or b"?").decode()

    def check(self, call, code):
        if code != 0:
            raise CudaError(call, code, self.error_name(code),
                            (self.lib.cudaGetErrorString(code) or b"?").decode())

    def call(self, fname, *args):
        """Calls a declared runtime function by name and raises CudaError on failure."""
        self.check(fname, getattr(self.lib, fname)(*args))

    # -- devices and memory ---------------------------------------------------------------------

    def device_count(self):
        n = c_int(0)
        self.call("cudaGetDeviceCount", byref(n))
        return n.value

    def set_device(self, device):
        self.call("cudaSetDevice", device)

    def device_synchronize(self):
        self.call("cudaDeviceSynchronize")

    def malloc(self, nbytes):
        p = c_void_p()
        self.call("cudaMalloc", byref(p), nbytes)
        return p.value

    def free(self, ptr):
        self.call("cudaFree", ptr)

    def malloc_host(self, nbytes):
        """Pinned (page-locked) host memory; an address usable with ctypes.memmove."""
        p = c_void_p()
        self.call("cudaMallocHost", byref(p), nbytes)
        return p.value

    def free_host(self, ptr):
        self.call("cudaFreeHost", ptr)

    def memset(self, ptr, value, nbytes):
        self.call("cudaMemset", ptr, value, nbytes)

    def memcpy(self, dst, src, nbytes, kind):
        self.call("cudaMemcpy", dst, src, nbytes, kind)

    def memcpy_async(self, dst, src, nbytes, kind, stream=None):
        self.call("cudaMemcpyAsync", dst, src, nbytes, kind, stream)

    # -- streams and events ---------------------------------------------------------------------

    def stream_create(self, flags=STREAM_DEFAULT):
        s = c_void_p()
        self.call("cudaStreamCreateWithFlags", byref(s), flags)
        return s.value

    def stream_destroy(self, stream):
        self.call("cudaStreamDestroy", stream)

    def stream_synchronize(self, stream=None):
        self.call("cudaStreamSynchronize", stream)

    def stream_wait_event(self, stream, event):
        self.call("cudaStreamWaitEvent", stream, event, 0)

    def event_create(self, flags=EVENT_DISABLE_TIMING):
        e = c_void_p()
        self.call("cudaEventCreateWithFlags", byref(e), flags)
        return e.value

    def event_destroy(self, event):
        self.call("cudaEventDestroy", event)

    def event_record(self, event, stream=None):
        self.call("cudaEventRecord", event, stream)

    def event_synchronize(self, event):
        self.call("cudaEventSynchronize", event)

    def event_query(self, event):
        """True when the event's work is done, False while pending."""
        code = self.lib.cudaEventQuery(event)
        if code == ERROR_NOT_READY:
            return False
        self.check("cudaEventQuery", code)
        return True

    # -- kernels --------------------------------------------------------------------------------

    def simgpu_kernel(self, name, duration_ns):
        """A kernel handle that occupies its stream for exactly duration_ns (simgpu only)."""
        if not self.has_simgpu:
            raise RuntimeError(
                "%s is not simgpu: the Python workloads launch simgpuKernel() handles and need "
                "LD_LIBRARY_PATH to point at simgpu's libcudart.so.13" % self.path)
        return self.lib.simgpuKernel(name.encode(), int(duration_ns))

    def launch(self, kernel, grid=1, block=1, stream=None, args=None, shared_mem=0):
        """cudaLaunchKernel; args is a ctypes array of void* (None: no parameters)."""
        self.call("cudaLaunchKernel", kernel, Dim3(grid, 1, 1), Dim3(block, 1, 1),
                  args if args is not None else self._no_args, shared_mem, stream)

    # -- graphs ---------------------------------------------------------------------------------

    def capture(self, stream, record):
        """Captures what record() launches on `stream` (cudaStreamBeginCapture, global mode ..
        cudaStreamEndCapture) and returns the instantiated graph (cudaGraphExec_t)."""
        self.call("cudaStreamBeginCapture", stream, 0)
        record()
        graph = c_void_p()
        self.call("cudaStreamEndCapture", stream, byref(graph))
        exec_ = c_void_p()
        self.call("cudaGraphInstantiate", byref(exec_), graph, 0)
        self.call("cudaGraphDestroy", graph)
        return exec_.value

    def graph_launch(self, graph_exec, stream=None):
        self.call("cudaGraphLaunch", graph_exec, stream)

    def graph_exec_destroy(self, graph_exec):
        self.call("cudaGraphExecDestroy", graph_exec)

    def get_last_error(self):
        return self.lib.cudaGetLastError()

    def now_ns(self):
        """simgpu's clock (CLOCK_MONOTONIC), the clock of its truth file."""
        return self.lib.simgpuNowNs() if self.has_simgpu else _monotonic_ns()


def _monotonic_ns():
    import time
    return time.monotonic_ns()


def address_of(buffer):
    """The address of a writable Python buffer (bytearray, array.array, ctypes array):
    pageable host memory that a cudaMemcpy can read or fill."""
    if isinstance(buffer, ctypes.Array):
        return ctypes.addressof(buffer)
    view = memoryview(buffer)
    return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view))


_runtime = None


def load(path=None):
    """The process's Runtime (loaded on first use; a later path argument is ignored)."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime(path)
    return _runtime
