#!/usr/bin/env python3
"""The performance model's predictions for a list of shapes on one target,
read from `gatejit compile --json` (the report's "model"), optionally next
to measured times from a benchmark JSON (bench/gpu_bench.py --out): the
calibration table of research/gfx950-model.md.

    bench/model_table.py --target sm_90 --bench research/data/bench-h200-....json
    bench/model_table.py --target gfx950 --m 1 2 4 8 16 --n 1536
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def predict(gatejit, target, m, n, k, dtype, cache):
    out = subprocess.run(
        [gatejit, "compile", "--m", str(m), "--n", str(n), "--k", str(k), "--dtype", dtype, "--target", target,
         "--json", "--no-cache"],
        check=True, capture_output=True, text=True, env=dict(os.environ, GATEJIT_CACHE_DIR=cache))
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gatejit", default=os.path.join(ROOT, "build", "compiler", "gatejit"))
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--bench", help="benchmark JSON whose rows (and gatejit_us) to predict")
    ap.add_argument("--m", type=int, nargs="*", default=[1, 2, 4, 8, 16, 32, 64, 128, 512, 2048])
    ap.add_argument("--n", type=int, nargs="*", default=[1536])
    ap.add_argument("--k", type=int, default=7168)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    if a.bench:
        with open(a.bench) as f:
            bench = json.load(f)
        shapes = [(c["m"], c["n"], c["k"], c["dtype"], c.get("gatejit_us")) for c in bench["configs"]]
    else:
        shapes = [(m, n, a.k, a.dtype, None) for n in a.n for m in a.m]
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for m, n, k, dtype, measured in shapes:
            r = predict(a.gatejit, a.target, m, n, k, dtype, cache)
            model = r["model"]
            form = r["plan_facts"]["form"]
            row = {"m": m, "n": n, "k": k, "dtype": dtype, "form": form, "grid": r["grid"],
                   "predicted_us": model["predicted_us"], "range_us": model["range_us"], "limiter": model["limiter"],
                   "ideal_read_us": model["ideal_read_us"], "measured_us": measured,
                   "gates_failing": sorted(g for g, v in r["gates"].items() if v["applies"] and not v["passed"])}
            if measured:
                row["predicted_over_measured"] = model["predicted_us"] / measured
            rows.append(row)
    print(f"| M | N | form | grid | predicted µs | range µs | limiter | ideal read µs | measured µs | predicted / measured |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for r in rows:
        ratio = r.get("predicted_over_measured")
        if ratio:
            worst = max(worst, abs(ratio - 1))
        measured = f"{r['measured_us']:.2f} | {ratio:.2f}" if ratio else "- | -"
        print(f"| {r['m']} | {r['n']} | {r['form']} | {'x'.join(map(str, r['grid']))} | {r['predicted_us']:.2f} | "
              f"{r['range_us'][0]:.2f}-{r['range_us'][1]:.2f} | {r['limiter']} | "
              f"{r['ideal_read_us'][0]:.2f}-{r['ideal_read_us'][1]:.2f} | {measured} |")
    if a.bench:
        print(f"\nworst |predicted / measured - 1|: {worst:.1%}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
