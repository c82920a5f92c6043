#!/usr/bin/env python3
"""torch_loop.py — a small real PyTorch training loop for tools/gpu-check.

    torch_loop.py --variant {workers0,workers8,sync,compile,compile-graphs} [--steps N]
                  [--profiler {none,kineto}]
                  [--chrome-trace FILE] [--result FILE]

A CNN on synthetic 3x64x64 images, three shapes of loop:
  workers0  DataLoader(num_workers=0) with a CPU-heavy per-sample transform: the training thread
            prepares every batch itself, the GPU waits (expected verdict: host_work).
  workers8  the same transform in 8 DataLoader workers with pin_memory=True and non_blocking
            copies: the input pipeline keeps up (expected: healthy or much better utilised).
  sync      batches already on the GPU; loss.item() every step then log_metrics(), a few ms of
            host work that cannot overlap the next step (expected: host work after a sync).
  compile   the sync loop with the model under torch.compile (Inductor: Triton kernels launched
            through the driver API, cuLaunchKernel/cuLaunchKernelEx; expected: host work after a
            sync, with the kernels' launches seen by the agent, no `other` idle).
  compile-graphs  the same with torch.compile(mode="reduce-overhead"): the compiled steps are
            replayed as CUDA graphs (cudaGraphLaunch); expected as compile.
--profiler kineto wraps model creation and the whole loop in torch.profiler (CUDA activities
only, to keep the Chrome trace small) and exports the Chrome trace. The result is one JSON object
(steps, seconds, steps_per_s measured after a 10% warm-up, torch version) written to --result and
printed as the last line on stdout.
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

IMAGE = (3, 64, 64)
# Variants whose batches are already on the GPU and which read the loss every step.
SYNC_VARIANTS = ("sync", "compile", "compile-graphs")
CLASSES = 10


class SyntheticImages(Dataset):
    """Deterministic random images; __getitem__ does real CPU work (a blur and a normalisation,
    repeated transform_passes times) the way an augmentation pipeline would."""

    def __init__(self, length, transform_passes):
        self.length = length
        self.passes = transform_passes
        self.kernel = torch.full((3, 1, 3, 3), 1.0 / 9.0)

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        x = torch.rand(IMAGE, generator=g)
        for _ in range(self.passes):
            x = torch.nn.functional.conv2d(x.unsqueeze(0), self.kernel, padding=1, groups=3)[0]
            x = (x - x.mean()) / (x.std() + 1e-6)
        return x, index % CLASSES


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(128, CLASSES))


def log_metrics(value, host_ms):
    """Host work after the sync (sync variant): formatting, running means, a logger."""
    end = time.perf_counter() + host_ms / 1000.0
    acc = value
    while time.perf_counter() < end:
        acc = (acc * 1.000001 + 1e-9) % 1e6
    return acc


def batches(args, device):
    if args.variant in SYNC_VARIANTS:
        g = torch.Generator().manual_seed(0)
        xs = torch.rand((8, args.batch) + IMAGE, generator=g).to(device)
        ys = torch.randint(0, CLASSES, (8, args.batch), generator=g).to(device)
        for step in range(args.steps):
            yield xs[step % 8], ys[step % 8]
        return
    workers = 0 if args.variant == "workers0" else 8
    loader = DataLoader(SyntheticImages(args.steps * args.batch, args.transform_passes),
                        batch_size=args.batch, shuffle=False, num_workers=workers,
                        pin_memory=(workers > 0), persistent_workers=False,
                        prefetch_factor=(4 if workers > 0 else None))
    for x, y in loader:
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def train(args):
    device = torch.device("cuda")
    model = make_model().to(device)
    graphs = args.variant == "compile-graphs"
    if args.variant.startswith("compile"):
        model = torch.compile(model, mode="reduce-overhead" if graphs else "default")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    warm = max(1, args.steps // 10)
    t_warm = None
    done = 0
    t0 = time.perf_counter()
    for step, (x, y) in enumerate(batches(args, device)):
        if step == warm:
            torch.cuda.synchronize()
            t_warm = time.perf_counter()
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()  # a new iteration: earlier outputs may be reused
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if args.variant in SYNC_VARIANTS:
            log_metrics(loss.item(), args.host_ms)
        done = step + 1
        if time.perf_counter() - t0 > args.max_seconds:
            break
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    timed = done - warm if t_warm is not None else done
    seconds = (t1 - t_warm) if t_warm is not None else (t1 - t0)
    return {"variant": args.variant, "profiler": args.profiler, "steps": done,
            "seconds": round(t1 - t0, 4), "timed_steps": timed,
            "steps_per_s": round(timed / seconds, 3) if seconds > 0 else None,
            "torch": torch.__version__, "device": torch.cuda.get_device_name(0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["workers0", "workers8", "sync", "compile", "compile-graphs"],
                    required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--transform-passes", type=int, default=4)
    ap.add_argument("--host-ms", type=float, default=3.0)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--profiler", choices=["none", "kineto"], default="none")
    ap.add_argument("--chrome-trace")
    ap.add_argument("--result")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_loop: no CUDA device visible to PyTorch", file=sys.stderr)
        return 3
    if args.profiler == "kineto":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            result = train(args)
        if args.chrome_trace:
            prof.export_chrome_trace(args.chrome_trace)
    else:
        result = train(args)
    line = json.dumps(result)
    if args.result:
        with open(args.result, "w") as f:
            f.write(line + "\n")
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
