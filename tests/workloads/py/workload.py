"""workload.py -- what the Python training-loop workloads share: flags, real CPU work of a given
length, the toy model (the same kernels and device durations as the C++ workloads' mlp.cuh), and
the one-line summary. Nothing here is planted: planted functions live in the workload scripts.

CPython 3.9+, standard library only.
"""

import argparse
import array
import ctypes
import time

import cudart

# Device durations of the toy model's kernels, as in tests/workloads/cpp/mlp.cuh: one training
# step of `layers` layers is (1 + layers) ms of device time.
MLP_KERNEL_NS = {
    "normalize_batch": 200000,
    "forward_layer": 400000,
    "loss_reduce": 100000,
    "backward_layer": 600000,
    "sgd_update": 700000,
}


def mlp_step_ms(layers):
    return 1.0 + layers


def mlp_kernels_per_step(layers):
    return 2 * layers + 3


def parse_flags(prog, doc, flags, argv=None):
    """flags: (name, default, help); the type is the default's type. `doc` is the script's
    docstring: its first paragraph is the --help description. Returns a namespace with dashes
    turned into underscores (--load-ms -> args.load_ms)."""
    description = " ".join(doc.strip().split("\n\n")[0].split())
    parser = argparse.ArgumentParser(prog=prog, description=description)
    for name, default, text in flags:
        parser.add_argument("--" + name, type=type(default), default=default,
                            help="%s (default %s)" % (text, default))
    args = parser.parse_args(argv)
    for name, _, _ in flags:
        if getattr(args, name.replace("-", "_")) < 0:
            parser.error("--%s must not be negative" % name)
    return args


def cpu_work(samples, ms):
    """Real CPU work for `ms` milliseconds of wall time: augments `samples` (an array('f')) in
    place, element after element, pass after pass, until the time is up, so a sampler sees this
    thread running Python code. The clock is read once per 256 elements. Returns a checksum."""
    deadline = time.monotonic_ns() + int(ms * 1e6)
    n = len(samples)
    state = 0x9E3779B9
    checksum = 0.0
    i = 0
    while True:
        for _ in range(256):
            if i == n:
                i = 0
            state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
            v = samples[i] * 0.5 + (state >> 8) * (0.5 / 16777216.0)
            samples[i] = v
            checksum += v
            i += 1
        if time.monotonic_ns() >= deadline:
            return checksum


def float_buffer(nbytes, value=0.0):
    """A pageable host buffer of nbytes/4 floats."""
    return array.array("f", [value]) * (nbytes // 4)


class Summary(object):
    """The one line every workload prints at the end: workload=NAME key=value ..."""

    def __init__(self, workload):
        self.parts = ["workload=" + workload]

    def add(self, key, value):
        self.parts.append("%s=%s" % (key, ("%.3f" % value) if isinstance(value, float) else value))
        return self

    def emit(self):
        print(" ".join(self.parts), flush=True)


class Mlp(object):
    """The toy model, resident on the device: `layers` elementwise layers over `width` floats.
    enqueue_step() launches, on one stream: normalize_batch, forward_layer x layers, loss_reduce,
    backward_layer x layers, sgd_update (simgpuKernel handles with MLP_KERNEL_NS durations,
    times `scale`).
    simgpuKernel kernels take no parameters: the device buffers exist so that allocations and
    copies are real, but the kernels only occupy the device for their duration."""

    def __init__(self, rt, layers, width, scale=1):
        self.rt = rt
        self.layers = layers
        self.width = width
        self.input_bytes = width * 4
        self.kernels = dict((name, rt.simgpu_kernel(name, ns * scale))
                            for name, ns in MLP_KERNEL_NS.items())
        self.acts = rt.malloc(self.input_bytes * (layers + 1))
        self.weights = rt.malloc(self.input_bytes * layers)
        self.grads = rt.malloc(self.input_bytes * layers)
        self.loss = rt.malloc(4)
        rt.memset(self.weights, 0, self.input_bytes * layers)
        rt.memset(self.grads, 0, self.input_bytes * layers)
        rt.memset(self.loss, 0, 4)
        self.grid = max(1, min(1024, (width + 255) // 256))

    @property
    def input(self):
        """Device address where a step's input batch must be copied."""
        return self.acts

    def enqueue_step(self, stream=None):
        k, rt, grid = self.kernels, self.rt, self.grid
        rt.launch(k["normalize_batch"], grid, 256, stream)
        for _ in range(self.layers):
            rt.launch(k["forward_layer"], grid, 256, stream)
        rt.launch(k["loss_reduce"], grid, 256, stream)
        for _ in range(self.layers):
            rt.launch(k["backward_layer"], grid, 256, stream)
        rt.launch(k["sgd_update"], grid, 256, stream)

    def close(self):
        for p in (self.acts, self.weights, self.grads, self.loss):
            self.rt.free(p)


class InputFedLoop(object):
    """The training loop of the data_starved variants whose batches come from an input pipeline
    (pipe, loader threads, worker processes): per step, wait until a pinned staging buffer is free
    again (the copy that last read it has finished), get the next batch from the pipeline — the
    part that starves the device — stage it in pinned memory, copy it H2D and enqueue the model's
    step, all on one stream. Two staging buffers, so getting batch N+1 overlaps step N."""

    def __init__(self, rt, layers, nbytes):
        self.rt = rt
        self.nbytes = nbytes
        self.model = Mlp(rt, layers, nbytes // 4)
        self.stream = rt.stream_create()
        self.pinned = [rt.malloc_host(nbytes) for _ in range(2)]
        self.copied = [rt.event_create() for _ in range(2)]

    def run(self, steps, get_batch):
        """get_batch(step) returns the batch (bytes-like, `nbytes` long). Returns (wall_ns,
        get_ns): the loop's wall time (through the last step's completion) and the time spent
        in get_batch."""
        rt, stream = self.rt, self.stream
        start = time.monotonic_ns()
        get_ns = 0
        for step in range(steps):
            slot = step % 2
            if step >= 2:
                rt.event_synchronize(self.copied[slot])
            t0 = time.monotonic_ns()
            batch = get_batch(step)
            get_ns += time.monotonic_ns() - t0
            src = batch if isinstance(batch, bytes) else cudart.address_of(batch)
            ctypes.memmove(self.pinned[slot], src, self.nbytes)
            rt.memcpy_async(self.model.input, self.pinned[slot], self.nbytes, cudart.HOST_TO_DEVICE, stream)
            rt.event_record(self.copied[slot], stream)
            self.model.enqueue_step(stream)
        rt.stream_synchronize(stream)
        return time.monotonic_ns() - start, get_ns

    def close(self):
        for e in self.copied:
            self.rt.event_destroy(e)
        for p in self.pinned:
            self.rt.free_host(p)
        self.rt.stream_destroy(self.stream)
        self.model.close()
