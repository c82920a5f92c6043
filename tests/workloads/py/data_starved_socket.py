"""data_starved_socket -- a data-starved loop whose input arrives slowly over a socket: a feeder
thread produces a batch every --produce-ms (default 25 ms, waiting as a remote storage server
would) and sends it down one end of a socketpair; the training loop blocks in recv on the other
end in recv_batch_from_socket(), then copies the batch H2D (pinned, async) and launches the
step's kernels (5 ms).

Expected verdict: GPU utilisation ~ 5/25 ~ 20%; the idle time is the training thread blocked in
I/O (recv on a socket) in recv_batch_from_socket().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 data_starved_socket.py [--steps N]
"""

import socket
import sys
import threading
import time

import cudart
import workload


def recv_batch_from_socket(sock, view):
    """PLANTED: the training thread waits on a slow server, receiving the batch from a socket."""
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            raise EOFError("the feeder closed the socket after %d of %d bytes" % (got, len(view)))
        got += n


def feeder(sock, steps, nbytes, produce_ms):
    """The server side: one batch per --produce-ms. Never touches CUDA."""
    batch = bytearray(nbytes)
    for step in range(steps):
        time.sleep(produce_ms / 1000.0)  # the slow source
        batch[0:8] = step.to_bytes(8, "little")
        sock.sendall(batch)
    sock.close()


def main(argv=None):
    args = workload.parse_flags("data_starved_socket.py", __doc__, [
        ("steps", 40, "training steps"),
        ("produce-ms", 25.0, "time the feeder takes to produce one batch"),
        ("layers", 4, "model layers; one step is (layers+1) ms of device time"),
        ("batch-kib", 256, "batch size in KiB (sent over the socket, copied H2D)"),
    ], argv)
    nbytes = args.batch_kib * 1024
    ours, theirs = socket.socketpair()
    rt = cudart.load()
    loop = workload.InputFedLoop(rt, args.layers, nbytes)
    sender = threading.Thread(target=feeder, name="feeder",
                              args=(theirs, args.steps, nbytes, args.produce_ms), daemon=True)
    sender.start()
    batch = bytearray(nbytes)
    view = memoryview(batch)

    def get_batch(step):
        recv_batch_from_socket(ours, view)
        return batch

    wall_ns, recv_ns = loop.run(args.steps, get_batch)
    sender.join()
    ours.close()
    loop.close()
    (workload.Summary("data_starved_socket").add("steps", args.steps)
     .add("wall_ms", wall_ns / 1e6).add("recv_batch_ms", recv_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers)).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
