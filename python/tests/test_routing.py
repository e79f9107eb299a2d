"""Measured routing (gatejit.routing): prepare_for(measure=True) and the vLLM
adapter's measure=True keep, per M, the faster of gatejit's kernel and the
path it replaces, and every later call (eager or replayed from a CUDA graph)
takes that path.

Two kinds of test: with the timing replaced by fixed numbers, so that the
decision is known and the test sees each path really taken (gatejit's launch
count, the kernels a graph replay ran, the values); and with the real
measurement on this GPU, where the test checks the decision against its own
times and the path against the decision. No test asserts a speed.
"""

from __future__ import annotations

import copy

import pytest

from gpu_prerequisites import require

torch, gatejit = require("the measured routing tests")
import torch.nn.functional as F  # noqa: E402

from gatejit import routing  # noqa: E402
from gatejit._support import packed_args  # noqa: E402
from gatejit.integrations.vllm import ROUTES_ATTRIBUTE, GatejitOutputGate  # noqa: E402
from gate_reference import assert_matches  # noqa: E402
from graph_replay import replay_kernels  # noqa: E402
from mla_module import TinyMLAAttention  # noqa: E402

N, K = 1536, 7168


def operands(m, gen, dtype=torch.bfloat16):
    hidden = torch.randn(m, K, generator=gen, device="cuda").to(dtype)
    weight = (torch.randn(N, K, generator=gen, device="cuda") / K ** 0.5).to(dtype)
    attn = torch.randn(m, N, generator=gen, device="cuda").to(dtype)
    return hidden, weight, attn


def unfused(hidden, weight, attn):
    return attn * torch.sigmoid(F.linear(hidden, weight))


def fixed_times(monkeypatch, *pairs):
    """routing.time_two_paths returns these (gatejit µs, replaced µs), one pair per measurement."""
    left = list(pairs)

    def fake(fused, replaced, sets, device):
        fused(0)  # the arms must be callable as the real timing calls them
        replaced(0)
        return left.pop(0)
    monkeypatch.setattr(routing, "time_two_paths", fake)
    return left


def runs_gatejit(rt, call) -> bool:
    before = rt.launch_count
    call()
    torch.cuda.synchronize()
    return rt.launch_count > before


def test_a_measured_loss_routes_calls_to_the_unfused_expression(monkeypatch, gen):
    with gatejit.Runtime() as rt:
        left = fixed_times(monkeypatch, (2.0, 1.0), (1.0, 2.0))
        explained = gatejit.prepare_for([4, 16], N, K, torch.bfloat16, runtime=rt, measure=True)
        assert not left
        assert explained[4].startswith("measured routing: torch (gatejit 2.00 us, torch 1.00 us"), explained[4]
        assert explained[16].startswith("measured routing: gatejit (gatejit 1.00 us, torch 2.00 us"), explained[16]

        hidden, weight, attn = operands(4, gen)
        out = torch.full_like(attn, float("nan"))
        assert not runs_gatejit(rt, lambda: rt.gate_epilogue(hidden, weight, attn, out=out))
        assert torch.equal(out, unfused(hidden, weight, attn)), "M=4 should be torch's unfused values"
        assert "measured routing: torch" in rt.explain(hidden, weight, attn)

        # In a CUDA graph: the captured path is the decided one.
        out.fill_(float("nan"))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            rt.gate_epilogue(hidden, weight, attn, out=out)
        hidden.copy_(torch.randn(4, K, generator=gen, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, unfused(hidden, weight, attn)), "the replay should run the unfused expression"

        hidden, weight, attn = operands(16, gen)
        out = torch.full_like(attn, float("nan"))
        assert runs_gatejit(rt, lambda: rt.gate_epilogue(hidden, weight, attn, out=out)), "M=16 won: gatejit"
        assert_matches(out, hidden, weight, attn, "sigmoid", gen, "M=16 routed to gatejit")

        # Measuring again replaces the decision (and drops the layouts built on the old one).
        fixed_times(monkeypatch, (1.0, 3.0))
        gatejit.prepare_for([4], N, K, torch.bfloat16, runtime=rt, measure=True)
        hidden, weight, attn = operands(4, gen)
        assert runs_gatejit(rt, lambda: rt.gate_epilogue(hidden, weight, attn))


def test_measured_on_this_gpu(gen):
    """The real measurement: the decision follows its own times, the calls follow the decision."""
    with gatejit.Runtime() as rt:
        explained = gatejit.prepare_for([1, 2048], N, K, torch.bfloat16, runtime=rt, measure=True)
        for m in (1, 2048):
            hidden, weight, attn = operands(m, gen)
            decision = rt._launcher.route(packed_args(m, N, K, torch.bfloat16, "sigmoid", "boundary", None))
            assert decision is not None and decision.m == m
            assert decision.gatejit_us > 0 and decision.replaced_us > 0, decision
            assert decision.takes_gatejit == (decision.gatejit_us <= decision.replaced_us), decision
            assert explained[m].startswith(f"measured routing: {decision.path} "), explained[m]
            out = torch.full_like(attn, float("nan"))
            took = runs_gatejit(rt, lambda: rt.gate_epilogue(hidden, weight, attn, out=out))
            assert took == decision.takes_gatejit, (m, decision)
            assert_matches(out, hidden, weight, attn, "sigmoid", gen, f"M={m} on the {decision.path} path")
            print(f"M={m}: {decision.describe()}")


def test_measure_is_refused_for_fp8():
    with pytest.raises(gatejit.GatejitArgumentError) as info:
        gatejit.prepare_for([1], N, K, torch.bfloat16, weight_dtype="fp8_e4m3", weight_scale="per_channel",
                            measure=True)
    assert info.value.argument == "measure" and "GatejitOutputGate(measure=True)" in str(info.value)




def test_measure_inside_a_capture_is_refused():
    gatejit.prepare_for([4], N, K, torch.bfloat16)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(gatejit.GatejitError, match="inside a CUDA graph capture"):
        with torch.cuda.graph(graph):
            gatejit.prepare_for([4], N, K, torch.bfloat16, measure=True)


def captured_block(block, tokens, gen):
    x = torch.randn(tokens, 7168, generator=gen, device="cuda").to(torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        block(x)
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        outputs = block(x)
    return graph, outputs


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed_times", "measured"])
def test_adapter_takes_the_path_its_record_names(monkeypatch, gen, fixed):
    sizes = [1, 4] if fixed else [1, 2048]
    if fixed:  # M=1: gatejit faster; M=4: the fallback faster
        fixed_times(monkeypatch, (1.0, 5.0), (5.0, 1.0))
    torch.manual_seed(gen.initial_seed() % (2 ** 31))
    block = TinyMLAAttention().to(device="cuda", dtype=torch.bfloat16).eval().requires_grad_(False)
    gate = GatejitOutputGate(capture_sizes=sizes, measure=True)
    with torch.no_grad():
        assert gate.prepare(block.gate_proj) is True
        record = gate.decision_record(block.gate_proj)
        assert sorted(record["routes"]) == sizes, record
        if fixed:
            assert record["routes"][1]["path"] == "gatejit" and record["routes"][4]["path"] == "fallback", record
        # A second layer of the same shape reuses the measurement (no more timing).
        twin = copy.deepcopy(block.gate_proj)
        delattr(twin, ROUTES_ATTRIBUTE)
        monkeypatch.setattr(routing, "time_two_paths", lambda *a: pytest.fail("measured the same shape twice"))
        gate.prepare(twin)
        assert gate.decision_record(twin)["routes"] == record["routes"]
        block.output_gate = gate
        for tokens in sizes:
            route = record["routes"][tokens]
            graph, (_, attn_output, gated) = captured_block(block, tokens, gen)
            kernels = replay_kernels(graph)
            took = any(k.startswith("gatejit_") for k in kernels)
            assert took == (route["path"] == "gatejit"), (tokens, route, sorted(set(kernels)))
            assert bool(torch.isfinite(gated).all())
            print(f"T={tokens}: {route['path']} (gatejit {route['gatejit_us']} us, fallback "
                  f"{route['replaced_us']} us); replay ran gatejit: {took}")
