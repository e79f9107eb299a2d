"""JIT latency on the GPU: gatejit's runtime JIT against Triton's, same run.

For gatejit (the JIT library named by $GATEJIT_JIT_LIBRARY, or by
$GATEJIT_LIBRARY, loaded through the Python binding, no bundle):
  cold  a fresh process and an empty disk cache: the first call of each
        contract (gemv M=1 (forced), mma M=1, tiled M=64; N=1536, K=7168, bf16) runs
        the compiler, writes the cache entry, loads the module and launches;
  warm  a fresh process on that cache: the first call of each contract is a
        cache hit, a module load and a launch.
For Triton, a fused gate kernel (attn * sigmoid(hidden @ W^T)), first call in
a fresh process with an empty $TRITON_CACHE_DIR (cold), then with the filled
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


def child_gatejit():
    import torch
    torch.zeros(1, device="cuda")  # CUDA context and torch's kernels up before any timing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import gatejit
    out = {}
    for name, (m, template) in FORMS.items():
        if template:
            os.environ["GATEJIT_TEMPLATE"] = template
        rt = gatejit.Runtime(cache_dir=os.environ["GATEJIT_CACHE_DIR"])
        os.environ.pop("GATEJIT_TEMPLATE", None)
        hidden, weight, attn = _inputs(torch, m)
        res = torch.empty_like(attn)
        first = _timed(lambda: rt.gate_epilogue(hidden, weight, attn, res), torch)
        second = _timed(lambda: rt.gate_epilogue(hidden, weight, attn, res), torch)
        ref = (torch.sigmoid(hidden.float() @ weight.float().T) * attn.float())
        err = (res.float() - ref).abs().max().item()
        out[name] = {"first_ms": first, "second_ms": second, "max_abs_err": err, "jit_attached": rt.jit_attached,
                     "path": rt.explain(hidden, weight, attn, res)}
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
    rows = {}  # (name, phase) -> [first_ms...]
    details = []
    for r in range(a.rounds):
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tcache:
            env = dict(os.environ, GATEJIT_CACHE_DIR=cache, TRITON_CACHE_DIR=tcache)
            for k in ("GATEJIT_BUNDLE_PATH", "GATEJIT_DISABLE_JIT", "GATEJIT_TEST_BUNDLE"):
                env.pop(k, None)
            for phase in ("cold", "warm"):
                for kind in ("gatejit", "triton"):
                    res = run_child(kind, env)
                    details.append({"round": r, "phase": phase, **res})
                    for name, v in res.items():
                        rows.setdefault((name, phase), []).append(v)
    lines = ["| kernel | cold first call (ms) | warm first call, fresh process (ms) | second call (ms) | path (warm) |",
             "|---|---|---|---|---|"]
    for name in list(FORMS) + ["triton"]:
        cold = [v["first_ms"] for v in rows[(name, "cold")]]
        warm = [v["first_ms"] for v in rows[(name, "warm")]]
        second = [v["second_ms"] for v in rows[(name, "warm")]]
        path = rows[(name, "warm")][-1].get("path", "Triton cache")
        fmt = lambda xs: f"{statistics.median(xs):.1f} ({', '.join(f'{x:.1f}' for x in xs)})"
        lines.append(f"| {name} | {fmt(cold)} | {fmt(warm)} | {fmt(second)} | {path} |")
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
