#!/usr/bin/env python3
"""One contract's kernel launched a few times through the runtime, for a
profiler to pick up (ncu --launch-skip 3 --launch-count 1 ...):

    ncu --section SpeedOfLight python3 bench/profile_one.py --m 32
"""
import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, required=True)
    p.add_argument("--n", type=int, default=1536)
    p.add_argument("--k", type=int, default=7168)
    p.add_argument("--launches", type=int, default=5)
    p.add_argument("--fp8", choices=["per_channel", "block128"],
                   help="an fp8 e4m3 weight with fp32 scales of this kind")
    args = p.parse_args()
    import torch
    import gatejit

    rt = gatejit.Runtime()
    dev = torch.device("cuda")
    h = torch.randn(args.m, args.k, device=dev).bfloat16()
    w = (torch.randn(args.n, args.k, device=dev) / math.sqrt(args.k)).bfloat16()
    a = torch.randn(args.m, args.n, device=dev).bfloat16()
    o = torch.empty(args.m, args.n, dtype=torch.bfloat16, device=dev)
    s = None
    if args.fp8:
        rows = args.n if args.fp8 == "per_channel" else (args.n + 127) // 128
        cols = 1 if args.fp8 == "per_channel" else (args.k + 127) // 128
        w = (torch.randn(args.n, args.k, device=dev) * 64).clamp(-448, 448).to(torch.float8_e4m3fn)
        s = torch.rand(rows, cols, device=dev) / 4096 + 1 / 8192
    for _ in range(args.launches):
        rt.gate_epilogue(h, w, a, out=o, weight_scale=s)
    torch.cuda.synchronize()
    print(rt.explain(h, w, a, out=o, weight_scale=s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
