"""data_starved_pipe -- a data-starved loop whose input arrives slowly through a pipe: a child
process (this script with --writer) produces a batch every --produce-ms (default 20 ms, waiting as
a slow disk or network would) and writes it to its stdout; the training loop blocks reading it in
read_batch_from_pipe(), then copies it H2D (pinned, async) and launches the step's kernels (5 ms).

Expected verdict: GPU utilisation ~ 5/20 ~ 25%; the idle time is the training thread blocked in
I/O (a read on a pipe) in read_batch_from_pipe().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 data_starved_pipe.py [--steps N]
"""

import os
import subprocess
import sys
import time

import cudart
import workload


def read_batch_from_pipe(pipe_fd, view):
    """PLANTED: the training thread waits on a slow producer, reading the batch from a pipe."""
    got = 0
    while got < len(view):
        n = os.readv(pipe_fd, [view[got:]])
        if n == 0:
            raise EOFError("the batch writer closed the pipe after %d of %d bytes"
                           % (got, len(view)))
        got += n


def writer_main(argv):
    """The child: --writer STEPS NBYTES PRODUCE_MS. Never touches CUDA."""
    steps, nbytes, produce_ms = int(argv[0]), int(argv[1]), float(argv[2])
    batch = bytearray(nbytes)
    out = sys.stdout.buffer
    for step in range(steps):
        time.sleep(produce_ms / 1000.0)  # the slow source
        batch[0:8] = step.to_bytes(8, "little")
        out.write(batch)
        out.flush()
    return 0


def main(argv=None):
    args = workload.parse_flags("data_starved_pipe.py", __doc__, [
        ("steps", 40, "training steps"),
        ("produce-ms", 20.0, "time the writer takes to produce one batch"),
        ("layers", 4, "model layers; one step is (layers+1) ms of device time"),
        ("batch-kib", 1024, "batch size in KiB (written through the pipe, copied H2D)"),
    ], argv)
    nbytes = args.batch_kib * 1024
    writer = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--writer", str(args.steps), str(nbytes),
         str(args.produce_ms)], stdout=subprocess.PIPE)
    rt = cudart.load()
    loop = workload.InputFedLoop(rt, args.layers, nbytes)
    batch = bytearray(nbytes)
    view = memoryview(batch)
    pipe_fd = writer.stdout.fileno()

    def get_batch(step):
        read_batch_from_pipe(pipe_fd, view)
        return batch

    wall_ns, read_ns = loop.run(args.steps, get_batch)
    writer.stdout.close()
    if writer.wait() != 0:
        raise RuntimeError("the batch writer exited with %d" % writer.returncode)
    loop.close()
    (workload.Summary("data_starved_pipe").add("steps", args.steps)
     .add("wall_ms", wall_ns / 1e6).add("read_batch_ms", read_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers)).emit())
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        sys.exit(writer_main(sys.argv[2:]))
    sys.exit(main())
