"""data_starved_sleep -- a data-starved loop that waits for its input by sleeping: each step
wait_for_batch() sleeps --wait-ms (default 25 ms, as a loader that polls a slow source every so
often would), then the batch is copied H2D (pinned, async) and the step's kernels launched (5 ms).

Expected verdict: GPU utilisation ~ 5/25 ~ 20%; the idle time is the training thread asleep
(time.sleep: clock_nanosleep, or select() with no files before CPython 3.11) in wait_for_batch().
Run: LD_LIBRARY_PATH=<build>/simgpu/lib python3 data_starved_sleep.py [--steps N]
"""

import sys
import time

import cudart
import workload


def wait_for_batch(wait_ms):
    """PLANTED: the training thread sleeps until its batch is due."""
    time.sleep(wait_ms / 1000.0)


def main(argv=None):
    args = workload.parse_flags("data_starved_sleep.py", __doc__, [
        ("steps", 40, "training steps"),
        ("wait-ms", 25.0, "time wait_for_batch sleeps per step"),
        ("layers", 4, "model layers; one step is (layers+1) ms of device time"),
        ("batch-kib", 1024, "batch size in KiB (copied H2D)"),
    ], argv)
    nbytes = args.batch_kib * 1024
    rt = cudart.load()
    loop = workload.InputFedLoop(rt, args.layers, nbytes)
    batch = bytearray(nbytes)

    def get_batch(step):
        wait_for_batch(args.wait_ms)
        batch[0:8] = step.to_bytes(8, "little")
        return batch

    wall_ns, wait_ns = loop.run(args.steps, get_batch)
    loop.close()
    (workload.Summary("data_starved_sleep").add("steps", args.steps)
     .add("wall_ms", wall_ns / 1e6).add("sleep_ms", wait_ns / 1e6)
     .add("gpu_ms_per_step", workload.mlp_step_ms(args.layers))
     .add("kernels", args.steps * workload.mlp_kernels_per_step(args.layers)).emit())
    return 0


if __name__ == "__main__":
    sys.exit(main())
