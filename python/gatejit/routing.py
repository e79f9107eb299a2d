"""Measured routing: a call takes gatejit's kernel only where it is faster
than the expression it replaces, on this device.

``gatejit.prepare_for(..., measure=True)`` and the vLLM adapter's
``GatejitOutputGate(measure=True)`` time, for each M, gatejit's kernel and the
replaced path (for prepare_for: torch's unfused ``attn * act(hidden @
weight.T)``; for the adapter: its fallback, the layer's own expression) in
CUDA graphs over rotating operands, the benchmarks' method
(:mod:`gatejit.graph_timing`), and keep the faster. The decision keeps both
times: ``explain`` reports it, and the adapter keeps a record per layer.

The times are this process's, on this card: on an MI355X the same call
decides by MI355X times. A decision never changes inside a CUDA graph: it is
taken before capture, and a captured graph replays the path it captured.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Dict

from .graph_timing import GraphTimer, rotating_sets  # noqa: F401 (rotating_sets: for the adapter)

GATEJIT = "gatejit"

#: Timed replays per path and measurement; each path is measured twice,
#: alternating, and keeps its lower median (clock drift between the two arms
#: then favours neither).
_BUDGET_S = 0.05
_MAX_REPS = 20


@dataclass(frozen=True)
class RouteDecision:
    """Which path one contract's calls take and the times that decided it (µs per call, measured)."""

    m: int
    n: int
    k: int
    path: str            # "gatejit" or `replaced`
    gatejit_us: float
    replaced_us: float
    replaced: str        # what gatejit was timed against: "torch" (the unfused expression) or "fallback"
    device: str

    @property
    def takes_gatejit(self) -> bool:
        return self.path == GATEJIT

    def describe(self) -> str:
        return (f"measured routing: {self.path} (gatejit {self.gatejit_us:.2f} us, {self.replaced} "
                f"{self.replaced_us:.2f} us per call at M={self.m} N={self.n} K={self.k} on {self.device}, "
                "CUDA graphs over rotating operands)")

    def as_dict(self) -> Dict[str, object]:
        return asdict(self)


def unfused_expression(act: str) -> Callable:
    """torch's unfused gate, writing into `out`: the three kernels gatejit replaces."""
    import torch
    import torch.nn.functional as F
    activation = {"sigmoid": torch.sigmoid, "silu": F.silu}[act]

    def call(hidden, weight, attn, out):
        torch.mul(attn, activation(F.linear(hidden, weight)), out=out)
    return call


def time_two_paths(fused: Callable[[int], object], replaced: Callable[[int], object], sets: int,
                   device) -> "tuple[float, float]":
    """(fused µs, replaced µs) per call: fused(i) and replaced(i) over `sets` operand sets, in CUDA graphs."""
    import torch
    timer = GraphTimer(torch, device, budget_s=_BUDGET_S, max_reps=_MAX_REPS)
    timer.warm_clocks()
    fused_us, replaced_us = float("inf"), float("inf")
    for _ in range(2):
        fused_us = min(fused_us, timer.measure(fused, sets)[0])
        replaced_us = min(replaced_us, timer.measure(replaced, sets)[0])
    return fused_us, replaced_us


def decide(m: int, n: int, k: int, gatejit_us: float, replaced_us: float, replaced: str, device) -> RouteDecision:
    """The faster path (gatejit on a tie)."""
    import torch
    path = GATEJIT if gatejit_us <= replaced_us else replaced
    return RouteDecision(m, n, k, path, round(gatejit_us, 3), round(replaced_us, 3), replaced,
                         torch.cuda.get_device_name(device))


def measure_against_torch(launch: Callable, m: int, n: int, k: int, dtype, act: str, device) -> RouteDecision:
    """Times launch(hidden, weight, attn, out) (gatejit, already prepared) against the unfused torch
    expression on fresh packed operands of one contract (plain weights)."""
    import torch
    size = torch.empty((), dtype=dtype).element_size()
    sets = rotating_sets(size * (m * k + n * k + 2 * m * n))
    gen = torch.Generator(device=device)
    gen.manual_seed(m * 1_000_003 + n * 1009 + k)

    def rand(*shape, scale=1.0):
        return (torch.randn(*shape, generator=gen, device=device) * scale).to(dtype)
    hidden = [rand(m, k) for _ in range(sets)]
    weight = [rand(n, k, scale=k ** -0.5) for _ in range(sets)]
    attn = [rand(m, n) for _ in range(sets)]
    out = [torch.empty(m, n, dtype=dtype, device=device) for _ in range(sets)]
    torch_call = unfused_expression(act)
    fused_us, torch_us = time_two_paths(lambda i: launch(hidden[i], weight[i], attn[i], out[i]),
                                        lambda i: torch_call(hidden[i], weight[i], attn[i], out[i]), sets, device)
    return decide(m, n, k, fused_us, torch_us, "torch", device)


def covering(decisions: Dict[int, RouteDecision], m: int) -> RouteDecision:
    """The decision for M: its own, else the smallest measured M above it (the
    bucket a dynamic-M engine would use), else the largest measured."""
    if m in decisions:
        return decisions[m]
    above = [x for x in decisions if x >= m]
    return decisions[min(above) if above else max(decisions)]
