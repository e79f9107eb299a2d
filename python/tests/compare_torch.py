#!/usr/bin/env python3
"""How close is gatejit to PyTorch's own unfused expression?

For the seed case (N = 1536, K = 7168, bf16, sigmoid) and M in {1, 2, 4, 8, 16},
over several random draws, runs on the GPU

    gatejit:  gatejit.gate_epilogue(hidden, W, attn)
    torch:    attn * torch.sigmoid(torch.nn.functional.linear(hidden, W))

and reports, per M (mean over draws, and the worst draw):

  * bit-exact: the fraction of outputs where the two agree bit for bit;
  * rel RMSE: ||gatejit - torch|| / ||torch||, in fp64;
  * for context, each one's rel RMSE against the exact value
    attn * sigmoid(hidden @ W.T) computed in fp64 without rounding, and each
    one's bit-exact fraction against the contract's rounding ("boundary":
    the fp64 projection rounded to bf16, then sigmoid, then the product, each
    rounded to bf16). torch's unfused expression rounds at the same three
    points; the two differ only where the fp32 summation orders disagree.

Inputs: hidden ~ N(0, 1), W ~ N(0, 1/K) (so hidden @ W.T ~ N(0, 1)),
attn ~ N(0, 1), drawn fresh each run (the seed is printed and saved).

Usage (on the GPU machine):
    GATEJIT_BUNDLE_PATH=/path/kernels.gjb python3 python/tests/compare_torch.py --out compare.json
Prints a markdown table last; --out writes every number as JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import secrets
import statistics
import sys
from pathlib import Path


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ms", default="1,2,4,8,16", help="comma-separated M values (default 1,2,4,8,16)")
    p.add_argument("--n", type=int, default=1536)
    p.add_argument("--k", type=int, default=7168)
    p.add_argument("--draws", type=int, default=5, help="random draws per M (default 5)")
    p.add_argument("--act", choices=["sigmoid", "silu"], default="sigmoid")
    p.add_argument("--seed", type=int, default=None, help="seed (default: a fresh random one)")
    p.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python/ of this tree
    import gatejit

    if not torch.cuda.is_available():
        print("compare_torch: no CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda", torch.cuda.current_device())
    dtype = torch.bfloat16
    n, k, act = args.n, args.k, args.act
    ms = [int(m) for m in args.ms.split(",") if m]
    seed = args.seed if args.seed is not None else secrets.randbits(62)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)

    def torch_act(x):
        return torch.sigmoid(x) if act == "sigmoid" else F.silu(x)

    def rel_rmse(a, b):
        a, b = a.double(), b.double()
        return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))

    def bit_exact(a, b):
        return float((a.contiguous().view(torch.int16) == b.contiguous().view(torch.int16)).double().mean())

    rows = []
    for m in ms:
        draws = []
        path = None
        for _ in range(args.draws):
            hidden = torch.randn(m, k, generator=gen, device=device).to(dtype)
            weight = (torch.randn(n, k, generator=gen, device=device) / math.sqrt(k)).to(dtype)
            attn = torch.randn(m, n, generator=gen, device=device).to(dtype)
            if path is None:
                path = gatejit.explain(hidden, weight, attn, act=act)
            out = torch.full_like(attn, float("nan"))
            gatejit.gate_epilogue(hidden, weight, attn, out=out, act=act)
            ref_torch = attn * torch_act(F.linear(hidden, weight))
            # fp64: the exact value, and the contract's rounding of it
            p64 = hidden.double() @ weight.double().T
            exact = attn.double() * torch_act(p64)
            g = torch_act(p64.float().to(dtype).float()).to(dtype)
            contract = (g.float() * attn.float()).to(dtype)
            torch.cuda.synchronize()
            if not bool(torch.isfinite(out).all()):
                print(f"M={m}: gatejit left {int((~torch.isfinite(out)).sum())} outputs not finite", file=sys.stderr)
            draws.append({
                "bit_exact_vs_torch": bit_exact(out, ref_torch),
                "rel_rmse_vs_torch": rel_rmse(out, ref_torch),
                "gatejit_rel_rmse_vs_exact": rel_rmse(out, exact),
                "torch_rel_rmse_vs_exact": rel_rmse(ref_torch, exact),
                "gatejit_bit_exact_vs_contract": bit_exact(out, contract),
                "torch_bit_exact_vs_contract": bit_exact(ref_torch, contract),
                "max_abs_diff_vs_torch": float((out.double() - ref_torch.double()).abs().max()),
            })
        summary = {key: statistics.fmean(d[key] for d in draws) for key in draws[0]}
        summary["worst_bit_exact_vs_torch"] = min(d["bit_exact_vs_torch"] for d in draws)
        summary["worst_rel_rmse_vs_torch"] = max(d["rel_rmse_vs_torch"] for d in draws)
        rows.append({"m": m, "n": n, "k": k, "path": path, "summary": summary, "draws": draws})

    header = ("| M | gatejit path | bit-exact vs torch (mean / worst) | rel RMSE vs torch (mean / worst) "
              "| gatejit rel RMSE vs fp64 | torch rel RMSE vs fp64 | gatejit = contract | torch = contract |")
    lines = [header, "|" + "---|" * 8]
    for r in rows:
        s = r["summary"]
        lines.append(
            f"| {r['m']} | {r['path']} | {s['bit_exact_vs_torch']:.4%} / {s['worst_bit_exact_vs_torch']:.4%} "
            f"| {s['rel_rmse_vs_torch']:.3e} / {s['worst_rel_rmse_vs_torch']:.3e} "
            f"| {s['gatejit_rel_rmse_vs_exact']:.3e} | {s['torch_rel_rmse_vs_exact']:.3e} "
            f"| {s['gatejit_bit_exact_vs_contract']:.4%} | {s['torch_bit_exact_vs_contract']:.4%} |"
        )
    table = "\n".join(lines)
    info = {
        "what": f"gatejit vs attn * {act}(F.linear(hidden, W)), bf16, N={n}, K={k}",
        "device": torch.cuda.get_device_name(device),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "bf16_reduced_precision_reduction": bool(torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
        "gatejit_library": gatejit.library_path(),
        "seed": seed,
        "draws": args.draws,
        "results": rows,
    }
    print(f"# gatejit vs torch unfused: {info['what']}")
    print(f"device {info['device']}, torch {info['torch']} (CUDA {info['cuda']}), seed {seed}, "
          f"{args.draws} draws per M, cuBLAS bf16 reduced-precision reduction "
          f"{'allowed' if info['bf16_reduced_precision_reduction'] else 'off'}")
    print()
    print(table)
    if args.out:
        args.out.write_text(json.dumps(info, indent=2) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
