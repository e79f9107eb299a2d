"""Tests of the gatejit Python binding on a CUDA device (pytest).

Run on a GPU machine with PyTorch, libgatejit.so and a kernel bundle:

    GATEJIT_BUNDLE_PATH=/path/kernels.gjb python3 -m pytest -q python/tests/test_binding.py

The module is skipped, with the reason, when torch, a CUDA device,
libgatejit.so or any kernel source (a bundle or the JIT) is missing.

Every run draws fresh random inputs (the seed is in every failure message);
outputs are poisoned with NaN before each launch, and every element is checked.

Results are judged by gate_reference.py: the contract's rounding boundaries and
an explained interval per element (its docstring gives the rule).
"""

from __future__ import annotations

import os

import pytest

from gpu_prerequisites import require

torch, gatejit = require("the gatejit binding tests")
from gatejit import GatejitError  # noqa: E402
from gate_reference import FP8, assert_matches, make_fp8_inputs, make_inputs, poisoned_like  # noqa: E402

DEVICE = torch.device("cuda", torch.cuda.current_device())
SEED_NK = (1536, 7168)
SHAPES_NK = [(1536, 7168), (4096, 2048)]
GEMV_MS = [1, 2, 4, 8, 16]
BATCH_MS = [32, 100]  # the mma template on sm_90 (from M = 2 on)
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
ACTS = ["sigmoid", "silu"]
SCALE_LAYOUTS = ["per_channel", "block128"]
needs_fp8 = pytest.mark.skipif(FP8 is None, reason=f"torch {torch.__version__} has no float8_e4m3fn")


# --- results ----------------------------------------------------------------------------


@pytest.mark.parametrize("in_place", [False, True], ids=["out", "inplace"])
@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("nk", SHAPES_NK, ids=lambda nk: f"n{nk[0]}k{nk[1]}")
@pytest.mark.parametrize("m", GEMV_MS + BATCH_MS, ids=lambda m: f"m{m}")
def test_gate_epilogue(gen, m, nk, dtype_name, act, in_place):
    n, k = nk
    dtype = DTYPES[dtype_name]
    hidden, weight, attn = make_inputs(gen, m, n, k, dtype)
    what = f"m={m} n={n} k={k} {dtype_name} {act} {'in place' if in_place else 'out'}"
    if in_place:
        attn_before = attn.clone()
        result = gatejit.gate_epilogue(hidden, weight, attn, out=attn, act=act)
        torch.cuda.synchronize()
        assert result is attn
        assert_matches(attn, hidden, weight, attn_before, act, gen, what)
    else:
        out = poisoned_like(attn)
        result = gatejit.gate_epilogue(hidden, weight, attn, out=out, act=act)
        torch.cuda.synchronize()
        assert result is out
        assert_matches(out, hidden, weight, attn, act, gen, what)


def test_out_none_allocates(gen):
    hidden, weight, attn = make_inputs(gen, 4, *SEED_NK, torch.bfloat16)
    out = gatejit.gate_epilogue(hidden, weight, attn)
    torch.cuda.synchronize()
    assert out.shape == attn.shape and out.dtype == attn.dtype and out.device == attn.device
    assert out.data_ptr() != attn.data_ptr()
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, "out=None")


@pytest.mark.parametrize("attn_1d", [False, True], ids=["attn2d", "attn1d"])
def test_hidden_1d(gen, attn_1d):
    n, k = SEED_NK
    hidden, weight, attn = make_inputs(gen, 1, n, k, torch.bfloat16)
    hidden = hidden[0]  # [K]
    if attn_1d:
        attn = attn[0]  # [N]
    out = poisoned_like(attn)
    gatejit.gate_epilogue(hidden, weight, attn, out=out)
    torch.cuda.synchronize()
    assert out.shape == attn.shape
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, f"1-D hidden, attn {tuple(attn.shape)}")


@pytest.mark.parametrize("m", [1, 4, 32], ids=lambda m: f"m{m}")
@pytest.mark.parametrize("pad", [8, 3], ids=["ld_k+8", "ld_k+3"])
def test_padded_leading_dimension(gen, m, pad):
    """weight is a slice of a wider tensor (ld = K + pad); hidden, attn and out
    are padded too. K + 3 breaks 16-byte row alignment, forcing the generic path."""
    n, k = SEED_NK
    hidden, weight, attn = make_inputs(gen, m, n, k, torch.bfloat16, hidden_pad=pad, weight_pad=pad, attn_pad=pad)
    assert weight.stride() == (k + pad, 1)
    out = poisoned_like(torch.empty(m, n + pad, dtype=attn.dtype, device=DEVICE))[:, :n]
    text = gatejit.explain(hidden, weight, attn, out=out)
    assert ("generic" in text) if pad == 3 else ("gemv" in text or "mma" in text), text
    gatejit.gate_epilogue(hidden, weight, attn, out=out)
    torch.cuda.synchronize()
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, f"m={m} ld = K + {pad} ({text})")


@pytest.mark.parametrize("m", [4, 32], ids=lambda m: f"m{m}")
def test_rounding_fused(gen, m):
    hidden, weight, attn = make_inputs(gen, m, *SEED_NK, torch.bfloat16)
    out = poisoned_like(attn)
    try:
        gatejit.gate_epilogue(hidden, weight, attn, out=out, rounding="fused")
    except GatejitError as e:
        if e.code_name == "UNSUPPORTED":
            pytest.skip(f"no rounding=fused kernel in the loaded bundles: {e}")
        raise
    torch.cuda.synchronize()
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, f"m={m} fused", rounding="fused")


def test_float32(gen):
    hidden, weight, attn = make_inputs(gen, 4, *SEED_NK, torch.float32)
    out = poisoned_like(attn)
    try:
        gatejit.gate_epilogue(hidden, weight, attn, out=out)
    except GatejitError as e:
        if e.code_name == "UNSUPPORTED":
            pytest.skip(f"no float32 kernel in the loaded bundles: {e}")
        raise
    torch.cuda.synchronize()
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, "float32")


def test_explain(gen):
    n, k = SEED_NK
    hidden, weight, attn = make_inputs(gen, 1, n, k, torch.bfloat16)
    text = gatejit.explain(hidden, weight, attn)
    assert isinstance(text, str) and text.strip(), repr(text)
    assert "gemv" in text or "mma" in text or "generic" in text, text
    hidden, weight, attn = make_inputs(gen, 32, n, k, torch.bfloat16)
    text = gatejit.explain(hidden, weight, attn, out=poisoned_like(attn), act="silu")
    assert "mma" in text or "generic" in text, text


def test_non_default_stream(gen):
    """The launch goes on torch's current stream: while that stream sleeps, the
    output is untouched; after it, the output is right."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is not available")
    hidden, weight, attn = make_inputs(gen, 4, *SEED_NK, torch.bfloat16)
    out = poisoned_like(attn)
    gatejit.prepare(hidden, weight, attn, out=out)
    torch.cuda.synchronize()
    side = torch.cuda.Stream(device=DEVICE)
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~0.1 s at 2 GHz
        gatejit.gate_epilogue(hidden, weight, attn, out=out)
    snapshot = out.clone()  # on the default stream, which does not wait for `side`
    side.synchronize()
    torch.cuda.synchronize()
    assert bool(torch.isnan(snapshot).all()), "the kernel ran before its stream reached it: wrong stream?"
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, "side stream")


@pytest.mark.parametrize("m,act,in_place", [(1, "sigmoid", False), (4, "silu", False), (32, "sigmoid", False),
                                            (1, "sigmoid", True)],
                         ids=["m1", "m4-silu", "m32", "m1-inplace"])
def test_cuda_graph(gen, m, act, in_place):
    """prepare, capture one call in a CUDA graph with static tensors, then feed new
    values in place and replay: the output follows the new inputs."""
    n, k = SEED_NK
    hidden, weight, attn = make_inputs(gen, m, n, k, torch.bfloat16)
    out = attn if in_place else poisoned_like(attn)
    gatejit.prepare(hidden, weight, attn, out=out, act=act)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gatejit.gate_epilogue(hidden, weight, attn, out=out, act=act)
    for step in range(2):
        new_hidden, new_weight, new_attn = make_inputs(gen, m, n, k, torch.bfloat16)
        hidden.copy_(new_hidden)
        weight.copy_(new_weight)
        attn.copy_(new_attn)
        if not in_place:
            out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert_matches(out, new_hidden, new_weight, new_attn, act, gen, f"graph replay {step} m={m} {act}")


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_second_device(gen):
    other = torch.device("cuda", (DEVICE.index + 1) % torch.cuda.device_count())
    hidden, weight, attn = (t.to(other) for t in make_inputs(gen, 4, *SEED_NK, torch.bfloat16))
    out = poisoned_like(attn)
    gatejit.gate_epilogue(hidden, weight, attn, out=out)  # the current device stays DEVICE
    torch.cuda.synchronize(other)
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, f"on {other}")
    with pytest.raises(GatejitError, match="weight") as info:
        gatejit.gate_epilogue(hidden, weight.to(DEVICE), attn)
    assert info.value.argument == "weight"


# --- fp8 e4m3 weights ----------------------------------------------------------------------


@needs_fp8
@pytest.mark.parametrize("layout", SCALE_LAYOUTS)
@pytest.mark.parametrize("m", [1, 4, 16], ids=lambda m: f"m{m}")
def test_fp8_weight(gen, m, layout):
    """A float8_e4m3fn weight with fp32 scales (per output channel, or per 128 x
    128 block): judged against decode(q) * scale, every element."""
    n, k = SEED_NK
    hidden, weight, scale, attn = make_fp8_inputs(gen, m, n, k, torch.bfloat16, layout)
    out = poisoned_like(attn)
    result = gatejit.gate_epilogue(hidden, weight, attn, out=out, weight_scale=scale)
    torch.cuda.synchronize()
    assert result is out
    text = gatejit.explain(hidden, weight, attn, out=out, weight_scale=scale)
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, f"fp8 m={m} {layout} bf16 ({text})",
                   weight_scale=scale)


@needs_fp8
@pytest.mark.parametrize("m,dtype,act,flat_scale", [(4, "f16", "silu", False), (1, "bf16", "sigmoid", True)],
                         ids=["m4-f16-silu", "m1-scale-1d"])
def test_fp8_weight_per_channel_variants(gen, m, dtype, act, flat_scale):
    """f16 activations with silu; and a 1-D [N] per-channel scale, taken as
    [N, 1] (the same contract)."""
    n, k = SEED_NK
    torch_dtype = torch.float16 if dtype == "f16" else torch.bfloat16
    hidden, weight, scale, attn = make_fp8_inputs(gen, m, n, k, torch_dtype, "per_channel")
    out = poisoned_like(attn)
    gatejit.gate_epilogue(hidden, weight, attn, out=out, act=act,
                          weight_scale=scale.reshape(n) if flat_scale else scale)
    torch.cuda.synchronize()
    assert_matches(out, hidden, weight, attn, act, gen, f"fp8 m={m} per_channel {dtype} {act} 1-D={flat_scale}",
                   weight_scale=scale)


@needs_fp8
def test_fp8_weight_in_place(gen):
    n, k = SEED_NK
    hidden, weight, scale, attn = make_fp8_inputs(gen, 4, n, k, torch.bfloat16, "block128")
    attn_before = attn.clone()
    result = gatejit.gate_epilogue(hidden, weight, attn, out=attn, weight_scale=scale)
    torch.cuda.synchronize()
    assert result is attn
    assert_matches(attn, hidden, weight, attn_before, "sigmoid", gen, "fp8 m=4 block128 in place",
                   weight_scale=scale)


@needs_fp8
def test_fp8_scales_change_the_result(gen):
    """The kernel reads the scales: doubling one channel's scale (and one block's)
    changes exactly what it should, through the same prepared call."""
    n, k = SEED_NK
    for layout in SCALE_LAYOUTS:
        hidden, weight, scale, attn = make_fp8_inputs(gen, 4, n, k, torch.bfloat16, layout)
        out = poisoned_like(attn)
        gatejit.gate_epilogue(hidden, weight, attn, out=out, weight_scale=scale)
        scale2 = scale.clone()
        scale2[1] *= 2.0  # channel 1, or the block row of channels 128..255
        out2 = poisoned_like(attn)
        gatejit.gate_epilogue(hidden, weight, attn, out=out2, weight_scale=scale2)
        torch.cuda.synchronize()
        assert_matches(out2, hidden, weight, attn, "sigmoid", gen, f"fp8 {layout} rescaled", weight_scale=scale2)
        changed = (out != out2).any(dim=0).nonzero().flatten().tolist()
        expected = range(1, 2) if layout == "per_channel" else range(128, 256)
        assert changed and set(changed) <= set(expected), f"{layout}: channels changed {changed[:10]}"


# --- errors ------------------------------------------------------------------------------


def _bad_calls():
    """(id, argument named in the error, function of valid (hidden, weight, attn) that makes a bad call)."""
    bf = torch.bfloat16
    return [
        ("hidden-float64", "hidden", lambda h, w, a: gatejit.gate_epilogue(h.double(), w, a)),
        ("hidden-int32", "hidden", lambda h, w, a: gatejit.gate_epilogue(h.to(torch.int32), w, a)),
        ("weight-f16-mixed", "weight", lambda h, w, a: gatejit.gate_epilogue(h, w.half(), a)),
        ("out-f32-mixed", "out", lambda h, w, a: gatejit.gate_epilogue(h, w, a, out=a.float())),
        ("hidden-cpu", "hidden", lambda h, w, a: gatejit.gate_epilogue(h.cpu(), w, a)),
        ("attn-cpu", "attn", lambda h, w, a: gatejit.gate_epilogue(h, w, a.cpu())),
        ("hidden-not-tensor", "hidden", lambda h, w, a: gatejit.gate_epilogue(h.tolist(), w, a)),
        ("weight-k-mismatch", "weight", lambda h, w, a: gatejit.gate_epilogue(h, w[:, :-8], a)),
        ("attn-n-mismatch", "attn", lambda h, w, a: gatejit.gate_epilogue(h, w, a[:, :-1])),
        ("attn-m-mismatch", "attn", lambda h, w, a: gatejit.gate_epilogue(h, w, a[:-1])),
        ("out-shape", "out", lambda h, w, a: gatejit.gate_epilogue(h, w, a, out=torch.empty_like(a)[:, :-1])),
        ("attn-3d", "attn", lambda h, w, a: gatejit.gate_epilogue(h, w, a.unsqueeze(0))),
        ("weight-1d", "weight", lambda h, w, a: gatejit.gate_epilogue(h, w[0], a)),
        ("weight-transposed", "weight",
         lambda h, w, a: gatejit.gate_epilogue(h, w.T.contiguous().T, a)),
        ("hidden-inner-stride", "hidden",
         lambda h, w, a: gatejit.gate_epilogue(torch.cat([h, h], 1)[:, ::2], w, a)),
        ("out-inner-stride", "out",
         lambda h, w, a: gatejit.gate_epilogue(h, w, a, out=torch.empty(a.shape[1], a.shape[0], dtype=bf,
                                                                          device=DEVICE).T)),
        ("act", "act", lambda h, w, a: gatejit.gate_epilogue(h, w, a, act="relu")),
        ("rounding", "rounding", lambda h, w, a: gatejit.gate_epilogue(h, w, a, rounding="nearest")),
    ]


@pytest.mark.parametrize("argument,bad_call", [(arg, fn) for _, arg, fn in _bad_calls()],
                         ids=[name for name, _, _ in _bad_calls()])
def test_argument_errors(gen, argument, bad_call):
    hidden, weight, attn = make_inputs(gen, 4, 256, 512, torch.bfloat16)
    with pytest.raises(GatejitError) as info:
        bad_call(hidden, weight, attn)
    assert isinstance(info.value, ValueError)
    assert info.value.argument == argument, str(info.value)
    assert argument in str(info.value), str(info.value)


def _fp8_bad_calls():
    """(id, argument named, function of valid fp8 (hidden, weight, scale, attn) making a bad call)."""
    ge = gatejit.gate_epilogue
    return [
        ("fp8-without-scale", "weight_scale", lambda h, w, s, a: ge(h, w, a)),
        ("scale-for-bf16-weight", "weight_scale",
         lambda h, w, s, a: ge(h, w.to(torch.bfloat16), a, weight_scale=s)),
        ("scale-not-tensor", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s.tolist())),
        ("scale-f16", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s.half())),
        ("scale-float64", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s.double())),
        ("scale-cpu", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s.cpu())),
        ("scale-short", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s[:-1])),
        ("scale-1xN", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s.reshape(1, -1))),
        ("scale-scalar", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s[0, 0])),
        ("scale-3d", "weight_scale", lambda h, w, s, a: ge(h, w, a, weight_scale=s.unsqueeze(0))),
        ("scale-block-wrong", "weight_scale",
         lambda h, w, s, a: ge(h, w, a, weight_scale=torch.ones(3, 3, device=DEVICE))),
        ("scale-block-strided", "weight_scale",
         lambda h, w, s, a: ge(h, w, a, weight_scale=torch.ones(4, 2, device=DEVICE).T)),  # [2, 4] not packed
        ("scale-strided", "weight_scale",
         lambda h, w, s, a: ge(h, w, a, weight_scale=torch.ones(2 * w.shape[0], device=DEVICE)[::2])),
        ("fp8-with-f32-activations", "weight",
         lambda h, w, s, a: ge(h.float(), w, a.float(), weight_scale=s)),
        ("fp8-hidden", "hidden", lambda h, w, s, a: ge(h.to(FP8), w, a, weight_scale=s)),
        ("fp8-attn", "attn", lambda h, w, s, a: ge(h, w, a.to(FP8), weight_scale=s)),
        # An fp8 out is a contract now (issue 20); without its scales the call names out_scale.
        ("fp8-out-without-scale", "out_scale", lambda h, w, s, a: ge(h, w, a, out=a.to(FP8), weight_scale=s)),
        ("fp8-out-mixed", "out", lambda h, w, s, a: ge(h, w, a, out=a.half(), weight_scale=s)),
        ("fp8-weight-transposed", "weight",
         lambda h, w, s, a: ge(h, w.T.contiguous().T, a, weight_scale=s)),
        ("fp8-weight-k-mismatch", "weight", lambda h, w, s, a: ge(h, w[:, :-16], a, weight_scale=s)),
        ("explain-without-scale", "weight_scale", lambda h, w, s, a: gatejit.explain(h, w, a)),
        ("prepare-scale-for-bf16", "weight_scale",
         lambda h, w, s, a: gatejit.prepare(h, w.to(torch.bfloat16), a, weight_scale=s)),
        ("runtime-without-scale", "weight_scale",
         lambda h, w, s, a: gatejit.default_runtime().gate_epilogue(h, w, a)),
    ]


@needs_fp8
@pytest.mark.parametrize("argument,bad_call", [(arg, fn) for _, arg, fn in _fp8_bad_calls()],
                         ids=[name for name, _, _ in _fp8_bad_calls()])
def test_fp8_argument_errors(gen, argument, bad_call):
    """Rejected by the Python checks (naming the argument) before any kernel is looked up."""
    hidden, weight, scale, attn = make_fp8_inputs(gen, 4, 256, 512, torch.bfloat16, "per_channel")
    with pytest.raises(GatejitError) as info:
        bad_call(hidden, weight, scale, attn)
    assert isinstance(info.value, ValueError), str(info.value)
    assert info.value.argument == argument, str(info.value)
    assert argument in str(info.value), str(info.value)
    assert gatejit.supports(hidden, weight, attn) is False  # no scale: False, never an exception


def test_runtime_errors_reach_python(tmp_path, monkeypatch, gen):
    missing = tmp_path / "missing.gjb"
    with pytest.raises(GatejitError, match="missing.gjb") as info:
        gatejit.Runtime(bundle_path=missing)
    assert info.value.code_name == "NOT_FOUND"

    garbage = tmp_path / "garbage.gjb"
    garbage.write_bytes(b"not a bundle" * 16)
    with gatejit.Runtime() as rt:
        with pytest.raises(GatejitError, match="garbage.gjb") as info:
            rt.load_bundle(garbage)
        assert info.value.code_name == "CORRUPT"
        with pytest.raises(GatejitError, match="unknown") as info:
            rt.explain_contract({"m": 1, "n": 8, "k": 8, "colour": "red"})
        assert info.value.code_name == "INVALID_ARGUMENT"

    # A runtime with no bundle and no JIT cannot serve a call: the runtime's message comes through.
    monkeypatch.delenv("GATEJIT_BUNDLE_PATH", raising=False)
    with gatejit.Runtime(disable_jit=True, disable_cache=True, shipped_bundle=False) as empty:
        hidden, weight, attn = make_inputs(gen, 1, 256, 512, torch.bfloat16)
        with pytest.raises(GatejitError, match="no kernel can serve") as info:
            gatejit.gate_epilogue(hidden, weight, attn, runtime=empty)
        assert info.value.code_name == "UNSUPPORTED"
        with pytest.raises(GatejitError, match="no kernel can serve"):
            empty.explain(hidden, weight, attn)

    rt = gatejit.Runtime()
    rt.close()
    with pytest.raises(GatejitError, match="closed"):
        rt.explain_contract({"m": 1, "n": 8, "k": 8})


def test_runtime_object(gen, monkeypatch):
    """A Runtime given the bundles as an option (not through the environment)
    serves calls like the default one; load_bundle adds them later."""
    bundles = [p for p in os.environ.get("GATEJIT_BUNDLE_PATH", "").split(":") if p]
    if not bundles:
        pytest.skip("GATEJIT_BUNDLE_PATH is not set")
    monkeypatch.delenv("GATEJIT_BUNDLE_PATH")
    hidden, weight, attn = make_inputs(gen, 2, *SEED_NK, torch.bfloat16)
    with gatejit.Runtime(bundle_path=bundles) as rt:
        rt.prepare(hidden, weight, attn)
        out = rt.gate_epilogue(hidden, weight, attn)
        torch.cuda.synchronize()
        assert_matches(out, hidden, weight, attn, "sigmoid", gen, "Runtime(bundle_path=...)")
        text = rt.explain(hidden, weight, attn)
        assert "gemv" in text or "mma" in text or "generic" in text, text
    with gatejit.Runtime(disable_jit=True) as rt:
        for path in bundles:
            rt.load_bundle(path)
        out = rt.gate_epilogue(hidden, weight, attn, act="silu")
        torch.cuda.synchronize()
        assert_matches(out, hidden, weight, attn, "silu", gen, "Runtime.load_bundle")
