"""Background JIT on the GPU: what a call costs on the host while kernels compile.

With the JIT library (``$GATEJIT_LIBRARY``, e.g. libgatejit_jit.so, with the
shipped generic bundle beside it) and no other bundle, each phase a fresh
process:

  background   GATEJIT_JIT=background, an EMPTY disk cache: (1) the first call
               of an unseen contract, host time from the call to its return
               (and to the end of a device sync, for scale); (2) a burst: 1,000
               calls over 50 distinct contracts in a seeded random order, back
               to back, each timed on the host; then the process waits for
               every background compile to land (filling the cache);
  warm         on that cache, sync mode: the same first call and burst;
  paced        background again on another EMPTY cache, the same 1,000 calls
               one every PACE ms, so the compiles land and their kernels are
               swapped in while the stream runs (the swap's module load is the
               loader thread's, not the call's);
  paced-warm   the paced stream on the warm cache;
  cold-driver  as background, with the CUDA driver's own compute cache off
               (CUDA_CACHE_DISABLE=1): the first call pays the driver's PTX
               compile of the generic kernel, as on a machine's first process.

Reports p50/p99/max host µs per call of each stream, the p99 ratios
background/warm and paced/paced-warm, and how many contracts were not yet on
their specialised kernel after each stream. Measured numbers, one card; no
assertion.

    python3 bench/serving_latency.py [--pace-ms 10] [--json out.json] [--md out.md]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
N, K = 1536, 7168
CALLS = 1000
# 50 distinct contracts: 25 batch sizes x 2 activations (gemv, mma and tiled forms among them).
SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160]
ACTS = ["sigmoid", "silu"]


def child(phase: str, out: Path, pace_ms: float) -> None:
    sys.path.insert(0, str(REPO / "python"))
    import torch
    import gatejit
    dev = torch.device("cuda")
    torch.ones(1, device=dev).add_(1)  # CUDA context first
    rt = gatejit.default_runtime()
    contracts = [(m, act) for m in SIZES for act in ACTS]
    weight = (torch.randn(N, K, device=dev) / K ** 0.5).to(torch.bfloat16)
    tensors = {m: (torch.randn(m, K, device=dev).to(torch.bfloat16), torch.randn(m, N, device=dev).to(torch.bfloat16),
                   torch.empty(m, N, device=dev, dtype=torch.bfloat16)) for m in SIZES}
    result = {"phase": phase, "jit_mode": rt.jit_mode, "jit_attached": rt.jit_attached}

    # (1) the first call of an unseen contract (not in the stream's 50)
    first = torch.randn(9, K, device=dev).to(torch.bfloat16), torch.randn(9, N, device=dev).to(torch.bfloat16)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    gatejit.gate_epilogue(first[0], weight, first[1])
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    result["first_call_host_ms"] = round((t1 - t0) * 1e3, 3)
    result["first_call_to_sync_ms"] = round((t2 - t0) * 1e3, 3)
    result["first_call_explain"] = gatejit.explain(first[0], weight, first[1])

    # (2) the stream
    order = [contracts[i % len(contracts)] for i in range(CALLS)]
    random.Random(1234).shuffle(order)
    times = []
    next_call = time.perf_counter()
    for m, act in order:
        h, a, o = tensors[m]
        if pace_ms:  # paced: one call every pace_ms, as traffic would come (a late call does not make the next ones early)
            next_call = max(next_call + pace_ms / 1e3, time.perf_counter())
            while time.perf_counter() < next_call:
                time.sleep(max(0.0, min(1e-3, next_call - time.perf_counter())))
        t0 = time.perf_counter()
        gatejit.gate_epilogue(h, weight, a, out=o, act=act)
        times.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    # Contracts not yet on their specialised kernel (explain never compiles).
    def pending():
        return sum(not gatejit.explain(tensors[m][0], weight, tensors[m][1], act=act).startswith("specialised")
                   for m, act in contracts)
    result["not_specialised_after_stream"] = pending()
    times.sort()
    result["stream"] = {"pace_ms": pace_ms, "calls": CALLS, "contracts": len(contracts), "p50_us": round(statistics.median(times), 2),
                        "p99_us": round(times[int(0.99 * len(times)) - 1], 2), "max_us": round(times[-1], 2),
                        "mean_us": round(statistics.fmean(times), 2)}
    # Let every background compile land (and fill the cache for the warm phase).
    deadline = time.time() + 120
    left = result["not_specialised_after_stream"]
    while left and time.time() < deadline:
        for m, act in contracts:  # a call has a compiled kernel's module loaded
            gatejit.gate_epilogue(tensors[m][0], weight, tensors[m][1], out=tensors[m][2], act=act)
        time.sleep(0.5)
        left = pending()
    result["not_specialised_at_exit"] = left
    out.write_text(json.dumps(result))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--child", choices=["background", "warm", "paced", "paced-warm", "cold-driver"])
    p.add_argument("--pace-ms", type=float, default=10.0)
    p.add_argument("--out", type=Path)
    p.add_argument("--json", type=Path)
    p.add_argument("--md", type=Path)
    args = p.parse_args()
    if args.child:
        child(args.child, args.out, args.pace_ms if args.child.startswith("paced") else 0.0)
        return 0
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("GATEJIT_BUNDLE_PATH", "GATEJIT_DISABLE_JIT",
                                                                 "GATEJIT_TEST_BUNDLE", "GATEJIT_TEMPLATE")}
        # phase: (GATEJIT_JIT, cache, extra environment)
        phases = {"background": ("background", "cache", {}), "warm": ("sync", "cache", {}),
                  "paced": ("background", "cache-paced", {}), "paced-warm": ("sync", "cache-paced", {}),
                  "cold-driver": ("background", "cache-cold", {"CUDA_CACHE_DISABLE": "1"})}
        for phase, (mode, cache, extra) in phases.items():
            out = Path(tmp) / f"{phase}.json"
            subprocess.run([sys.executable, __file__, "--child", phase, "--out", str(out), "--pace-ms", str(args.pace_ms)],
                           env={**env, "GATEJIT_JIT": mode, "GATEJIT_CACHE_DIR": str(Path(tmp) / cache), **extra},
                           check=True, timeout=400)
            results[phase] = json.loads(out.read_text())
            r = results[phase]
            print(f"{phase:10s} first call {r['first_call_host_ms']} ms host ({r['first_call_to_sync_ms']} ms to sync): "
                  f"{r['first_call_explain']}")
            print(f"{'':10s} stream {r['stream']}; contracts not yet specialised after it: {r['not_specialised_after_stream']}, "
                  f"at exit: {r['not_specialised_at_exit']}", flush=True)
    import torch
    results["card"] = torch.cuda.get_device_name(0)
    results["date"] = datetime.date.today().isoformat()
    ratio = lambda a, b: round(results[a]["stream"]["p99_us"] / results[b]["stream"]["p99_us"], 3)
    results["p99_ratio_background_to_warm"] = ratio("background", "warm")
    results["p99_ratio_paced_to_paced_warm"] = ratio("paced", "paced-warm")
    print(f"p99 background / warm: {results['p99_ratio_background_to_warm']}, paced / paced warm: "
          f"{results['p99_ratio_paced_to_paced_warm']} (target: at most 2); first call "
          f"{results['background']['first_call_host_ms']} ms, with the driver's cache off "
          f"{results['cold-driver']['first_call_host_ms']} ms (target: at most 5)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.md:
        lines = [f"Background JIT, host time per call ({results['card']}, {results['date']}; measured)", "",
                 "| phase | first unseen call (host) | stream pace | p50 | p99 | max | not specialised after |",
                 "|---|---|---|---|---|---|---|"]
        for phase in phases:
            r = results[phase]
            st = r["stream"]
            lines.append(f"| {phase} | {r['first_call_host_ms']} ms | "
                         f"{str(st['pace_ms']) + ' ms' if st['pace_ms'] else 'back to back'} | {st['p50_us']} us | "
                         f"{st['p99_us']} us | {st['max_us']} us | {r['not_specialised_after_stream']} |")
        args.md.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
