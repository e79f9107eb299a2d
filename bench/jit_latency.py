"""JIT latency on the GPU: gatejit's runtime JIT against Triton's, same run.

For gatejit (the JIT library named by $GATEJIT_JIT_LIBRARY, or by
$GATEJIT_LIBRARY, loaded through the Python binding, no bundle):
  cold  a fresh process and an empty disk cache: the first call of each
        contract (gemv M=1 (forced), mma M=1, tiled M=64; N=1536, K=7168, bf16) runs
        the compiler, writes the cache entry, loads the module and launches;
  warm  a fresh process on that cache: the first call of each contract is a
        cache hit, a module load and a launch.
The same warm run with the CUDA driver's compute cache off shows what a
machine without ~/.nv/ComputeCache pays (the driver compiles the cached PTX
again), and a "split" run times the compile alone (resolve_contract, no
device) before the first call.
For Triton, a fused gate kernel (attn * sigmoid(hidden @ W^T)), first call in
a fresh process with an empty $TRITON_CACHE_DIR (cold; the CUDA driver's
compute cache is off in every cold run), then with the filled
one (warm). Each first call is timed from just before the call to the end of
a device synchronisation, after torch and the device are initialised; the
second call is timed the same way for scale.

    python3 bench/jit_latency.py [--rounds 2] [--json out.json] [--md out.md]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMS = {  # name: (M, template forced through GATEJIT_TEMPLATE or None); sm_90 picks mma at M = 1
    "gemv": (1, "gemv"),
    "mma": (1, None),
    "tiled": (64, None),
}
N, K = 1536, 7168


def _timed(fn, torch):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def _inputs(torch, m):
    g = torch.Generator(device="cuda").manual_seed(m)
    hidden = torch.randn(m, K, device="cuda", dtype=torch.bfloat16, generator=g)
    weight = torch.randn(N, K, device="cuda", dtype=torch.bfloat16, generator=g) / K ** 0.5
    attn = torch.randn(m, N, device="cuda", dtype=torch.bfloat16, generator=g)
    return hidden, weight, attn


def _entry_reports(cache_dir):
    """{path: report} of the cache's entries ("GJKB" | u32 version | u32 meta length | meta JSON | ...)."""
    out = {}
    for path in Path(cache_dir).glob("v1/*/*.gjk"):
        blob = path.read_bytes()
        meta = json.loads(blob[12:12 + int.from_bytes(blob[8:12], "little")])
        out[str(path)] = dict(json.loads(meta["report"]), format=meta["format"])
    return out


def child_gatejit():
    import torch
    torch.zeros(1, device="cuda")  # CUDA context and torch's kernels up before any timing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import gatejit
    out = {}
    split = os.environ.get("GATEJIT_BENCH_SPLIT") == "1"
    for name, (m, template) in FORMS.items():
        if template:
            os.environ["GATEJIT_TEMPLATE"] = template
        rt = gatejit.Runtime(cache_dir=os.environ["GATEJIT_CACHE_DIR"])
        os.environ.pop("GATEJIT_TEMPLATE", None)
        hidden, weight, attn = _inputs(torch, m)
        res = torch.empty_like(attn)
        compile_ms, phases = None, []
        if split:  # the compile alone (no device), then the first call finds it in the cache
            contract = {"m": m, "n": N, "k": K, "dtype": "bf16", "act": "sigmoid", "target": "sm_90"}
            if template:
                contract["template"] = template
            before = set(_entry_reports(os.environ["GATEJIT_CACHE_DIR"]))
            start = time.perf_counter()
            rt.resolve_contract(contract)
            compile_ms = (time.perf_counter() - start) * 1e3
            new = [r for p, r in _entry_reports(os.environ["GATEJIT_CACHE_DIR"]).items() if p not in before]
            phases = [r.get("compile_phases_ms") for r in new if r["format"] == "ptx"]
        phases = phases[0] if phases else None
        first = _timed(lambda: rt.gate_epilogue(hidden, weight, attn, res), torch)
        second = _timed(lambda: rt.gate_epilogue(hidden, weight, attn, res), torch)
        ref = (torch.sigmoid(hidden.float() @ weight.float().T) * attn.float())
        err = (res.float() - ref).abs().max().item()
        out[name] = {"first_ms": first, "second_ms": second, "max_abs_err": err, "jit_attached": rt.jit_attached,
                     "path": rt.explain(hidden, weight, attn, res), "compile_ms": compile_ms,
                     "compile_phases_ms": phases}
    print(json.dumps(out))


def child_triton():
    import torch
    torch.zeros(1, device="cuda")
    import triton
    import triton.language as tl

    @triton.jit
    def gate(h_ptr, w_ptr, a_ptr, o_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            h = tl.load(h_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M), other=0.0)
            w = tl.load(w_ptr + rn[:, None] * K + (k0 + rk)[None, :], mask=(rn[:, None] < N), other=0.0)
            acc += tl.dot(h, tl.trans(w))
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        a = tl.load(a_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(o_ptr + rm[:, None] * N + rn[None, :], (tl.sigmoid(acc) * a).to(tl.bfloat16), mask=mask)

    hidden, weight, attn = _inputs(torch, 1)
    res = torch.empty_like(attn)
    run = lambda: gate[(1, triton.cdiv(N, 64))](hidden, weight, attn, res, 1, N, K, BM=16, BN=64, BK=64)
    first = _timed(run, torch)
    second = _timed(run, torch)
    ref = (torch.sigmoid(hidden.float() @ weight.float().T) * attn.float())
    print(json.dumps({"triton": {"first_ms": first, "second_ms": second,
                                 "max_abs_err": (res.float() - ref).abs().max().item()}}))


def run_child(kind, env):
    p = subprocess.run([sys.executable, __file__, "--child", kind], env=env, capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"{kind} child failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", choices=["gatejit", "triton"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    if a.child == "gatejit":
        return child_gatejit()
    if a.child == "triton":
        return child_triton()
    rows = {}  # (name, phase) -> [child results]
    details = []
    # cold: empty caches, the CUDA driver's too; warm: a fresh process on them; warm-nodc: the same
    # with the CUDA driver's own compute cache off (CUDA_CACHE_DISABLE=1: the
    # driver turns the cached PTX into machine code again); split: another
    # empty cache, the compile timed alone (resolve_contract), then the first
    # call (module load, the driver's PTX compile, launch).
    nodc = {"CUDA_CACHE_DISABLE": "1"}
    phases = (("cold", nodc, True), ("warm", {}, True), ("warm-nodc", nodc, False),
              ("split", dict(nodc, GATEJIT_BENCH_SPLIT="1"), False))
    for r in range(a.rounds):
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tcache, \
                tempfile.TemporaryDirectory() as split_cache:
            for phase, extra, with_triton in phases:
                env = dict(os.environ, GATEJIT_CACHE_DIR=split_cache if phase == "split" else cache,
                           TRITON_CACHE_DIR=tcache, **extra)
                for k in ("GATEJIT_BUNDLE_PATH", "GATEJIT_DISABLE_JIT", "GATEJIT_TEST_BUNDLE"):
                    env.pop(k, None)
                for kind in ("gatejit", "triton") if with_triton else ("gatejit",):
                    res = run_child(kind, env)
                    details.append({"round": r, "phase": phase, **res})
                    for name, v in res.items():
                        rows.setdefault((name, phase), []).append(v)
    fmt = lambda xs: f"{statistics.median(xs):.1f} ({', '.join(f'{x:.1f}' for x in xs)})"
    col = lambda name, phase, key="first_ms": fmt([v[key] for v in rows[(name, phase)]]) if (name, phase) in rows else "-"
    lines = ["| kernel | cold first call | of which compile | warm first call, fresh process | "
             "warm, driver cache off | second call | path (warm) |", "|---|---|---|---|---|---|---|"]
    for name in list(FORMS) + ["triton"]:
        path = rows[(name, "warm")][-1].get("path", "Triton cache")
        lines.append(f"| {name} | {col(name, 'cold')} | {col(name, 'split', 'compile_ms')} | {col(name, 'warm')} | "
                     f"{col(name, 'warm-nodc')} | {col(name, 'warm', 'second_ms')} | {path} |")
    lines.append("")
    lines.append("milliseconds: median (each round); 'of which compile' is resolve_contract alone on another empty "
                 "cache (the first call after it took " + ", ".join(
                     f"{n} {fmt([v['first_ms'] for v in rows[(n, 'split')]])}" for n in FORMS) + ")")
    lines.append("")
    lines.append("the compile's phases (the report's compile_phases_ms), median ms over the split runs:")
    for n in FORMS:
        runs = [v["compile_phases_ms"] for v in rows.get((n, "split"), []) if v.get("compile_phases_ms")]
        if runs:
            lines.append(f"- {n}: " + ", ".join(f"{k} {statistics.median(r[k] for r in runs):.1f}" for k in runs[0]))
    for d in details:
        for name, v in d.items():
            if isinstance(v, dict) and v.get("max_abs_err", 0) > 0.1:
                raise SystemExit(f"{name} ({d['phase']}): max abs error {v['max_abs_err']} against torch")
            if isinstance(v, dict) and "jit_attached" in v and not v["jit_attached"]:
                raise SystemExit("the JIT was not attached: set GATEJIT_LIBRARY to libgatejit_jit.so")
    table = "\n".join(lines)
    print(table)
    if a.json:
        Path(a.json).write_text(json.dumps(details, indent=1))
    if a.md:
        Path(a.md).write_text(table + "\n")


if __name__ == "__main__":
    main()
