"""The fp8-weight arm of gpu_bench.py: out = attn * sigmoid(hidden @ (q * s).T),
hidden/attn/out bf16, q float8_e4m3fn [N, K], s fp32 scales per output channel
([N, 1]) or per 128 x 128 block ([ceil(N/128), ceil(K/128)]).

Per (M, scale layout) it times, with gpu_bench's method (CUDA graphs, rotating
tensor sets so that the weights come from HBM):

  gatejit fp8     gatejit.gate_epilogue(hidden, q, attn, out=out, weight_scale=s)
  read floor      the fastest plain streaming read (bench/read_floor.py) of the
                  call's own bytes: q (N*K bytes) + hidden + attn + out + scales
  gatejit bf16    gatejit's bf16 kernel at the same shape (bf16 weights of the
                  same values), measured in the same run (once per M)
  torch           the unfused torch path, dequantising per call (the weights
                  rotate), then attn * sigmoid(F.linear(hidden, w)); the faster of
                  two dequantisations: "fp32" w = (q.float() * s).to(bf16) (one
                  rounding of decode * s, the kernel's numerics but for the
                  bf16 weight) and "bf16" w = q.to(bf16) * s.to(bf16) (scale and
                  product rounded to bf16 too: cheaper, less exact). Both are in
                  the JSON (torch_variants_us). torch._scaled_mm needs fp8 on
                  both sides, so with bf16 activations this is torch's path.
  torch.compile   the "fp32" expression under torch.compile (the dequantisation
                  fused by Inductor; the GEMM stays cuBLAS)

and the ratios the fp8 targets use: gatejit fp8 / read floor (target <= 1.2),
gatejit bf16 / gatejit fp8 (>= 1.8), torch / gatejit fp8 (>= 2).

Before timing, gatejit's fp8 output is checked on one tensor set against the
Python reference (python/tests/gate_reference.py: exact decode times scale,
explained interval per element, >= 99% bit-exact); a configuration that fails
is reported and not timed.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from read_floor import read_floor  # noqa: E402

LAYOUTS = ("per_channel", "block128")
TARGETS = {"fp8_over_read_floor_max": 1.2, "bf16_over_fp8_min": 1.8, "torch_over_fp8_min": 2.0}
BLOCK = 128


def scale_shape(layout, n, k):
    return (n, 1) if layout == "per_channel" else (-(-n // BLOCK), -(-k // BLOCK))


def make_dequantise(torch, layout, n, k, compute="fp32"):
    """w = (q * s) as `dtype`, as one would write it in torch (per call):
    compute "fp32": (q.float() * s).to(dtype); "bf16": q.to(dtype) * s.to(dtype)."""
    nb, kb = -(-n // BLOCK), -(-k // BLOCK)

    def cast(q, s, dtype):
        return (q.float(), s) if compute == "fp32" else (q.to(dtype), s.to(dtype))

    if layout == "per_channel":
        def dequantise(q, s, dtype):
            q, s = cast(q, s, dtype)
            return (q * s).to(dtype)
    elif n % BLOCK == 0 and k % BLOCK == 0:
        def dequantise(q, s, dtype):
            q, s = cast(q, s, dtype)
            return (q.view(nb, BLOCK, kb, BLOCK) * s[:, None, :, None]).view(n, k).to(dtype)
    else:
        def dequantise(q, s, dtype):
            q, s = cast(q, s, dtype)
            full = s.repeat_interleave(BLOCK, 0)[:n].repeat_interleave(BLOCK, 1)[:, :k]
            return (q * full).to(dtype)
    return dequantise


def run(torch, gatejit, measure, device, args, log, error_text, rotate_bytes, min_sets, compile_mode):
    """Times every fp8 configuration; returns (rows, failures, compile note)."""
    import torch.nn.functional as F

    sys.path.insert(0, str(REPO / "python" / "tests"))
    from gate_reference import quantize_fp8, reference, ulp_distance

    n, k = args.fp8_n, args.fp8_k
    ms = [int(m) for m in args.fp8_ms.split(",") if m]
    dtype = torch.bfloat16
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if fp8 is None:
        return [], 0, f"skipped: torch {torch.__version__} has no float8_e4m3fn"
    gen = torch.Generator(device=device)
    gen.manual_seed(20260101)

    compile_note = "not run (--compile-mode none)"
    compiled = {}
    dequantisers = {layout: make_dequantise(torch, layout, n, k) for layout in LAYOUTS}

    def torch_gate(layout, compute="fp32"):
        dequantise = make_dequantise(torch, layout, n, k, compute)

        def gate(hidden, q, s, attn):
            return attn * torch.sigmoid(F.linear(hidden, dequantise(q, s, hidden.dtype)))
        return gate

    eager = {layout: torch_gate(layout) for layout in LAYOUTS}
    eager_variants = {layout: {c: torch_gate(layout, c) for c in ("fp32", "bf16")} for layout in LAYOUTS}
    if compile_mode != "none":
        try:
            mode = None if compile_mode == "default" else compile_mode
            compiled = {layout: torch.compile(torch_gate(layout), mode=mode, dynamic=False) for layout in LAYOUTS}
            compile_note = f"mode={compile_mode}, dynamic=False"
        except Exception as e:  # noqa: BLE001
            compile_note = error_text(e)

    weight_bytes = n * k  # one byte per fp8 element
    sets = max(min_sets, math.ceil(rotate_bytes / weight_bytes))
    rows, failures = [], 0
    bf16_us = {}  # M -> gatejit bf16 µs (layout-independent)
    for m in ms:
        hs = [torch.randn(m, k, generator=gen, device=device).to(dtype) for _ in range(sets)]
        ats = [torch.randn(m, n, generator=gen, device=device).to(dtype) for _ in range(sets)]
        outs = [torch.empty(m, n, dtype=dtype, device=device) for _ in range(sets)]
        for layout in LAYOUTS:
            sr, sc = scale_shape(layout, n, k)
            row = {"m": m, "n": n, "k": k, "dtype": "bf16", "dtype_weight": "fp8_e4m3", "weight_scale": layout,
                   "act": "sigmoid", "sets": sets,
                   "bytes_moved": weight_bytes + 2 * (m * k + 2 * m * n) + 4 * sr * sc}
            qs, ss = [], []
            for _ in range(sets):
                w = torch.randn(n, k, generator=gen, device=device) / math.sqrt(k)
                q, s = quantize_fp8(w, layout)
                qs.append(q)
                ss.append(s)
            del w

            # gatejit fp8: path, numerics against the Python reference (once), time
            try:
                row["gatejit_path"] = gatejit.explain(hs[0], qs[0], ats[0], out=outs[0], weight_scale=ss[0])
                outs[0].fill_(float("nan"))
                gatejit.gate_epilogue(hs[0], qs[0], ats[0], out=outs[0], weight_scale=ss[0])
                torch.cuda.synchronize()
                got = outs[0]
                ref, lo, hi = reference(hs[0], qs[0], ats[0], "sigmoid", weight_scale=ss[0])
                g64 = got.double()
                outside = ~torch.isfinite(g64) | (g64 < lo) | (g64 > hi)
                unfused = eager[layout](hs[0], qs[0], ss[0], ats[0])
                row["check_outside_interval"] = int(outside.sum())
                row["check_bit_exact_vs_reference"] = float((got.view(torch.int16) == ref.view(torch.int16))
                                                            .double().mean())
                row["check_max_ulp_vs_reference"] = int(ulp_distance(got, ref).max())
                row["check_bit_exact_vs_torch"] = float((got.view(torch.int16) == unfused.view(torch.int16))
                                                        .double().mean())
                row["check_max_abs_diff_vs_torch"] = float((got.float() - unfused.float()).abs()
                                                           .nan_to_num(float("inf")).max())
                del ref, lo, hi, g64, unfused
                if row["check_outside_interval"] or row["check_bit_exact_vs_reference"] < 0.99:
                    raise RuntimeError(
                        f"wrong result: {row['check_outside_interval']} of {outside.numel()} outputs outside the "
                        f"reference interval, {row['check_bit_exact_vs_reference']:.4%} bit-exact")
                row["gatejit_us"], row["gatejit_timing"] = measure(
                    lambda i: gatejit.gate_epilogue(hs[i], qs[i], ats[i], out=outs[i], weight_scale=ss[i]), sets)
            except Exception as e:  # noqa: BLE001 - recorded per configuration
                row["gatejit_us"] = error_text(e)
                failures += 1

            # the read floor of the call's own bytes
            try:
                us, timing, shape, every = read_floor(torch, measure, row["bytes_moved"], device, rotate_bytes,
                                                      min_sets)
                row["read_floor_us"], row["read_floor_timing"] = us, timing
                row["read_floor_shape"], row["read_floor_shapes_us"] = shape, every
            except Exception as e:  # noqa: BLE001
                row["read_floor_us"] = error_text(e)

            # gatejit's bf16 kernel at the same shape (bf16 weights of the same values), once per M
            if m not in bf16_us:
                try:
                    ws = [dequantisers[layout](q, s, dtype) for q, s in zip(qs, ss)]
                    bf16_sets = max(min_sets, math.ceil(rotate_bytes / (2 * weight_bytes)))
                    bf16_us[m] = measure(lambda i: gatejit.gate_epilogue(hs[i], ws[i], ats[i], out=outs[i]),
                                         bf16_sets)[0]
                    del ws
                except Exception as e:  # noqa: BLE001
                    bf16_us[m] = error_text(e)
            row["gatejit_bf16_us"] = bf16_us[m]

            variants = {}
            for compute, fn in eager_variants[layout].items():
                try:
                    variants[compute] = measure(lambda i: fn(hs[i], qs[i], ss[i], ats[i]), sets)
                except Exception as e:  # noqa: BLE001
                    variants[compute] = (error_text(e), None)
            row["torch_variants_us"] = {c: v[0] for c, v in variants.items()}
            timed = {c: v for c, v in variants.items() if isinstance(v[0], float)}
            if timed:
                best = min(timed, key=lambda c: timed[c][0])
                row["torch_us"], row["torch_timing"] = timed[best]
                row["torch_variant"] = best
            else:
                row["torch_us"] = variants["fp32"][0]

            if layout not in compiled:
                row["compile_us"] = compile_note if compile_note.startswith("failed") else "not run"
            else:
                try:
                    t0 = time.time()
                    compiled[layout](hs[0], qs[0], ss[0], ats[0])
                    torch.cuda.synchronize()
                    row["compile_s"] = round(time.time() - t0, 2)
                    row["compile_us"], row["compile_timing"] = measure(
                        lambda i: compiled[layout](hs[i], qs[i], ss[i], ats[i]), sets)
                except Exception as e:  # noqa: BLE001
                    row["compile_us"] = error_text(e)

            g = row["gatejit_us"]
            if isinstance(g, float):
                if isinstance(row.get("read_floor_us"), float):
                    row["ratio_to_read_floor"] = g / row["read_floor_us"]
                if isinstance(row["gatejit_bf16_us"], float):
                    row["bf16_over_fp8"] = row["gatejit_bf16_us"] / g
                for key in ("torch_us", "compile_us"):
                    if isinstance(row.get(key), float):
                        row[key[:-3] + "_over_fp8"] = row[key] / g
                row["targets_met"] = {
                    "fp8_over_read_floor": _meets(row.get("ratio_to_read_floor"), TARGETS["fp8_over_read_floor_max"],
                                                  upper=True),
                    "bf16_over_fp8": _meets(row.get("bf16_over_fp8"), TARGETS["bf16_over_fp8_min"]),
                    "torch_over_fp8": _meets(row.get("torch_over_fp8"), TARGETS["torch_over_fp8_min"]),
                }
            rows.append(row)
            log(f"fp8 {layout} M={m} N={n} K={k}: gatejit {fmt(g, '.2f')} µs, read floor "
                f"{fmt(row.get('read_floor_us'), '.2f')} µs, gatejit bf16 {fmt(row['gatejit_bf16_us'], '.2f')} µs, "
                f"torch {fmt(row.get('torch_us'), '.2f')} µs, compile {fmt(row.get('compile_us'), '.2f')} µs")
            qs = ss = None
            gc.collect()
            torch.cuda.empty_cache()
        hs = ats = outs = None
        gc.collect()
        torch.cuda.empty_cache()
    return rows, failures, compile_note


def _meets(value, target, upper=False):
    if not isinstance(value, float):
        return None
    return value <= target if upper else value >= target


def fmt(x, spec=".1f"):
    return format(x, spec) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def table(rows):
    """The markdown table of the fp8 section."""
    lines = ["| config | gatejit path | gatejit fp8 µs | read floor µs (own bytes) | fp8 / read floor (<= 1.2) "
             "| gatejit bf16 µs | bf16 / fp8 (>= 1.8) | torch µs (dequant + linear) | torch / fp8 (>= 2) "
             "| torch.compile µs | compile / fp8 | bit-exact vs reference | outside interval |",
             "|" + "---|" * 13]
    for r in rows:
        path = r.get("gatejit_path", "")
        short = next((t for t in ("gemv", "mma", "generic") if path.startswith(t) or path.startswith("specialised " + t)),
                     "?")
        met = r.get("targets_met", {})

        def mark(key, value):
            text = fmt(value, ".2f")
            return text + (" ✓" if met.get(key) else " ✗" if met.get(key) is False else "")

        lines.append(
            f"| M={r['m']} N={r['n']} K={r['k']} fp8 {r['weight_scale']} | {short} | {fmt(r['gatejit_us'], '.2f')} "
            f"| {fmt(r.get('read_floor_us', '-'), '.2f')} | {mark('fp8_over_read_floor', r.get('ratio_to_read_floor', '-'))} "
            f"| {fmt(r.get('gatejit_bf16_us', '-'), '.2f')} | {mark('bf16_over_fp8', r.get('bf16_over_fp8', '-'))} "
            f"| {fmt(r.get('torch_us', '-'), '.2f')}{' (' + r['torch_variant'] + ')' if r.get('torch_variant') else ''} "
            f"| {mark('torch_over_fp8', r.get('torch_over_fp8', '-'))} "
            f"| {fmt(r.get('compile_us', '-'), '.2f')} | {fmt(r.get('compile_over_fp8', '-'), '.2f')} "
            f"| {fmt(r.get('check_bit_exact_vs_reference', '-'), '.4%')} | {r.get('check_outside_interval', '-')} |")
    return "\n".join(lines)
