"""sync_heavy -- every step reads the loss back with a blocking 4-byte cudaMemcpy (like PyTorch's
loss.item()) in read_loss(), then does host work in log_metrics() (default 7 ms of pure-Python
CPU work) that could have overlapped the next step's GPU work but cannot, because the host only
submits that step afterwards.

Each step: 7 kernels (layers=2: 3 ms of device time) on the legacy default stream, read_loss()
(waits for them), log_metrics().

Expected verdict: GPU utilisation ~ 3 / (3 + 7) ~ 30%; the idle time is host work in
log_metrics() that began when the synchronisation in read_loss() returned ("after sync").
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 sync_heavy.py [--steps N] [--log-ms MS]
"""

import ctypes
import sys
import time

import cudart
import workload


def read_loss(rt, device_loss):
    """PLANTED: a blocking device-to-host read of one float after every step."""
    loss = ctypes.c_float(0.0)
    rt.memcpy(ctypes.addressof(loss), device_loss, 4, cudart.DEVICE_TO_HOST)
    return loss.value


def log_metrics(step, loss, history, log_ms):
    """PLANTED: metrics computed on the host while the GPU has nothing queued."""
    history.append(loss + step)
    return workload.cpu_work(history, log_ms)


def main(argv=None):
    args = workload.parse_flags("sync_heavy.py", __doc__, [
        ("steps", 60, "training steps"),
        ("log-ms", 7.0, "host CPU time of log_metrics() per step"),
        ("layers", 2, "model layers; one step is (layers+1) ms of device time"),
        ("width-kib", 1024, "activation size per layer in KiB"),
    ], argv)
    rt = cudart.load()
    model = workload.Mlp(rt, args.layers, args.width_kib * 1024 // 4)
    history = workload.float_buffer(0)
    rt.device_synchronize()  # set-up done: the loop starts from an idle device

    start = time.monotonic_ns()
    read_ns = log_ns = 0
    loss = checksum = 0.0
    for step in range(args.steps):
        model.enqueue_step(None)
        t0 = time.monotonic_ns()
        loss = read_loss(rt, model.loss)
        t1 = time.monotonic_ns()
        checksum += log_metrics(step, loss, history, args.log_ms)
        read_ns += t1 - t0
        log_ns += time.monotonic_ns() - t1
    rt.device_synchronize()
    end = time.monotonic_ns()

    model.close()
    (workload.Summary("sync_heavy").add("steps", args.steps)
     .add("wall_ms", (end - start) / 1e6).add("read_loss_ms", read_ns / 1e6)
     .add("log_metrics_ms", log_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers))
     .add("loss", loss).add("checksum", checksum).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
