#!/usr/bin/env python3
"""Search a form's tuning space with the performance model, for one target:
for each shape, the planner's own plan against the best plan that passes
every gate that applies, and the best of all. Each candidate is a real
compile (`gatejit compile --json` with GATEJIT_MMA_TUNING), so the code
object's facts and gates are the ones the planner's plan gets; candidates
the planner's fit rules turn into the same tuning and grid count once.

These are predictions, not measurements (research/gfx950-model.md). A plan the
search ranks first is a candidate for a sweep on the H200, not a result.

    bench/model_search.py --m 512 2048 --n 1536 --space tiled --json out.json
    bench/model_search.py --m 48 64 128 --space streamed
    bench/model_search.py --m 80 96 --space tiled --rows   # candidate rows of compiler/tuning/<target>.tsv
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The override keys of each form (compiler/src/tuning_override.h) and the
# values searched. "tiled": mma_tiled's tiles, waves, stages and K split;
# "streamed": the register-streamed mma's row tiles, split and grid rows.
SPACES = {
    "tiled": {"tiled": [1], "bm": [64, 128], "bn": [64, 128], "waves": [4, 8], "warps_n": [1, 2, 4],
              "stages": [2, 3, 4], "splits": [1, 2, 3, 4, 5, 6, 8, 10, 12], "poll": [0, 1]},
    "streamed": {"tiled": [0], "rt": [1, 2, 4], "splits": [1, 2, 3, 4, 5, 6, 7, 8, 10], "mtiles": [1, 2, 4],
                 "mstride": [16, 32, 48, 64, 128], "poll": [0, 1]},
}
TUNING_KEYS = ["BM", "BN", "WARPS_N", "STAGES", "SPLITS", "SPLIT_POLL", "SPLIT_ROUND", "WAVES_PER_EU", "RT", "MT",
               "M_STRIDE", "KSPLIT", "GROUPS", "VECS", "UNROLL"]


def compile_one(gatejit, cache, target, m, n, k, dtype, override):
    env = dict(os.environ, GATEJIT_MMA_TUNING=override, GATEJIT_CACHE_DIR=cache)
    r = subprocess.run([gatejit, "compile", "--m", str(m), "--n", str(n), "--k", str(k), "--dtype", dtype,
                        "--target", target, "--json", "--no-cache"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None
    d = json.loads(r.stdout)
    model = d["model"]
    return {
        "override": override,
        "template_file": d.get("template_file"),
        "tuning": {key: d["tuning"][key] for key in TUNING_KEYS if key in d.get("tuning", {})},
        "tuning_all": d.get("tuning", {}),
        "grid": d.get("grid"),
        "threads": d.get("workgroup_size", [0])[0],
        "predicted_us": model["predicted_us"],
        "range_us": model["range_us"],
        "limiter": model["limiter"],
        "ideal_read_us": model["ideal_read_us"],
        # (A gate applies unless the report says it does not: code_object_report.cpp.)
        "failed_gates": sorted(name for name, g in d["gates"].items() if g.get("applies", True) and not g["passed"]),
    }


def search(a, m, n):
    space = SPACES[a.space]
    overrides = [""] + [",".join(f"{key}={value}" for key, value in zip(space, values))
                        for values in itertools.product(*space.values())]
    with tempfile.TemporaryDirectory() as cache, ThreadPoolExecutor(a.jobs) as pool:
        rows = [r for r in pool.map(lambda o: compile_one(a.gatejit, cache, a.target, m, n, a.k, a.dtype, o), overrides)
                if r]
    default = next((r for r in rows if r["override"] == ""), None)
    if default is None:
        sys.exit(f"model_search: the planner's own plan for M = {m}, N = {n} does not compile")
    distinct = {}
    for r in rows:
        key = json.dumps([r["template_file"], r.pop("tuning_all"), r["grid"], r["threads"]], sort_keys=True)
        if key not in distinct or r["override"] == "":
            distinct[key] = r
    ranked = sorted(distinct.values(), key=lambda r: r["predicted_us"])
    passing = [r for r in ranked if not r["failed_gates"]]
    return {"m": m, "n": n, "k": a.k, "dtype": a.dtype, "target": a.target, "space": a.space,
            "candidates": len(overrides), "distinct_plans": len(ranked), "default": default,
            "best_passing": passing[0] if passing else None, "best": ranked[0], "top": ranked[:a.top]}


def line(label, r):
    if r is None:
        return f"  {label:13s} none"
    ideal = sum(r["ideal_read_us"]) / 2
    return (f"  {label:13s} {r['predicted_us']:7.2f} us ({r['predicted_us'] / (ideal + 1e-9):.2f}x ideal read) "
            f"{r['limiter']:18s} {r['template_file']} {r['tuning']} grid {r['grid']} x{r['threads']}"
            f"{' FAILS ' + ','.join(r['failed_gates']) if r['failed_gates'] else ''}  [{r['override']}]")


# The tuning table's columns (compiler/tuning/*.tsv, compiler/src/plan/tuning_table.h).
TABLE_HEADER = "rule\tm\tn\tk\tweight\twhen\tchoice\tat\tpredicted_us\tmeasured_us\trecord\tnote"


def table_row(res, r):
    """A candidate row for the target's tuning table: the search's best passing plan as the
    rule's choice for exactly this shape (widen the ranges and add conditions by hand)."""
    t = r["tuning"]
    if res["space"] == "tiled":
        wave = 32 if res["target"].startswith("sm_") else 64
        rule, choice = "tiled_shape", f"bn={t.get('BN')} bm={t.get('BM')} stages={t.get('STAGES')} waves={r['threads'] // wave}"
    else:
        rule = "streamed"
        choice = f"rt={t.get('RT')} ksplit={t.get('KSPLIT')} mtiles={t.get('MT')} splits_min={t.get('SPLITS')}"
    weight = "16bit" if res["dtype"] in ("bf16", "f16") else res["dtype"]
    note = (f"model_search {res['space']}: {r['limiter']}; the planner's plan {res['default']['predicted_us']:.2f}"
            f" [{r['override']}]")
    return "\t".join([rule, str(res["m"]), str(res["n"]), str(res["k"]), weight, "*", choice,
                      f"n={res['n']} m={res['m']}", f"{r['predicted_us']:.2f}", "-", "-", note])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gatejit", default=os.path.join(ROOT, "build", "compiler", "gatejit"))
    ap.add_argument("--target", default="gfx950")
    ap.add_argument("--space", choices=sorted(SPACES), default="tiled")
    ap.add_argument("--m", type=int, nargs="+", required=True)
    ap.add_argument("--n", type=int, nargs="+", default=[1536])
    ap.add_argument("--k", type=int, default=7168)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--top", type=int, default=5, help="plans kept per shape in the JSON")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--rows", action="store_true",
                    help="print each shape's best passing plan as a candidate tuning-table row")
    a = ap.parse_args()
    results = []
    for n in a.n:
        for m in a.m:
            res = search(a, m, n)
            results.append(res)
            print(f"N = {n} M = {m} ({a.target}, {a.space}: {res['distinct_plans']} distinct plans "
                  f"of {res['candidates']} candidates)")
            print(line("planner", res["default"]))
            print(line("best passing", res["best_passing"]))
            print(line("best", res["best"]))
            sys.stdout.flush()
    if a.rows:
        print(TABLE_HEADER)
        for res in results:
            if res["best_passing"]:
                print(table_row(res, res["best_passing"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
