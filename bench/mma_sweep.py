#!/usr/bin/env python3
"""Side-by-side variants of one template on one GPU: the same contracts
compiled with different tuning overrides (GATEJIT_MMA_TUNING) or by different
compiler versions (a bundle made before a change), one bundle per variant (made
by scripts/prepare_device.sh), timed with gpu_bench.py's method (gatejit/graph_timing.py:
CUDA-graph replays over rotating tensor sets past the L2), in one process and one
run, next to the practical read floor of the same bytes (bench/read_floor.py).
Every variant's result is checked first, except those named probe*: kernels built
with a stage left out on purpose, to time the rest (research/perf-notes.md, v34).

    python3 bench/mma_sweep.py --bundle default=.device/kernels.gjb --bundle rt2=.device/sweep-rt2.gjb \
        --m 1 2 8 16 32 64 128 [--n 1536 3072] [--template gemv] --json sweep.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from gatejit.graph_timing import GraphTimer  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bundle", action="append", required=True, help="name=path of a variant's bundle")
    p.add_argument("--m", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128])
    p.add_argument("--n", type=int, nargs="+", default=[1536])
    p.add_argument("--template", default="mma", choices=["mma", "gemv", "auto"],
                   help="the template every call must use (auto: the loader's own choice)")
    p.add_argument("--no-floor", action="store_true", help="skip the read floor arm")
    p.add_argument("--k", type=int, default=7168)
    p.add_argument("--json", type=Path)
    p.add_argument("--fp8", choices=["per_channel", "block128"],
                   help="fp8 e4m3 weights with this scale layout (the bundles must hold those contracts)")
    args = p.parse_args()
    import torch
    sys.path.insert(0, str(REPO / "python"))
    import gatejit

    dev = torch.device("cuda")
    runtimes = {}
    os.environ["GATEJIT_TEMPLATE"] = args.template  # every M: the sweep is about this template (or auto)
    try:
        for item in args.bundle:
            name, path = item.split("=", 1)
            runtimes[name] = gatejit.Runtime(bundle_path=path, disable_jit=True, disable_cache=True)
    finally:
        del os.environ["GATEJIT_TEMPLATE"]

    timer = GraphTimer(torch, dev)
    timer.warm_clocks()
    from read_floor import read_floor  # noqa: E402 (Triton, only on the GPU machine)

    results = []
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    k = args.k
    for n, m in [(n, m) for n in args.n for m in args.m]:
        sets = max(4, math.ceil(256 * 2**20 / (n * k * 2)))
        hs = [torch.randn(m, k, generator=gen, device=dev).bfloat16() for _ in range(sets)]
        ws = [(torch.randn(n, k, generator=gen, device=dev) / math.sqrt(k)).bfloat16() for _ in range(sets)]
        # fp8: the weight is e4m3 codes, `ss` its fp32 scales; `ref` uses their exact product.
        ss = [None] * sets
        if args.fp8:
            shape = (n, 1) if args.fp8 == "per_channel" else (-(-n // 128), -(-k // 128))
            ws = [(w.float() * 64).to(torch.float8_e4m3fn) for w in ws]
            ss = [torch.rand(shape, generator=gen, device=dev) / 32 + 1 / 128 for _ in range(sets)]
        ats = [torch.randn(m, n, generator=gen, device=dev).bfloat16() for _ in range(sets)]
        outs = [torch.empty(m, n, dtype=torch.bfloat16, device=dev) for _ in range(sets)]
        w0 = ws[0].float()
        if args.fp8 == "per_channel":
            w0 = w0 * ss[0]
        elif args.fp8:
            w0 = w0 * ss[0].repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
        ref = ats[0].float() * torch.sigmoid(hs[0].float() @ w0.T)
        row = {"m": m, "n": n, "k": k, "template": args.template, "fp8": args.fp8}
        for name, rt in runtimes.items():
            try:
                outs[0].fill_(float("nan"))
                rt.gate_epilogue(hs[0], ws[0], ats[0], out=outs[0], weight_scale=ss[0])
                err = float((outs[0].float() - ref).abs().max())
                # Variants named probe*: kernels with a stage left out on
                # purpose (time one part of the kernel), timed, not checked.
                if not name.startswith("probe") and (not math.isfinite(err) or err > 0.05):
                    raise RuntimeError(f"wrong result (max |diff| {err})")
                us, _ = timer.measure(
                    lambda i: rt.gate_epilogue(hs[i], ws[i], ats[i], out=outs[i], weight_scale=ss[i]), sets)
                row[name] = round(us, 3)
                row[name + "_path"] = rt.explain(hs[0], ws[0], ats[0], out=outs[0], weight_scale=ss[0])
            except Exception as e:  # noqa: BLE001
                row[name] = f"failed: {e}"
        if not args.no_floor:
            wbytes = n * k + ss[0].numel() * 4 if args.fp8 else 2 * n * k
            moved = 2 * (m * k + 2 * m * n) + wbytes  # hidden, W (and scales) and attn read, out written
            row["read_floor"] = round(read_floor(torch, timer.measure, moved, dev, 256 * 2**20, 4)[0], 3)
        results.append(row)
        floor = row.get("read_floor")
        print(f"N={n} M={m}: " + ", ".join(
            f"{name} {row[name]}" + (f" ({row[name] / floor:.3f}x floor)" if floor and isinstance(row[name], float) else "")
            for name in runtimes) + (f"; read floor {floor}" if floor else ""), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
