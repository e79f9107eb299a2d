#!/usr/bin/env python3
"""Measures the target table's sm_90 facts on the GPU in hand (run with the
benchmark, research/gfx950-model.md "Calibration"):

  read bandwidth   a streaming read of 2 GiB (bench/read_floor.py's kernel,
                   its fastest shape), bytes read per second
  DRAM latency     a pointer chase over 1 GiB (one dependent load at a time,
                   one 128-byte line per step, random order): unloaded
  L2 latency       the same chase over 8 MiB (past L1, inside L2)
  launch           a one-element kernel per call in a CUDA graph
  L2 size, SMs     as PyTorch reports them

    python3 bench/target_probe.py --out probe.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from gatejit.graph_timing import GraphTimer  # noqa: E402
from read_floor import SHAPES, stream_read_launcher  # noqa: E402


def chase_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def chase(next_ptr, out, steps):
        idx = tl.load(next_ptr)
        for _ in range(steps):
            idx = tl.load(next_ptr + idx)
        tl.store(out, idx)

    return chase


def chase_latency_us(torch, nbytes: int, steps: int) -> float:
    """µs per dependent load over a random cycle of 128-byte lines in nbytes."""
    line = 16  # int64 elements per 128-byte line
    slots = nbytes // 128
    perm = torch.randperm(slots, device="cuda", dtype=torch.int64)
    nxt = torch.zeros(slots * line, dtype=torch.int64, device="cuda")
    # slot perm[i] points to slot perm[i + 1]: one cycle through every line
    nxt[perm * line] = torch.roll(perm, -1) * line
    out = torch.zeros(1, dtype=torch.int64, device="cuda")
    kernel = chase_kernel()
    kernel[(1,)](nxt, out, 16, num_warps=1)  # compile, warm the TLB path
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        kernel[(1,)](nxt, out, steps, num_warps=1)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / steps)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    import torch

    dev = torch.device("cuda", torch.cuda.current_device())
    props = torch.cuda.get_device_properties(dev)
    timer = GraphTimer(torch, dev)
    timer.warm_clocks()
    facts = {"device": torch.cuda.get_device_name(dev), "sm_count": props.multi_processor_count,
             "l2_bytes": getattr(props, "L2_cache_size", None)}
    # Read bandwidth: 2 GiB, no rotation needed (32x the L2).
    n = 2**29
    buf = [torch.ones(n, dtype=torch.int32, device=dev)]
    best = None
    for block, iters, warps in SHAPES:
        us, _ = timer.measure(stream_read_launcher(torch, buf, block, iters, warps), 1)
        best = us if best is None else min(best, us)
    facts["read_bandwidth_TBps"] = 4 * n / (best * 1e-6) / 1e12
    del buf
    tiny = [torch.zeros(1, device=dev) for _ in range(4)]
    facts["launch_us"], _ = timer.measure(lambda i: tiny[i].add_(1), 4)
    facts["dram_latency_us"] = chase_latency_us(torch, 2**30, 20000)
    facts["l2_latency_us"] = chase_latency_us(torch, 8 * 2**20, 20000)
    print(json.dumps(facts, indent=1))
    if a.out:
        a.out.write_text(json.dumps(facts, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
