"""Measured routing in the MLA block: never slower than the block it replaces.

The block of python/tests/mla_module.py (hidden 7168, gate N = 1536) at each
M, without the output-gate callback (its own expression) and with
GatejitOutputGate(measure=True) installed, each captured in a CUDA graph over
rotating copies of the block (so weights come from HBM) and timed by
gatejit.graph_timing, in the same process, alternating. Reports µs per block,
the ratio with/without, and the path the adapter's decision record names.

    python3 bench/routing_bench.py [--m 1 4 16 64 128 512 2048] [--json out.json] [--md out.md]
"""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "python" / "tests"))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, nargs="+", default=[1, 4, 16, 64, 128, 512, 2048])
    p.add_argument("--json", type=Path)
    p.add_argument("--md", type=Path)
    args = p.parse_args()
    import torch

    from gatejit.graph_timing import GraphTimer, rotating_sets
    from gatejit.integrations.vllm import GatejitOutputGate
    from mla_module import TinyMLAAttention

    dev = torch.device("cuda")
    torch.manual_seed(0)
    base = TinyMLAAttention().to(device=dev, dtype=torch.bfloat16).eval().requires_grad_(False)
    block_bytes = sum(t.numel() * t.element_size() for t in base.parameters())
    sets = rotating_sets(block_bytes)
    plain = [base] + [copy.deepcopy(base) for _ in range(sets - 1)]
    fused = [copy.deepcopy(b) for b in plain]
    gate = GatejitOutputGate(capture_sizes=args.m, measure=True)
    with torch.no_grad():
        for b in fused:  # one measurement per size (every copy has the same shape), then reused
            assert gate.prepare(b.gate_proj), "gatejit should serve the MLA gate"
            b.output_gate = gate
    record = gate.decision_record(fused[0].gate_proj)
    timer = GraphTimer(torch, dev, budget_s=0.3)
    timer.warm_clocks()
    card = torch.cuda.get_device_name(dev)
    rows = []
    with torch.no_grad():
        for m in args.m:
            xs = [torch.randn(m, 7168, device=dev).to(torch.bfloat16) for _ in range(sets)]
            plain_us, fused_us = float("inf"), float("inf")
            for _ in range(2):  # alternating; each keeps its lower median
                plain_us = min(plain_us, timer.measure(lambda i: plain[i](xs[i]), sets)[0])
                fused_us = min(fused_us, timer.measure(lambda i: fused[i](xs[i]), sets)[0])
            route = record["routes"][m]
            rows.append({"m": m, "block_without_callback_us": round(plain_us, 3),
                         "block_with_measured_callback_us": round(fused_us, 3),
                         "ratio": round(fused_us / plain_us, 4), "path": route["path"],
                         "gate_gatejit_us": route["gatejit_us"], "gate_fallback_us": route["replaced_us"]})
            r = rows[-1]
            print(f"M={m:5d}  block {plain_us:8.2f} us  with callback {fused_us:8.2f} us  ratio {r['ratio']:.3f}  "
                  f"path {r['path']:8s} (gate alone: gatejit {r['gate_gatejit_us']} us, fallback "
                  f"{r['gate_fallback_us']} us)", flush=True)
    result = {"card": card, "date": datetime.date.today().isoformat(), "rotating_sets": sets,
              "method": "eager MLA block in CUDA graphs over rotating copies, gatejit.graph_timing", "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if args.md:
        lines = [f"Measured routing in the MLA block ({card}, {result['date']}; measured, µs per block)", "",
                 "| M | block without callback | with measured callback | ratio | path | gate: gatejit | gate: fallback |",
                 "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['m']} | {r['block_without_callback_us']} | {r['block_with_measured_callback_us']} | "
                  f"{r['ratio']} | {r['path']} | {r['gate_gatejit_us']} | {r['gate_fallback_us']} |" for r in rows]
        args.md.write_text("\n".join(lines) + "\n")
    worst = max(r["ratio"] for r in rows)
    print(f"worst ratio with/without the callback: {worst:.3f} (target: at most 1.02)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
