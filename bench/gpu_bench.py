#!/usr/bin/env python3
"""gatejit against PyTorch on one GPU, side by side, one timing method.

    out = attn * sigmoid(hidden @ W.T)        bf16, hidden [M, K], W [N, K], attn [M, N]

Per configuration it times:

  gatejit        gatejit.gate_epilogue(hidden, W, attn, out=out)   (one fused kernel)
  torch          attn * torch.sigmoid(F.linear(hidden, W))         (unfused: GEMM, sigmoid, mul)
  torch.compile  the same expression under torch.compile (dynamic=False, mode from
                 --compile-mode; "default" unless asked: max-autotune compiles take
                 minutes per shape). A compile failure is reported, not fatal.
  floor          the bytes that must move (hidden, W and attn read, out written)
                 divided by the device-to-device copy bandwidth measured in this run
                 (a large torch copy, bytes read + written, median of several).
  copy           a device-to-device copy that moves the same bytes (half read, half
                 written), timed like the kernels: what one memory-bound kernel
                 of this size costs in practice (launch, ramp-up and tail included).
  read floor     the practical read floor: the fastest plain streaming-read kernel
                 over the same bytes (bench/read_floor.py: a Triton kernel of 16-byte
                 loads, best of a few block shapes), rotating like the kernels.
  read           torch.sum over the same bytes: a library reduction that reads this
                 much and writes one number. For scale only, not a bound (a general
                 reduction is no tuned stream).
  gemv / mma (forced)  for M <= 16, the template the loader did not pick, from a
                 second runtime created with GATEJIT_TEMPLATE=gemv or =mma (the crossover).

Timing: every method is captured in a CUDA graph that makes R calls, each on its
own set of tensors (hidden, W, attn, out), so that the weights rotate through at
least 256 MiB (R >= 4) and are read from HBM rather than the 60 MB L2; the graph
repeats the R calls enough times to take ~0.3 ms or more. Replays are timed one
by one with torch.cuda.Event, and the per-call time is the median replay time
divided by the calls in it.

Before timing, gatejit's output for each configuration is checked against
torch's reference (catching silent garbage); a configuration that fails is
reported and not timed, and the script exits non-zero.

fp8 weights (on by default; --no-fp8 leaves them out, --fp8-only runs nothing
else): N = 1536, K = 7168, M in {1, 2, 4, 8, 16}, bf16 activations, an
float8_e4m3fn weight with per-channel and with 128 x 128 block scales: gatejit
fp8, the read floor of its own bytes, gatejit bf16 at the same shape, torch's
unfused dequantise + linear + sigmoid + mul and its torch.compile, and the
ratios of the fp8 targets (bench/fp8_bench.py says how). JSON: "fp8_configs"
(one row per M and scale layout), "fp8_targets", "fp8_torch_compile"; the
markdown gets a second table.

Usage (on the GPU machine; --quick took 34 s on an H200, the full set takes longer
mainly through the generic kernel at M = 512 and 2048 and one torch.compile per shape):
    GATEJIT_BUNDLE_PATH=/path/kernels.gjb python3 bench/gpu_bench.py --out bench.json --md bench.md
The markdown table is printed last.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from gatejit.graph_timing import TARGET_REPLAY_US, MIN_SETS, ROTATE_BYTES, GraphTimer  # noqa: E402
from read_floor import read_floor  # noqa: E402
import fp8_bench  # noqa: E402
K_SEED = 7168


def configs(quick: bool):
    if quick:
        return ([(m, 1536, K_SEED) for m in (1, 4, 16, 128, 2048)]
                + [(m, 12288, K_SEED) for m in (1, 16)] + [(m, 3072, K_SEED) for m in (1, 16)])
    return ([(m, 1536, K_SEED) for m in (1, 2, 4, 8, 16, 32, 64, 128, 512, 2048)]
            + [(m, 12288, K_SEED) for m in (1, 2, 4, 8, 16)] + [(m, 3072, K_SEED) for m in (1, 2, 4, 8, 16)])


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer configurations and repeats (~1 minute)")
    p.add_argument("--out", type=Path, default=None, help="write the raw numbers as JSON here")
    p.add_argument("--md", type=Path, default=None, help="write the markdown table here")
    p.add_argument("--compile-mode", default="default", choices=["default", "max-autotune-no-cudagraphs", "none"],
                   help="torch.compile mode ('none' skips torch.compile); default: %(default)s")
    p.add_argument("--fp8", action=argparse.BooleanOptionalAction, default=True,
                   help="time the fp8-weight section too (default on; --no-fp8 leaves it out)")
    p.add_argument("--fp8-only", action="store_true", help="time the fp8-weight section only")
    p.add_argument("--fp8-ms", default="1,2,4,8,16,32,64,128", help="M values of the fp8 section (default %(default)s)")
    p.add_argument("--fp8-n", type=int, default=1536, help="N of the fp8 section (default %(default)s)")
    p.add_argument("--fp8-k", type=int, default=K_SEED, help="K of the fp8 section (default %(default)s)")
    args = p.parse_args()
    if args.fp8_only:
        args.fp8 = True
    return args


def fmt(x, spec=".1f"):
    return format(x, spec) if isinstance(x, (int, float)) else str(x)


def main() -> int:
    args = parse_args()
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(REPO / "python"))
    import os
    import gatejit

    # A second runtime that must use gemv: the crossover between the templates
    # is measured in the same run (GATEJIT_TEMPLATE is read at creation).
    forced_rts = {}
    for name in ("gemv", "mma"):
        os.environ["GATEJIT_TEMPLATE"] = name
        try:
            forced_rts[name] = gatejit.Runtime()
        finally:
            del os.environ["GATEJIT_TEMPLATE"]

    if not torch.cuda.is_available():
        print("gpu_bench: no CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda", torch.cuda.current_device())
    dtype = torch.bfloat16
    elem = 2
    started = time.time()

    def log(msg):
        print(f"[{time.time() - started:6.1f}s] {msg}", file=sys.stderr, flush=True)

    timer = GraphTimer(torch, device, budget_s=0.15 if args.quick else 0.5, max_reps=20 if args.quick else 50)
    measure = timer.measure

    # -- copy bandwidth: the floor's denominator ------------------------------------------
    copy_bytes = (1 if args.quick else 2) * 2**30
    src = torch.ones(copy_bytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(10)]
    timer.sleep_gpu(5)
    for a, b in events:
        a.record()
        dst.copy_(src)
        b.record()
    torch.cuda.synchronize()
    copy_ms = [a.elapsed_time(b) for a, b in events]
    copy_bw = 2 * copy_bytes / (statistics.median(copy_ms) * 1e-3)  # bytes/s, read + written
    del src, dst
    torch.cuda.empty_cache()
    log(f"copy bandwidth {copy_bw / 1e12:.2f} TB/s ({copy_bytes / 2**30:.0f} GiB copy, read + written)")

    # -- torch.compile ----------------------------------------------------------------------
    def torch_gate(hidden, weight, attn):
        return attn * torch.sigmoid(F.linear(hidden, weight))

    compiled = None
    compile_note = "not run (--compile-mode none)"
    if args.compile_mode != "none":
        try:
            import torch._dynamo
            cfg = torch._dynamo.config
            # One static-shape compile per configuration: lift the recompile limits.
            for name, floor in (("recompile_limit", 64), ("cache_size_limit", 64),
                                ("accumulated_recompile_limit", 1024), ("accumulated_cache_size_limit", 1024)):
                if hasattr(cfg, name):
                    setattr(cfg, name, max(getattr(cfg, name), floor))
            mode = None if args.compile_mode == "default" else args.compile_mode
            compiled = torch.compile(torch_gate, mode=mode, dynamic=False)
            compile_note = f"mode={args.compile_mode}, dynamic=False"
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            compile_note = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"

    # -- helpers ------------------------------------------------------------------------------
    def error_text(e):
        text = str(e).strip().splitlines()
        return f"failed: {type(e).__name__}: {text[0][:200] if text else ''}"

    # -- the fixed cost of one kernel in a graph: an empty-ish kernel per call ---------------------
    tiny = [torch.zeros(1, device=device) for _ in range(MIN_SETS)]
    empty_us = None
    try:
        empty_us, _ = measure(lambda i: tiny[i].add_(1), MIN_SETS)
        log(f"one tiny kernel per call in a graph: {empty_us:.2f} µs")
    except Exception as e:  # noqa: BLE001
        log(f"tiny kernel: {error_text(e)}")

    # -- configurations -------------------------------------------------------------------------
    results = []
    failures = 0
    gen = torch.Generator(device=device)
    gen.manual_seed(20251129)
    for (m, n, k) in ([] if args.fp8_only else configs(args.quick)):
        weight_bytes = n * k * elem
        sets = max(MIN_SETS, math.ceil(ROTATE_BYTES / weight_bytes))
        row = {"m": m, "n": n, "k": k, "dtype": "bf16", "act": "sigmoid", "sets": sets,
               "bytes_moved": elem * (m * k + n * k + 2 * m * n)}
        row["floor_us"] = row["bytes_moved"] / copy_bw * 1e6
        hs = [torch.randn(m, k, generator=gen, device=device).to(dtype) for _ in range(sets)]
        ws = [(torch.randn(n, k, generator=gen, device=device) / math.sqrt(k)).to(dtype) for _ in range(sets)]
        ats = [torch.randn(m, n, generator=gen, device=device).to(dtype) for _ in range(sets)]
        outs = [torch.empty(m, n, dtype=dtype, device=device) for _ in range(sets)]

        # gatejit: path, correctness (once, before timing), time
        try:
            row["gatejit_path"] = gatejit.explain(hs[0], ws[0], ats[0], out=outs[0])
            outs[0].fill_(float("nan"))
            gatejit.gate_epilogue(hs[0], ws[0], ats[0], out=outs[0])
            ref = ats[0].float() * torch.sigmoid(hs[0].float() @ ws[0].float().T)
            unfused = torch_gate(hs[0], ws[0], ats[0])
            got = outs[0].float()
            # bf16 tolerance: 2 bf16 ulps of the result plus the effect of a
            # 1-ulp projection difference through sigmoid (|d out| <= |attn| * 2^-8 * |proj| / 4).
            tol = 2.0 ** -7 * ref.abs() + 2.0 ** -9 * ats[0].float().abs() * (1.0 + (hs[0].float() @ ws[0].float().T).abs())
            bad = ~(torch.isfinite(got) & ((got - ref).abs() <= tol))
            row["check_bit_exact_vs_torch"] = float((outs[0].view(torch.int16) == unfused.view(torch.int16)).double().mean())
            row["check_max_abs_diff_vs_fp32"] = float((got - ref).abs().nan_to_num(float("inf")).max())
            if bool(bad.any()):
                raise RuntimeError(f"wrong result: {int(bad.sum())} of {bad.numel()} outputs outside bf16 tolerance "
                                   f"(max |diff| {row['check_max_abs_diff_vs_fp32']:.3g})")
            del ref, unfused, got, tol, bad
            row["gatejit_us"], row["gatejit_timing"] = measure(
                lambda i: gatejit.gate_epilogue(hs[i], ws[i], ats[i], out=outs[i]), sets)
        except Exception as e:  # noqa: BLE001 - recorded per configuration
            row["gatejit_us"] = error_text(e)
            failures += 1

        for name, rt in forced_rts.items():
            if m > 16 or row.get("gatejit_path", "").startswith("specialised " + name):
                continue
            try:
                path = rt.explain(hs[0], ws[0], ats[0], out=outs[0])
                if not path.startswith("specialised " + name):
                    raise RuntimeError(f"the forced runtime took another path: {path}")
                row[name + "_us"], row[name + "_timing"] = measure(
                    lambda i: rt.gate_epilogue(hs[i], ws[i], ats[i], out=outs[i]), sets)
            except Exception as e:  # noqa: BLE001
                row[name + "_us"] = error_text(e)

        # The practical read floor: the fastest plain streaming read of the same bytes.
        try:
            us, timing, shape, every = read_floor(torch, measure, row["bytes_moved"], device, ROTATE_BYTES, MIN_SETS)
            row["read_floor_us"], row["read_floor_timing"] = us, timing
            row["read_floor_shape"], row["read_floor_shapes_us"] = shape, every
        except Exception as e:  # noqa: BLE001
            row["read_floor_us"] = error_text(e)

        # The same bytes read by one reduction kernel, rotating too.
        try:
            read_sets = max(MIN_SETS, math.ceil(ROTATE_BYTES / row["bytes_moved"]))
            blobs = [torch.ones(row["bytes_moved"] // 2, dtype=dtype, device=device) for _ in range(read_sets)]
            row["read_us"], row["read_timing"] = measure(lambda i: blobs[i].sum(dtype=torch.float32), read_sets)
            del blobs
        except Exception as e:  # noqa: BLE001
            row["read_us"] = error_text(e)

        # The same bytes through a plain copy (read half, write half), rotating too.
        try:
            half = row["bytes_moved"] // 2
            copy_sets = max(MIN_SETS, math.ceil(ROTATE_BYTES / max(half, 1)))
            srcs = [torch.empty(half, dtype=torch.uint8, device=device).fill_(1) for _ in range(copy_sets)]
            dsts = [torch.empty(half, dtype=torch.uint8, device=device) for _ in range(copy_sets)]
            row["copy_us"], row["copy_timing"] = measure(lambda i: dsts[i].copy_(srcs[i]), copy_sets)
            del srcs, dsts
        except Exception as e:  # noqa: BLE001
            row["copy_us"] = error_text(e)

        try:
            row["torch_us"], row["torch_timing"] = measure(lambda i: torch_gate(hs[i], ws[i], ats[i]), sets)
        except Exception as e:  # noqa: BLE001
            row["torch_us"] = error_text(e)

        if compiled is None:
            row["compile_us"] = compile_note if compile_note.startswith("failed") else "not run"
        else:
            try:
                t0 = time.time()
                compiled(hs[0], ws[0], ats[0])
                torch.cuda.synchronize()
                row["compile_s"] = round(time.time() - t0, 2)
                row["compile_us"], row["compile_timing"] = measure(lambda i: compiled(hs[i], ws[i], ats[i]), sets)
            except Exception as e:  # noqa: BLE001
                row["compile_us"] = error_text(e)

        g = row["gatejit_us"]
        if isinstance(g, float):
            row["ratio_to_floor"] = g / row["floor_us"]
            if isinstance(row.get("read_floor_us"), float):
                row["ratio_to_read_floor"] = g / row["read_floor_us"]
            for key in ("torch_us", "compile_us"):
                if isinstance(row[key], float):
                    row["speedup_vs_" + key[:-3]] = row[key] / g
        results.append(row)
        log(f"M={m} N={n} K={k}: gatejit {fmt(row['gatejit_us'], '.2f')} µs, floor {row['floor_us']:.2f} µs, "
            f"read floor {fmt(row.get('read_floor_us'), '.2f')} µs, "
            f"read {fmt(row.get('read_us'), '.2f')} µs, copy {fmt(row.get('copy_us'), '.2f')} µs, "
            f"gemv {fmt(row.get('gemv_us', '-'), '.2f')} µs, "
            f"mma {fmt(row.get('mma_us', '-'), '.2f')} µs, "
            f"torch {fmt(row['torch_us'], '.2f')} µs, compile {fmt(row.get('compile_us'), '.2f')} µs")
        hs = ws = ats = outs = None  # free this configuration's tensors
        gc.collect()
        torch.cuda.empty_cache()

    # -- fp8 weights ----------------------------------------------------------------------------
    fp8_rows, fp8_compile_note = [], "not run (--no-fp8)"
    if args.fp8:
        fp8_rows, fp8_failures, fp8_compile_note = fp8_bench.run(
            torch, gatejit, measure, device, args, log, error_text, ROTATE_BYTES, MIN_SETS, args.compile_mode)
        failures += fp8_failures

    # -- report -------------------------------------------------------------------------------
    lines = ["| config | gatejit path | gatejit µs | read floor µs | gatejit / read floor | floor µs | gatejit / floor "
             "| read µs (same bytes) | copy µs (same bytes) | gemv µs (forced) | mma µs (forced) | torch µs "
             "| torch.compile µs | speedup vs torch | speedup vs compile |", "|" + "---|" * 15]
    for r in results:
        path = r.get("gatejit_path", "")
        short = next((t for t in ("gemv", "mma", "generic") if path.startswith(t) or path.startswith("specialised " + t)), "?")
        lines.append(
            f"| M={r['m']} N={r['n']} K={r['k']} | {short} | {fmt(r['gatejit_us'], '.2f')} "
            f"| {fmt(r.get('read_floor_us', '-'), '.2f')} | {fmt(r.get('ratio_to_read_floor', '-'), '.2f')} "
            f"| {r['floor_us']:.2f} "
            f"| {fmt(r.get('ratio_to_floor', '-'), '.2f')} | {fmt(r.get('read_us', '-'), '.2f')} "
            f"| {fmt(r.get('copy_us', '-'), '.2f')} "
            f"| {fmt(r.get('gemv_us', '-'), '.2f')} | {fmt(r.get('mma_us', '-'), '.2f')} | {fmt(r['torch_us'], '.2f')} "
            f"| {fmt(r['compile_us'], '.2f')} | {fmt(r.get('speedup_vs_torch', '-'), '.2f')} "
            f"| {fmt(r.get('speedup_vs_compile', '-'), '.2f')} |")
    table = "\n".join(lines)
    props = torch.cuda.get_device_properties(device)
    method = ("CUDA-graph replays timed with torch.cuda.Event, median over replays; each replay makes "
              f"R calls on R rotating tensor sets (weights >= {ROTATE_BYTES // 2**20} MiB, R >= {MIN_SETS}), "
              f"repeated to >= {TARGET_REPLAY_US:.0f} µs; per-call µs = replay time / calls")
    info = {
        "device": torch.cuda.get_device_name(device),
        "sm_count": props.multi_processor_count,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gatejit_library": gatejit.library_path(),
        "copy_bandwidth_GBps": copy_bw / 1e9,
        "copy_bytes": copy_bytes,
        "copy_samples_ms": copy_ms,
        "tiny_kernel_us": empty_us,
        "method": method,
        "torch_compile": compile_note,
        "quick": args.quick,
        "elapsed_s": round(time.time() - started, 1),
        "configs": results,
        "fp8_configs": fp8_rows,
        "fp8_targets": fp8_bench.TARGETS,
        "fp8_torch_compile": fp8_compile_note,
    }
    header = (f"# gatejit vs torch: out = attn * sigmoid(hidden @ W.T), bf16\n\n"
              f"{info['device']}, torch {info['torch']} (CUDA {info['cuda']}), {info['date']}. "
              f"Copy bandwidth {copy_bw / 1e12:.2f} TB/s (read + written). torch.compile: {compile_note}. "
              f"A one-element kernel per call costs {fmt(empty_us, '.2f')} µs in the same graphs.\n"
              f"Timing: {method}.\n")
    if fp8_rows:
        table += ("\n\n## fp8 e4m3 weights: out = attn * sigmoid(hidden @ (q * s).T), bf16 activations\n\n"
                  f"torch: per call w = (q.float() * s).to(bf16) (fp32) or q.to(bf16) * s.to(bf16) (bf16), the "
                  f"faster shown, then the bf16 expression; torch.compile (of the fp32 form): "
                  f"{fp8_compile_note}. Targets: gatejit fp8 / read floor of its own bytes <= "
                  f"{fp8_bench.TARGETS['fp8_over_read_floor_max']}, gatejit bf16 / gatejit fp8 >= "
                  f"{fp8_bench.TARGETS['bf16_over_fp8_min']}, torch / gatejit fp8 >= "
                  f"{fp8_bench.TARGETS['torch_over_fp8_min']}.\n\n" + fp8_bench.table(fp8_rows))
    elif args.fp8:
        table += f"\n\nfp8 section: {fp8_compile_note}"
    if args.out:
        args.out.write_text(json.dumps(info, indent=2) + "\n")
    if args.md:
        args.md.write_text(header + "\n" + table + "\n")
    print(header)
    print(table)
    if failures:
        print(f"\n{failures} configuration(s) failed for gatejit: see the table", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
