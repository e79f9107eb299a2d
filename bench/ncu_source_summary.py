#!/usr/bin/env python3
"""Summarise scripts/ncu_source.sh's CSV (ncu's source page, SASS level):
the instructions with the most warp stall samples, each with its share of
all samples and its two largest stall reasons.

    python3 bench/ncu_source_summary.py ncu-source-m512.csv [--top 20]
"""
import argparse
import csv


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("csv", nargs="+")
    p.add_argument("--top", type=int, default=20)
    args = p.parse_args()
    for path in args.csv:
        rows = list(csv.reader(open(path, newline="")))
        start = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
        header = rows[start]
        data = [r for r in rows[start + 1:] if len(r) == len(header) and r[0].startswith("0x")]
        samples = header.index("Warp Stall Sampling (All Samples)")
        reasons = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
        total = sum(float(r[samples] or 0) for r in data) or 1.0
        print(f"== {path}: {len(data)} SASS instructions, {total:.0f} stall samples")
        for r in sorted(data, key=lambda r: -float(r[samples] or 0))[: args.top]:
            top2 = sorted(((float(r[header.index(c)] or 0), c) for c in reasons), reverse=True)[:2]
            why = " ".join(f"{c[6:]}={v:.0f}" for v, c in top2 if v > 0)
            print(f"{float(r[samples]) / total * 100:5.1f}%  {r[1].strip()[:64]:64s}  {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
