#!/usr/bin/env python3
"""Tuning sweep for the mma template on one GPU: the same contracts compiled with
different tuning overrides (GATEJIT_MMA_TUNING, one bundle per variant, made by
scripts/prepare_device.sh), timed with gpu_bench.py's method (graph_timing.py:
CUDA-graph replays over rotating tensor sets past the L2), in one process and one run.
Every variant's result is checked first, except those named probe*: kernels built
with a stage left out on purpose, to time the rest (docs/perf-notes.md, v34).

    python3 bench/mma_sweep.py --bundle default=.device/kernels.gjb --bundle rt2=.device/sweep-rt2.gjb \
        --m 1 2 8 16 32 64 128 --json sweep.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_timing import GraphTimer  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", action="append", required=True, help="name=path of a variant's bundle")
    p.add_argument("--m", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128])
    p.add_argument("--n", type=int, default=1536)
    p.add_argument("--k", type=int, default=7168)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    import torch
    sys.path.insert(0, str(REPO / "python"))
    import gatejit

    dev = torch.device("cuda")
    runtimes = {}
    os.environ["GATEJIT_TEMPLATE"] = "mma"  # M = 1 too: the sweep is about this template
    try:
        for item in args.bundle:
            name, path = item.split("=", 1)
            runtimes[name] = gatejit.Runtime(bundle_path=path, disable_jit=True, disable_cache=True)
    finally:
        del os.environ["GATEJIT_TEMPLATE"]

    timer = GraphTimer(torch, dev)
    timer.warm_clocks()

    results = []
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    n, k = args.n, args.k
    for m in args.m:
        sets = max(4, math.ceil(256 * 2**20 / (n * k * 2)))
        hs = [torch.randn(m, k, generator=gen, device=dev).bfloat16() for _ in range(sets)]
        ws = [(torch.randn(n, k, generator=gen, device=dev) / math.sqrt(k)).bfloat16() for _ in range(sets)]
        ats = [torch.randn(m, n, generator=gen, device=dev).bfloat16() for _ in range(sets)]
        outs = [torch.empty(m, n, dtype=torch.bfloat16, device=dev) for _ in range(sets)]
        ref = ats[0].float() * torch.sigmoid(hs[0].float() @ ws[0].float().T)
        row = {"m": m, "n": n, "k": k}
        for name, rt in runtimes.items():
            try:
                outs[0].fill_(float("nan"))
                rt.gate_epilogue(hs[0], ws[0], ats[0], out=outs[0])
                err = float((outs[0].float() - ref).abs().max())
                # Variants named probe*: kernels with a stage left out on
                # purpose (time one part of the kernel), timed, not checked.
                if not name.startswith("probe") and (not math.isfinite(err) or err > 0.05):
                    raise RuntimeError(f"wrong result (max |diff| {err})")
                us, _ = timer.measure(lambda i: rt.gate_epilogue(hs[i], ws[i], ats[i], out=outs[i]), sets)
                row[name] = round(us, 3)
                row[name + "_path"] = rt.explain(hs[0], ws[0], ats[0], out=outs[0])
            except Exception as e:  # noqa: BLE001
                row[name] = f"failed: {e}"
        results.append(row)
        print(f"M={m}: " + ", ".join(f"{name} {row[name]}" for name in runtimes), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
