#!/usr/bin/env python3
"""Host cost per eager call: gatejit's op next to torch's own eager calls.

For each shape, after the contract is resolved and everything warmed up,
times from Python the issue of CALLS back-to-back calls (no synchronisation
inside the timed loop) of

  gatejit op (out)         gatejit.gate_epilogue(h, W, a, out=o)   -> torch.ops.gatejit.gate_epilogue_out
  gatejit op (new tensor)  gatejit.gate_epilogue(h, W, a)          -> torch.ops.gatejit.gate_epilogue
  torch.ops ... _out       the op overload called directly (no Python entry point)
  Runtime.gate_epilogue    gatejit's launch path without the torch dispatcher
  F.linear                 torch.nn.functional.linear(h, W), torch's own eager call
  unfused expression       a * torch.sigmoid(F.linear(h, W)) (three torch calls)

and reports microseconds per call (median of REPEATS runs). The loop is short
enough that the launch queue never fills, and the GPU time per call (CUDA
events, same loop) is printed beside it: where the GPU time exceeds the host
time the loop is GPU-bound and the number is an upper bound.

Usage (GPU machine, a bundle in GATEJIT_BUNDLE_PATH):
    python3 python/tests/host_cost.py [--out host_cost.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

CALLS = 400
REPEATS = 15
SHAPES = [(1, 24, 64), (1, 1536, 7168), (16, 1536, 7168)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="write the numbers as JSON here")
    args = parser.parse_args()
    import torch
    import torch.nn.functional as F
    import gatejit

    if not torch.cuda.is_available():
        print("host_cost: no CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda", torch.cuda.current_device())
    runtime = gatejit.default_runtime()
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    rows = []
    for m, n, k in SHAPES:
        h = torch.randn(m, k, generator=gen, device=device).to(torch.bfloat16)
        w = (torch.randn(n, k, generator=gen, device=device) / k ** 0.5).to(torch.bfloat16)
        a = torch.randn(m, n, generator=gen, device=device).to(torch.bfloat16)
        o = torch.empty_like(a)
        op_out = torch.ops.gatejit.gate_epilogue_out.default
        candidates = {
            "gatejit op (out)": lambda: gatejit.gate_epilogue(h, w, a, out=o),
            "gatejit op (new tensor)": lambda: gatejit.gate_epilogue(h, w, a),
            "torch.ops.gatejit.gate_epilogue_out": lambda: op_out(h, w, a, o, "sigmoid", "boundary"),
            "Runtime.gate_epilogue (no dispatcher)": lambda: runtime.gate_epilogue(h, w, a, o),
            "F.linear": lambda: F.linear(h, w),
            "unfused expression": lambda: a * torch.sigmoid(F.linear(h, w)),
        }
        gatejit.prepare_for([m], n, k, torch.bfloat16)
        result = {"m": m, "n": n, "k": k, "path": gatejit.explain(h, w, a, out=o), "us_per_call": {},
                  "gpu_us_per_call": {}}
        for name, fn in candidates.items():
            for _ in range(50):
                fn()
            torch.cuda.synchronize()
            host, gpu = [], []
            for _ in range(REPEATS):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
                t0 = time.perf_counter()
                for _ in range(CALLS):
                    fn()
                t1 = time.perf_counter()
                end.record()
                torch.cuda.synchronize()
                host.append((t1 - t0) / CALLS * 1e6)
                gpu.append(start.elapsed_time(end) * 1e3 / CALLS)
            result["us_per_call"][name] = statistics.median(host)
            result["gpu_us_per_call"][name] = statistics.median(gpu)
        rows.append(result)

    print(f"# host cost per eager call (us, median of {REPEATS} x {CALLS} calls), {torch.cuda.get_device_name(device)}, "
          f"torch {torch.__version__}, Python {sys.version.split()[0]}")
    names = list(rows[0]["us_per_call"])
    print("| M, N, K | gatejit path | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for r in rows:
        cells = [f"{r['us_per_call'][x]:.1f} (GPU {r['gpu_us_per_call'][x]:.1f})" for x in names]
        print(f"| {r['m']}, {r['n']}, {r['k']} | {r['path']} | " + " | ".join(cells) + " |")
    for r in rows:
        ratio = r["us_per_call"]["gatejit op (out)"] / r["us_per_call"]["F.linear"]
        print(f"M={r['m']} N={r['n']} K={r['k']}: gatejit op (out) / F.linear host cost = {ratio:.2f}")
    if args.out:
        args.out.write_text(json.dumps({"device": torch.cuda.get_device_name(device), "torch": torch.__version__,
                                        "calls": CALLS, "repeats": REPEATS, "results": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
