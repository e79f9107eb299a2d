"""gatejit.integrations.vllm in a compiled, CUDA-graph-captured model.

A small MLA-like block (mla_module.py) owning its gate projection is built
twice with the same weights: once with GatejitOutputGate installed as its
output-gate callback, once without (its own expression). Both are compiled
with torch.compile(fullgraph=True), warmed up and captured in CUDA graphs per
batch size on one stream, as an engine does, and replayed on new inputs.
The test checks

  (a) the gated values of the block with the callback against the boundary
      contract (gate_reference.py, every element) and both blocks' outputs
      against each other;
  (b) that the fused kernel really ran in the replayed graph: the profiler's
      record of the replay holds a gatejit kernel (its code object's symbol
      starts with "gatejit_") for the block with the callback and none for
      the block without, and capturing the block with the callback went
      through gatejit's launch path once per capture.

GATEJIT_TEST_DROP_CALLBACK=1 builds the "with callback" block without
installing the callback; the test must then fail at (b)
(scripts/device_run.sh runs it so and shows the failure).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest

from gpu_prerequisites import require

torch, gatejit = require("the vLLM adapter tests")
import torch._dynamo  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from gatejit.integrations.vllm import (DECISION_ATTRIBUTE, FP8_FUSED_MAX_M, FP8_OUT_ATTRIBUTE, SCALE_ATTRIBUTE,  # noqa: E402
                                       GatejitOutputGate, quantise_per_token_group)
from gate_reference import FP8, FP8_MAX, assert_fp8_out_matches, assert_matches, dequantize, quantize_fp8  # noqa: E402
from graph_replay import replay_kernels  # noqa: E402
from mla_module import TinyMLAAttention  # noqa: E402

DROP_CALLBACK = os.environ.get("GATEJIT_TEST_DROP_CALLBACK") == "1"
HIDDEN = 7168


def rel_rmse(a, b) -> float:
    a, b = a.double(), b.double()
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))




def capture(model, static_input, stream):
    """Warm-up and capture on `stream` (vLLM's pattern); returns (graph, outputs, launches during capture)."""
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            model(static_input)
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    before = gatejit.launch_count()
    with torch.cuda.graph(graph, stream=stream):
        outputs = model(static_input)
    return graph, outputs, gatejit.launch_count() - before


@pytest.mark.parametrize("dynamic,sizes", [(True, [4, 32]), (False, [8])], ids=["dynamic", "static"])
def test_mla_block_with_and_without_the_callback(gen, dynamic, sizes):
    torch._dynamo.reset()
    torch.manual_seed(gen.initial_seed() % (2 ** 31))
    plain_block = TinyMLAAttention().to(device="cuda", dtype=torch.bfloat16).eval().requires_grad_(False)
    fused_block = copy.deepcopy(plain_block)
    gate = GatejitOutputGate(capture_sizes=sizes)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # prepare on the stream that will be captured
        assert gate.prepare(fused_block.gate_proj) is True, "gatejit should serve the seed shape"
    assert getattr(fused_block.gate_proj, DECISION_ATTRIBUTE) is True
    if not DROP_CALLBACK:
        fused_block.output_gate = gate
    fused = torch.compile(fused_block, fullgraph=True, dynamic=dynamic)
    plain = torch.compile(plain_block, fullgraph=True, dynamic=dynamic)

    with torch.no_grad():
        for tokens in sizes:
            static_input = torch.randn(tokens, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
            fused_graph, fused_out, fused_launches = capture(fused, static_input, stream)
            plain_graph, plain_out, plain_launches = capture(plain, static_input, stream)
            static_input.copy_(torch.randn(tokens, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16))
            for t in (*fused_out, *plain_out):
                t.fill_(float("nan"))
            fused_kernels = replay_kernels(fused_graph)
            plain_kernels = replay_kernels(plain_graph)
            what = f"T={tokens} dynamic={dynamic}"

            # (b) the fused kernel ran in the compiled, captured block with the callback, and only there
            assert plain_kernels, f"{what}: the profiler recorded no kernel at all for the replay"
            fused_gatejit = [k for k in fused_kernels if k.startswith("gatejit_")]
            assert fused_gatejit, (f"{what}: no gatejit kernel ran in the replayed graph of the block with the "
                                   f"callback; its kernels: {sorted(set(fused_kernels))}")
            assert not [k for k in plain_kernels if k.startswith("gatejit_")], plain_kernels
            assert fused_launches == 1 and plain_launches == 0, (fused_launches, plain_launches)
            print(f"{what}: replayed gatejit kernel {fused_gatejit[0]} among {len(fused_kernels)} kernels "
                  f"(block without the callback: {len(plain_kernels)} kernels)")

            # (a) the values: the seam at the boundary contract, the block outputs against each other
            out_f, attn_f, gated_f = fused_out
            out_p, attn_p, gated_p = plain_out
            for t in (*fused_out, *plain_out):
                assert bool(torch.isfinite(t).all()), f"{what}: an output was not written by the replay"
            assert_matches(gated_f, static_input, fused_block.gate_proj.weight, attn_f, "sigmoid", gen,
                           f"{what}: gated values of the block with the callback")
            assert rel_rmse(attn_f, attn_p) < 1e-2, f"{what}: attention outputs differ"
            assert rel_rmse(gated_f, gated_p) < 1e-2, f"{what}: gated values differ"
            assert rel_rmse(out_f, out_p) < 1e-2, f"{what}: block outputs differ"
            exact = float((gated_f.view(torch.int16) == gated_p.view(torch.int16)).double().mean())
            print(f"{what}: gated values bit-identical to the block without the callback: {exact:.4%}; "
                  f"output rel RMSE {rel_rmse(out_f, out_p):.2e}")


def test_fallback_for_what_gatejit_does_not_serve(gen):
    """A quantised-looking or biased projection, a wrong dtype or a strided
    input keeps the existing expression (and launches nothing)."""
    gate = GatejitOutputGate(capture_sizes=[4])
    biased = torch.nn.Linear(HIDDEN, 1536, bias=True).to("cuda", torch.bfloat16).requires_grad_(False)
    assert gate.prepare(biased) is False and getattr(biased, DECISION_ATTRIBUTE) is False
    fp32 = torch.nn.Linear(HIDDEN, 1536, bias=False).to("cuda").requires_grad_(False)
    assert gate.prepare(fp32) is False

    class QuantMethod:  # what a quantised vLLM layer carries
        pass

    quantised = torch.nn.Linear(HIDDEN, 1536, bias=False).to("cuda", torch.bfloat16).requires_grad_(False)
    quantised.quant_method = QuantMethod()
    assert gate.prepare(quantised) is False

    plain = torch.nn.Linear(HIDDEN, 1536, bias=False).to("cuda", torch.bfloat16).requires_grad_(False)
    assert gate.prepare(plain) is True
    hidden = torch.randn(8, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
    attn = torch.randn(8, 1536, generator=gen, device="cuda").to(torch.bfloat16)
    before = gatejit.launch_count()
    with torch.no_grad():
        for layer in (biased, quantised):
            expected = attn * torch.sigmoid(layer(hidden))
            assert torch.equal(gate(hidden, layer, attn), expected)
        strided = torch.randn(8, 2 * HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)[:, :HIDDEN]
        assert torch.equal(gate(strided, plain, attn), attn * torch.sigmoid(plain(strided)))
        assert gatejit.launch_count() == before
        fused = gate(hidden, plain, attn)
        torch.cuda.synchronize()
    assert gatejit.launch_count() == before + 1
    assert_matches(fused, hidden, plain.weight, attn, "sigmoid", gen, "adapter eager")

    # in_place=True writes into attn_output and returns it, on both paths.
    in_place = GatejitOutputGate(capture_sizes=[4], in_place=True)
    with torch.no_grad():
        buffer = attn.clone()
        assert in_place(hidden, plain, buffer) is buffer
        torch.cuda.synchronize()
        assert_matches(buffer, hidden, plain.weight, attn, "sigmoid", gen, "adapter eager in place")
        buffer = attn.clone()
        assert in_place(hidden, biased, buffer) is buffer
        assert torch.equal(buffer, attn * torch.sigmoid(biased(hidden)))
    assert gatejit.launch_count() == before + 2


def test_importable_without_vllm():
    code = ("import sys; sys.modules['vllm'] = None\n"
            "import torch, gatejit.integrations.vllm as v\n"
            "assert 'vllm' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
            "print(v.GatejitOutputGate.__name__)")
    env = dict(os.environ)
    if os.environ.get("GATEJIT_TEST_INSTALLED") != "1":
        env["PYTHONPATH"] = os.path.join(os.path.dirname(__file__), "..") + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "GatejitOutputGate" in done.stdout, done.stderr


class Fp8LinearMethod:  # named as vLLM's; the adapter judges the layer by its tensors, not by this
    pass


class Fp8GateProj(torch.nn.Module):
    """What vLLM's fp8 linear methods leave on a layer after loading:
    "block128": weight [N, K] fp8, weight_scale_inv [ceil(N/128), ceil(K/128)],
    weight_block_size [128, 128]; "per_tensor": weight kept transposed ([K, N]
    view of an [N, K] tensor) with one weight_scale (vLLM's requantised
    per-tensor form); "per_channel": transposed weight, weight_scale [N, 1].
    forward is the weight-only dequantised projection."""

    def __init__(self, weight, layout):
        super().__init__()
        n = weight.shape[0]
        if layout == "per_tensor":
            scale = (weight.float().abs().amax() / FP8_MAX).reshape(())
            q = (weight.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8)
            self.reference_scale = scale.reshape(1, 1).expand(n, 1).contiguous()
        else:
            q, scale = quantize_fp8(weight, layout)
            self.reference_scale = scale
        self.q = q  # [N, K], for the reference
        if layout == "block128":
            self.weight = torch.nn.Parameter(q, requires_grad=False)
            self.weight_scale_inv = torch.nn.Parameter(scale, requires_grad=False)
            self.weight_block_size = [128, 128]
        else:
            self.weight = torch.nn.Parameter(q.t(), requires_grad=False)
            self.weight_scale = torch.nn.Parameter(scale, requires_grad=False)
        self.bias = None
        self.orig_dtype = torch.bfloat16
        self.output_size_per_partition = n
        self.quant_method = Fp8LinearMethod()

    def forward(self, x):
        return F.linear(x, dequantize(self.q, self.reference_scale).to(x.dtype))


@pytest.mark.skipif(FP8 is None, reason="this torch has no float8_e4m3fn")
@pytest.mark.parametrize("layout", ["block128", "per_tensor", "per_channel"])
def test_fp8_projection(gen, layout):
    """An fp8 projection (vLLM's layouts) takes the fused path with its scales,
    eagerly and compiled; fp8_weights=False, or scales in a layout gatejit does
    not take, keep the existing expression."""
    torch._dynamo.reset()
    n, tokens = 1536, 4
    weight = torch.randn(n, HIDDEN, generator=gen, device="cuda") * (2.0 / HIDDEN ** 0.5)
    layer = Fp8GateProj(weight, layout)
    gate = GatejitOutputGate(capture_sizes=[tokens])
    assert gate.prepare(layer) is True, f"gatejit should serve an fp8 {layout} projection"
    assert getattr(layer, DECISION_ATTRIBUTE) is True and getattr(layer, SCALE_ATTRIBUTE)[1] == torch.bfloat16
    hidden = torch.randn(tokens, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
    attn = torch.randn(tokens, n, generator=gen, device="cuda").to(torch.bfloat16)
    before = gatejit.launch_count()
    with torch.no_grad():
        fused = gate(hidden, layer, attn)
        compiled = torch.compile(lambda h, a: gate(h, layer, a), fullgraph=True)(hidden, attn)
        torch.cuda.synchronize()
    assert gatejit.launch_count() == before + 2
    for what, got in (("eager", fused), ("compiled", compiled)):
        assert_matches(got, hidden, layer.q, attn, "sigmoid", gen, f"adapter fp8 {layout} {what}",
                       weight_scale=layer.reference_scale)

    off = GatejitOutputGate(capture_sizes=[tokens], fp8_weights=False)
    assert off.prepare(layer) is False
    with torch.no_grad():
        assert torch.equal(off(hidden, layer, attn), attn * torch.sigmoid(layer(hidden)))
    if layout == "block128":  # scales transposed (as DeepGEMM lays them out): not taken
        other = Fp8GateProj(weight, layout)
        other.weight_scale_inv = torch.nn.Parameter(other.weight_scale_inv.t().contiguous().t(), requires_grad=False)
        assert gate.prepare(other) is False
    assert gatejit.launch_count() == before + 2
    # Above FP8_FUSED_MAX_M gatejit's fp8 kernel is no faster than vLLM's own
    # path: those batches keep the existing expression, smaller ones fuse.
    big = FP8_FUSED_MAX_M * 2
    mixed = GatejitOutputGate(capture_sizes=[tokens, big])
    assert mixed.prepare(Fp8GateProj(weight, layout)) is True
    hidden_big = torch.randn(big, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
    attn_big = torch.randn(big, n, generator=gen, device="cuda").to(torch.bfloat16)
    with torch.no_grad():
        got = mixed(hidden_big, layer, attn_big)
        torch.cuda.synchronize()
    assert gatejit.launch_count() == before + 2, "an fp8 batch above FP8_FUSED_MAX_M must not launch gatejit"
    with torch.no_grad():
        assert torch.equal(got, attn_big * torch.sigmoid(layer(hidden_big)))


def _torch_group_quant(y):
    """Per-token-group quantisation written out here, on the CPU: the clamp in
    fp32 (max(amax, 1e-10f)), each division exact in float64 then rounded to
    fp32 (the IEEE fp32 quotient): s = amax / 448, q = e4m3(clamp(y / s)).
    Independent of the adapter's own torch fallback, which it checks."""
    t, n = y.shape
    g = y.double().cpu().reshape(t, n // 128, 128)
    amax = torch.clamp(g.abs().amax(-1).float(), min=1e-10)  # fp32, against fp32(1e-10)
    s = (amax.double() / 448.0).float()
    q = (g / s.double().unsqueeze(-1)).float().clamp(-448.0, 448.0).to(FP8)
    return q.reshape(t, n), s


@pytest.mark.skipif(FP8 is None, reason="this torch has no float8_e4m3fn")
@pytest.mark.parametrize("weight_kind", ["bf16", "fp8_block128"])
def test_quantised_fp8_out(gen, weight_kind):
    """quantised() for an fp8 o_proj: with fp8_out=True one gatejit kernel
    (eager and compiled) writes codes and scales that match the contract
    (every code and scale); without fp8_out, and for a layer gatejit does not
    serve, the gated values of __call__ are quantised in torch, bit for bit
    as the contract's arithmetic written out in the test."""
    torch._dynamo.reset()
    n, tokens = 1536, 4
    weight = torch.randn(n, HIDDEN, generator=gen, device="cuda") * (2.0 / HIDDEN ** 0.5)
    if weight_kind == "bf16":
        layer = torch.nn.Linear(HIDDEN, n, bias=False).to("cuda", torch.bfloat16).requires_grad_(False)
        layer.weight.copy_(weight.to(torch.bfloat16))
        ref_weight, ref_scale = layer.weight, None
    else:
        layer = Fp8GateProj(weight, "block128")
        ref_weight, ref_scale = layer.q, layer.reference_scale
    gate = GatejitOutputGate(capture_sizes=[tokens], fp8_out=True)
    assert gate.prepare(layer) is True and getattr(layer, FP8_OUT_ATTRIBUTE) is True
    hidden = torch.randn(tokens, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
    attn = torch.randn(tokens, n, generator=gen, device="cuda").to(torch.bfloat16)
    attn_before = attn.clone()
    compiled_fn = torch.compile(lambda h, a: gate.quantised(h, layer, a), fullgraph=True)
    with torch.no_grad():
        compiled_fn(hidden, attn)  # compiles; the profiled call below replays the compiled code
        torch.cuda.synchronize()
    before = gatejit.launch_count()
    with torch.no_grad():
        with profile(activities=[ProfilerActivity.CUDA]) as prof_eager:
            eager = gate.quantised(hidden, layer, attn)
            torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof_compiled:
            compiled = compiled_fn(hidden, attn)
            torch.cuda.synchronize()
    assert gatejit.launch_count() == before + 2, "each quantised() call must be one gatejit launch"
    # One kernel, gatejit's fp8 out, eager and compiled: not a 16-bit gate
    # kernel followed by torch's quantisation.
    for what, prof in (("eager", prof_eager), ("compiled", prof_compiled)):
        kernels = [e.name for e in prof.events() if str(e.device_type).endswith("CUDA")]
        assert len(kernels) == 1 and "_ofp8_e4m3_per_token_group128" in kernels[0], (what, kernels)
    assert torch.equal(attn, attn_before), "quantised() must leave attn_output as it is"
    for what, (q, s) in (("eager", eager), ("compiled", compiled)):
        assert q.dtype == FP8 and tuple(q.shape) == (tokens, n)
        assert s.dtype == torch.float32 and tuple(s.shape) == (tokens, n // 128)
        assert_fp8_out_matches(q, s, hidden, ref_weight, attn, "sigmoid", gen, f"adapter fp8 out {weight_kind} {what}",
                               weight_scale=ref_scale)

    # Without fp8_out: __call__'s fused values, quantised in torch (the
    # unfused path), equal to the contract's arithmetic written out here.
    plain_gate = GatejitOutputGate(capture_sizes=[tokens])
    other = copy.deepcopy(layer)
    assert plain_gate.prepare(other) is True and getattr(other, FP8_OUT_ATTRIBUTE) is False
    with torch.no_grad():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            q, s = plain_gate.quantised(hidden, other, attn)
            torch.cuda.synchronize()
        gated = plain_gate(hidden, other, attn)
        torch.cuda.synchronize()
    kernels = [e.name for e in prof.events() if str(e.device_type).endswith("CUDA")]
    assert [k for k in kernels if k.startswith("gatejit_")] and not [k for k in kernels if "_ofp8" in k], kernels
    q_ref, s_ref = _torch_group_quant(gated)
    assert torch.equal(s.cpu(), s_ref), "torch fallback: scales differ from the contract's arithmetic"
    assert torch.equal(q.cpu().view(torch.uint8), q_ref.view(torch.uint8)), "torch fallback: codes differ"
    q2, s2 = quantise_per_token_group(gated)
    assert torch.equal(q2.view(torch.uint8), q.view(torch.uint8)) and torch.equal(s2, s)

    # A biased layer: the existing expression, quantised in torch; nothing launched.
    biased = torch.nn.Linear(HIDDEN, n, bias=True).to("cuda", torch.bfloat16).requires_grad_(False)
    assert gate.prepare(biased) is False and getattr(biased, FP8_OUT_ATTRIBUTE) is False
    count = gatejit.launch_count()
    with torch.no_grad():
        q, s = gate.quantised(hidden, biased, attn)
        q_ref, s_ref = _torch_group_quant(attn * torch.sigmoid(biased(hidden)))
    assert gatejit.launch_count() == count
    assert torch.equal(s.cpu(), s_ref) and torch.equal(q.cpu().view(torch.uint8), q_ref.view(torch.uint8))

    # N not a multiple of 128: __call__ stays fused, the fp8 out does not apply.
    odd = torch.nn.Linear(HIDDEN, 1000, bias=False).to("cuda", torch.bfloat16).requires_grad_(False)
    assert gate.prepare(odd) is True and getattr(odd, FP8_OUT_ATTRIBUTE) is False
    with pytest.raises(ValueError, match="N = 1000"):
        gate.quantised(hidden, odd, torch.randn(tokens, 1000, generator=gen, device="cuda").to(torch.bfloat16))
