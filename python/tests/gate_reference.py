"""The boundary-exact reference every Python GPU test judges gatejit by.

How results are judged (rounding="boundary", bf16/f16). The contract rounds to
the tensor dtype at three boundaries:

    proj = round(sum_k h*w)   (fp32 accumulation)
    g    = round(act(proj))   (fp32 activation)
    out  = round(g * attn)

The GPU's fp32 summation order differs from any reference, so an element may
legitimately differ where a rounding boundary lies within the accumulation
error. Each element is therefore checked against an *explained interval*:

  * the exact projection p (fp64) may be off by at most
    e = PROJ_TOL * sum_k |h*w| in the kernel's fp32 sum (PROJ_TOL = 1e-5: a
    fully sequential fp32 sum of K = 7168 terms has a typical error near
    4e-8 * sum|h*w|, so this is a wide margin; with these inputs, at a typical
    |p| = 2, e is ~7% of a bf16 ulp of p and ~half an f16 ulp);
  * the fp32 activation may be off by ACT_TOL = 2**-18 relative (64 fp32 ulps,
    covering fast exp/reciprocal instructions);
  * rounding is monotone, so proj lies between round(p - e) and round(p + e),
    g between the rounded extremes of act over that range (silu's minimum at
    x = -1.27846 included), and out between round(g_lo * attn) and
    round(g_hi * attn) (g * attn is exact in fp32 for 16-bit inputs).

A kernel output outside its interval is an error however rare. On top of that,
at least MIN_EXACT = 99% of the elements must be bit-exact with the reference
computed from the exact projection (a statistical guard against a kernel that
is systematically off by an ulp; on an H200 the generic f16 silu kernel gave
99.46-99.7%, bf16 >= 99.94%, gemv more).

There is deliberately no fixed ulp bound: where the projection cancels
(|p| much smaller than sum|h*w|), the fp32 sum's absolute error is many ulps of
p, and silu (which is ~p/2 near 0) carries that into out (tens of ulps in
f16 are legitimate there). The interval accounts for it; the largest ulp
difference is reported in failure messages.

rounding="fused" and float32 (no intermediate rounding) are checked against
the same interval without the intermediate roundings.

fp8 e4m3 weights (torch.float8_e4m3fn, with fp32 weight_scale [N, 1] / [N]
per output channel or [ceil(N/128), ceil(K/128)] per 128 x 128 block), as the
C++ host reference (tests/support/gate_reference.cpp) judges them: each
weight element's value is its exact decode times its scale, w = decode(q) * s
(exact in fp64: 4 significant bits times 24); the projection p = sum_k h*w
as above, its interval widened once more by EPS32 * sum_k |h*w| (the kernel
may round decode(q) * s, or a block's partial sum times s, to fp32 once per
term); everything after the projection exactly as for a bf16/f16 weight.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

PROJ_TOL = 1e-5
ACT_TOL = 2.0 ** -18
EPS32 = 2.0 ** -24  # fp32 unit roundoff (the C++ reference's kEps32)
SCALE_BLOCK = 128
FP8 = getattr(torch, "float8_e4m3fn", None)  # None: this torch has no float8
FP8_MAX = 448.0
MIN_EXACT = 0.99
SILU_ARGMIN = -1.2784645427610738  # x where x * sigmoid(x) is smallest
SILU_MIN = SILU_ARGMIN / (1.0 + math.exp(-SILU_ARGMIN))


# --- inputs -------------------------------------------------------------------------


def randn(gen, rows, cols, dtype, scale=1.0, pad=0):
    """torch.randn * scale as `dtype`, [rows, cols]; pad > 0 gives a row stride of cols + pad."""
    t = (torch.randn(rows, cols + pad, generator=gen, device=gen.device) * scale).to(dtype)
    return t[:, :cols] if pad else t


def make_inputs(gen, m, n, k, dtype, *, hidden_pad=0, weight_pad=0, attn_pad=0):
    """hidden ~ N(0, 1), weight ~ N(0, 4/K) (so the projection is ~ N(0, 4)), attn ~ N(0, 1)."""
    hidden = randn(gen, m, k, dtype, pad=hidden_pad)
    weight = randn(gen, n, k, dtype, scale=2.0 / math.sqrt(k), pad=weight_pad)
    attn = randn(gen, m, n, dtype, pad=attn_pad)
    return hidden, weight, attn


def poisoned_like(t):
    return torch.full_like(t, float("nan"))


def _expand_scale(scale, n, k):
    """weight_scale ([N], [N, 1] or [ceil(N/128), ceil(K/128)]) broadcast to [N, K]."""
    if scale.dim() == 1:
        scale = scale.reshape(-1, 1)
    if tuple(scale.shape) == (n, 1):
        return scale.expand(n, k)
    return scale.repeat_interleave(SCALE_BLOCK, 0)[:n].repeat_interleave(SCALE_BLOCK, 1)[:, :k]


def quantize_fp8(weight, layout):
    """(q, scale): `weight` [N, K] as float8_e4m3fn with fp32 scales, per output
    channel ("per_channel": scale [N, 1]) or per 128 x 128 block ("block128":
    scale [ceil(N/128), ceil(K/128)]), each scale amax / 448 as vLLM makes them."""
    n, k = weight.shape
    w = weight.float()
    if layout == "per_channel":
        amax = w.abs().amax(dim=1, keepdim=True)
    elif layout == "block128":
        rb, cb = -(-n // SCALE_BLOCK), -(-k // SCALE_BLOCK)
        padded = torch.zeros(rb * SCALE_BLOCK, cb * SCALE_BLOCK, device=w.device)
        padded[:n, :k] = w.abs()
        amax = padded.view(rb, SCALE_BLOCK, cb, SCALE_BLOCK).amax(dim=(1, 3))
    else:
        raise ValueError(f"layout {layout!r}: per_channel or block128")
    scale = (amax.clamp(min=1e-12) / FP8_MAX).float().contiguous()
    q = (w / _expand_scale(scale, n, k)).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return q, scale


def make_fp8_inputs(gen, m, n, k, dtype, layout):
    """(hidden, weight [N, K] float8_e4m3fn, weight_scale, attn): hidden and attn
    as make_inputs; the weight ~ N(0, 4/K) times a factor in [1/4, 4] per row
    and per 128-column stripe (so that the scales differ widely), quantised."""
    hidden = randn(gen, m, k, dtype)
    attn = randn(gen, m, n, dtype)
    rows = 4.0 ** (2 * torch.rand(n, 1, generator=gen, device=gen.device) - 1)
    stripes = 4.0 ** (2 * torch.rand(1, -(-k // SCALE_BLOCK), generator=gen, device=gen.device) - 1)
    factor = rows * stripes.repeat_interleave(SCALE_BLOCK, 1)[:, :k]
    weight = torch.randn(n, k, generator=gen, device=gen.device) * (2.0 / math.sqrt(k)) * factor / 4.0
    q, scale = quantize_fp8(weight, layout)
    return hidden, q, scale, attn


def dequantize(weight, weight_scale):
    """The exact value of an fp8 weight in fp64: decode(q) * scale (both exact)."""
    n, k = weight.shape
    return weight.float().double() * _expand_scale(weight_scale.double(), n, k)


# --- reference --------------------------------------------------------------------------


def _round(x64, dtype):
    """fp64 -> fp32 -> dtype: monotone, and exact where the kernel's fp32 value lies."""
    return x64.float().to(dtype)


def _act64(x, act):
    s = torch.sigmoid(x)
    return s if act == "sigmoid" else x * s


def _act_range(lo, hi, act):
    """min and max of act over [lo, hi] (elementwise, fp64)."""
    a, b = _act64(lo, act), _act64(hi, act)
    gmin, gmax = torch.minimum(a, b), torch.maximum(a, b)
    if act == "silu":
        inside = (lo <= SILU_ARGMIN) & (hi >= SILU_ARGMIN)
        gmin = torch.where(inside, torch.full_like(gmin, SILU_MIN), gmin)
    return gmin, gmax


def ulp_distance(a, b):
    """How many representable values apart two 16-bit float tensors are (elementwise)."""
    def ordinal(x):
        i = x.contiguous().view(torch.int16).to(torch.int32)
        return torch.where(i < 0, -(i & 0x7FFF), i)
    return (ordinal(a) - ordinal(b)).abs()


def reference(hidden, weight, attn, act, rounding="boundary", weight_scale=None):
    """(ref, lo, hi) for 2-D inputs: the contract's value with the exact projection,
    and the interval an element may legitimately take (see the module docstring).
    With weight_scale, `weight` is fp8 e4m3 and its value decode(q) * scale."""
    dtype = attn.dtype
    h, a = hidden.double(), attn.double()
    w = weight.double() if weight_scale is None else dequantize(weight, weight_scale)
    p = h @ w.T
    e = (PROJ_TOL + (0.0 if weight_scale is None else EPS32)) * (h.abs() @ w.abs().T)
    if dtype != torch.float32 and rounding == "boundary":
        proj = _round(p, dtype)
        g = (torch.sigmoid(proj.float()) if act == "sigmoid" else F.silu(proj.float())).to(dtype)
        ref = (g.float() * attn.float()).to(dtype)
        plo, phi = _round(p - e, dtype).double(), _round(p + e, dtype).double()
        gmin, gmax = _act_range(plo, phi, act)
        glo = _round(gmin - ACT_TOL * gmin.abs(), dtype).double()
        ghi = _round(gmax + ACT_TOL * gmax.abs(), dtype).double()
        o1, o2 = _round(glo * a, dtype).double(), _round(ghi * a, dtype).double()
        return ref, torch.minimum(o1, o2), torch.maximum(o1, o2)
    # No intermediate rounding: out = round(fp32(act(p32) * attn)).
    ref = _round(_act64(p, act) * a, dtype)
    gmin, gmax = _act_range(p - e, p + e, act)
    gmin, gmax = gmin - ACT_TOL * gmin.abs(), gmax + ACT_TOL * gmax.abs()
    o1, o2 = gmin * a, gmax * a
    lo, hi = torch.minimum(o1, o2), torch.maximum(o1, o2)
    slack = 2.0 ** -22  # the fp32 product's rounding, with margin
    lo, hi = lo - slack * lo.abs(), hi + slack * hi.abs()
    return ref, _round(lo, dtype).double(), _round(hi, dtype).double()


def assert_matches(got, hidden, weight, attn, act, gen, what, rounding="boundary", weight_scale=None):
    """Checks every element of `got` (see the module docstring for the criteria);
    weight_scale: the scales of an fp8 `weight`."""
    k = weight.shape[-1]
    got2 = got.reshape(-1, weight.shape[0])
    hidden2 = hidden.reshape(-1, k)
    attn2 = attn.reshape(-1, weight.shape[0])
    context = f"{what} [seed {gen.initial_seed()}]"
    finite = torch.isfinite(got2)
    assert bool(finite.all()), f"{context}: {int((~finite).sum())} of {got2.numel()} outputs are not finite " \
                               "(NaN: never written)"
    ref, lo, hi = reference(hidden2, weight, attn2, act, rounding, weight_scale)
    g64 = got2.double()
    outside = (g64 < lo) | (g64 > hi)
    strict = got.dtype != torch.float32 and rounding == "boundary"
    exact = (got2.contiguous().view(torch.int16) == ref.contiguous().view(torch.int16)) if strict \
        else (got2 == ref)
    frac_exact = float(exact.float().mean())
    max_ulp = int(ulp_distance(got2, ref).max()) if strict else 0
    problems = []
    if bool(outside.any()):
        idx = outside.nonzero()[:5].tolist()
        rows = "; ".join(f"[{i},{j}] got {float(got2[i, j])!r} ref {float(ref[i, j])!r} "
                         f"allowed [{float(lo[i, j])!r}, {float(hi[i, j])!r}]" for i, j in idx)
        problems.append(f"{int(outside.sum())} unexplained elements, e.g. {rows}")
    if strict and frac_exact < MIN_EXACT:
        problems.append(f"only {frac_exact:.4%} bit-exact (< {MIN_EXACT:.0%})")
    assert not problems, f"{context}: " + "; ".join(problems) + \
        f" (bit-exact {frac_exact:.4%}, max difference {max_ulp} ulps)"


def assert_fp8_out_matches(q, scale, hidden, weight, attn, act, gen, what, rounding="boundary", weight_scale=None):
    """Checks an fp8 out `q` [M, N] (torch.float8_e4m3fn) and its scales [M, N / 128]
    against the contract (docs/contract.md, "fp8 out"): each group's scale lies
    between max(amax, 1e-10) / 448 of the smallest and the largest maximum the
    gated values' intervals allow, and each byte between the e4m3 values of its
    interval's ends divided by the kernel's scale (both are monotonic); where
    the intervals are single values, bit for bit."""
    context = f"{what} [seed {gen.initial_seed()}]"
    m, n = attn.shape[0], weight.shape[0]
    _, lo, hi = reference(hidden.reshape(m, -1), weight, attn.reshape(m, n), act, rounding, weight_scale)
    # On the CPU: torch divides a CUDA tensor by a Python scalar as a multiplication by
    # its reciprocal, one ulp off the contract's IEEE division in about half the groups.
    lo, hi = lo.cpu(), hi.cpu()
    s32 = scale.reshape(m, n // 128).float().cpu()
    s = s32.double()
    assert bool(torch.isfinite(s).all()), f"{context}: scales not written (NaN)"
    low_abs = torch.where((lo <= 0) & (hi >= 0), torch.zeros_like(lo), torch.minimum(lo.abs(), hi.abs()))
    high_abs = torch.maximum(lo.abs(), hi.abs())
    fp8_max = torch.tensor(448.0)
    amax_lo = low_abs.reshape(m, -1, 128).amax(-1).float()
    amax_hi = high_abs.reshape(m, -1, 128).amax(-1).float()
    s_lo = (torch.clamp(amax_lo, min=1e-10) / fp8_max).double()
    s_hi = (torch.clamp(amax_hi, min=1e-10) / fp8_max).double()
    bad_s = (s < s_lo) | (s > s_hi)
    assert not bool(bad_s.any()), \
        f"{context}: {int(bad_s.sum())} scales outside [{s_lo[bad_s][0]}, {s_hi[bad_s][0]}] (got {s[bad_s][0]})"
    s_cols = s32.repeat_interleave(128, 1)

    def quant(y):
        return (y.float() / s_cols).clamp(-448.0, 448.0).to(FP8).double()

    got = q.reshape(m, n).cpu().double()
    assert bool(torch.isfinite(got).all()), f"{context}: fp8 outputs not written (NaN)"
    q_lo, q_hi = quant(lo), quant(hi)
    bad = (got < q_lo) | (got > q_hi)
    assert not bool(bad.any()), f"{context}: {int(bad.sum())} of {got.numel()} fp8 outputs outside their interval"
