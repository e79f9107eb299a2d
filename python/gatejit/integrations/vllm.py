"""gatejit at vLLM's MLA output-gate seam (importable without vLLM).

The seam (vLLM PR #50664): the MLA attention module takes an optional
output-gate callback,

    gated = output_gate(hidden_states, gate_proj, attn_output)

whose default is the existing expression ``attn_output *
sigmoid(gate_proj(hidden_states))``, and an adapter installs a fused one.
:class:`GatejitOutputGate` is that callback: the fused gatejit op where gatejit
can serve the layer, the existing expression otherwise (a projection quantised
other than as below, or biased; unsupported device, dtype or layout; no kernel
for the shape).

fp8 projections (vLLM's fp8 linear methods, ``fp8_weights=True``, the
default): a torch.float8_e4m3fn weight [N, K] (or its transpose [K, N], as
vLLM keeps it for cutlass) with float32 scales, found as ``weight_scale_inv``
(block-quantised: [ceil(N/128), ceil(K/128)], weight_block_size [128, 128])
or ``weight_scale`` (per channel [N, 1] / [N]; per tensor, one per logical
shard, expanded once at prepare to [N, 1] and kept on the module as the
buffer ``gatejit_weight_scale``). gatejit then computes with the activations
as they are (bf16/f16) and the dequantised weight, where vLLM's own fp8 path
also quantises the activations to fp8: the fused values are the more exact
ones, not bit-equal to the existing expression. Scales in any other form
(DeepGEMM's transposed or UE8M0 layouts, Marlin repacking, e4m3fnuz) keep the
existing expression.

fp8 out (``fp8_out=True``): where the next projection (o_proj) takes fp8
input quantised per token group of 128 columns, :meth:`GatejitOutputGate.quantised`
returns the gated values already quantised, ``(q, scales)`` as vLLM's
``per_token_group_quant_fp8(gated, 128)`` lays them out (q float8_e4m3fn [T, N],
scales float32 [T, N / 128]), from one gatejit kernel (docs/contract.md,
"fp8 out"). Where that kernel does not serve, it quantises the gated values
of ``__call__`` with the same arithmetic in torch.

Measured routing (``measure=True``): ``prepare`` also times, for each
capture size, the fused path against the fallback on this device (CUDA
graphs over rotating copies of the projection, :mod:`gatejit.routing`) and
keeps the faster per size; a size never measured follows the smallest
measured size above it (else the largest). The decisions, with both times,
are on the projection (attribute ``gatejit_routes``) and in
:meth:`GatejitOutputGate.decision_record`. Layers of one shape are measured
once per adapter.

Decide and warm up at model load, eagerly, before ``torch.compile`` traces
the model and before CUDA graph capture::

    gate = GatejitOutputGate(capture_sizes=engine_batch_sizes)
    for layer in mla_layers:
        gate.prepare(layer.gate_proj)       # -> True when the fused path is taken
    mla_modules.output_gate = gate

``prepare`` stores its decision on the projection module (attribute
``gatejit_output_gate``), where the compiled forward reads it as a constant.
A projection never prepared takes the existing expression inside a compiled
region (the runtime cannot be asked while tracing) and is prepared on its
first eager call. Per call, the fused path also needs 2-D packed (contiguous)
``hidden_states`` [T, K] and ``attn_output`` [T, N] of the weight's dtype and
device; anything else takes the existing expression.
"""

from __future__ import annotations

import copy
from typing import Callable, Dict, Iterable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import ops, routing
from .._call import OUT_GROUP as _OUT_GROUP  # columns of an fp8 out that share a scale
from .._support import prepare_for, supports_shape

__all__ = ["GatejitOutputGate", "project", "quantise_per_token_group", "DECISION_ATTRIBUTE", "FP8_OUT_ATTRIBUTE",
           "ROUTES_ATTRIBUTE", "SCALE_ATTRIBUTE"]

#: The attribute ``prepare`` sets on a gate projection: True (fused) or False.
DECISION_ATTRIBUTE = "gatejit_output_gate"
#: For an fp8 projection taking the fused path: (the name of the module
#: attribute holding the scales gatejit is given: ``weight_scale_inv``,
#: ``weight_scale``, or ``gatejit_weight_scale`` for expanded per-tensor
#: scales; the activations' dtype prepared: the layer's ``orig_dtype``, else bf16).
SCALE_ATTRIBUTE = "gatejit_fp8"
#: The attribute ``prepare`` sets with ``fp8_out=True``: whether :meth:`quantised`
#: takes gatejit's fp8-out kernel (True) or quantises in torch (False).
FP8_OUT_ATTRIBUTE = "gatejit_output_gate_fp8_out"
#: With ``measure=True``: {M: gatejit.routing.RouteDecision} for the capture sizes measured.
ROUTES_ATTRIBUTE = "gatejit_routes"
_EXPANDED_SCALE = "gatejit_weight_scale"
_FP8 = getattr(torch, "float8_e4m3fn", None)
# Batches up to this M take gatejit's fp8 kernel (the gemv or the mma). On
# the H200 (research/benchmarks.md, v57) M = 32 took 11.2-11.6 µs against 19.4 for
# torch.compile's dequantise + expression; at M = 64 the two were level, so
# larger batches keep vLLM's own fp8 GEMM.
FP8_FUSED_MAX_M = 32
_SCALE_BLOCK = 128
_FP8_MAX = 448.0

_ACTIVATIONS = {"sigmoid": torch.sigmoid, "silu": F.silu}
_FUSED_DTYPES = (torch.bfloat16, torch.float16)


def project(gate_proj: nn.Module, hidden_states: Tensor) -> Tensor:
    """``gate_proj(hidden_states)``; vLLM's linear layers return (output, bias)."""
    y = gate_proj(hidden_states)
    return y[0] if isinstance(y, tuple) else y


def _plain_weight(gate_proj: nn.Module) -> Optional[Tensor]:
    """The projection's weight when gatejit can use it as is: an unquantised
    [N, K] bf16/f16 CUDA tensor with contiguous rows, and no bias; else None."""
    weight = getattr(gate_proj, "weight", None)
    if not isinstance(weight, Tensor) or getattr(gate_proj, "bias", None) is not None:
        return None
    method = getattr(gate_proj, "quant_method", None)
    if method is not None and type(method).__name__ != "UnquantizedLinearMethod":
        return None
    if weight.dtype not in _FUSED_DTYPES or weight.dim() != 2 or not weight.is_cuda or not weight.is_contiguous():
        return None
    return weight


def _weight_nk(weight: Tensor) -> Tensor:
    """An fp8 weight as [N, K] with contiguous rows: vLLM keeps the fp8
    weights of its per-tensor/per-channel methods transposed ([K, N], column-major)."""
    return weight if weight.stride(-1) == 1 else weight.t()


def _fp8_weight(gate_proj: nn.Module):
    """(weight [N, K], scale name, scale tensor to register or None) when the
    projection is an fp8 e4m3 layer gatejit can take with its scales; else None."""
    weight = getattr(gate_proj, "weight", None)
    if (_FP8 is None or not isinstance(weight, Tensor) or weight.dtype != _FP8 or weight.dim() != 2
            or not weight.is_cuda or getattr(gate_proj, "bias", None) is not None):
        return None
    weight = _weight_nk(weight)
    if not weight.is_contiguous():
        return None
    n, k = int(weight.shape[0]), int(weight.shape[1])
    partition = getattr(gate_proj, "output_size_per_partition", None)
    if isinstance(partition, int) and partition != n:
        return None  # the transpose guess disagrees with the layer's own sizes
    block = getattr(gate_proj, "weight_block_size", None)
    if block is None:
        config = getattr(getattr(gate_proj, "quant_method", None), "quant_config", None)
        block = getattr(config, "weight_block_size", None)
    for name in ("weight_scale_inv", "weight_scale"):
        scale = getattr(gate_proj, name, None)
        if not isinstance(scale, Tensor):
            continue
        if scale.dtype != torch.float32 or scale.device != weight.device or not scale.is_contiguous():
            return None
        shape = tuple(scale.shape)
        block_shape = (-(-n // _SCALE_BLOCK), -(-k // _SCALE_BLOCK))
        if block is not None:  # block-quantised: 128 x 128 blocks only
            if list(block) != [_SCALE_BLOCK, _SCALE_BLOCK] or shape != block_shape:
                return None
            return weight, name, None
        if shape in ((n,), (n, 1)):
            return weight, name, None
        if scale.numel() == 1 or (scale.dim() == 1 and n > 1 and scale.numel() < n):
            # per tensor, or one per logical shard of a merged layer: one per channel
            widths = getattr(gate_proj, "logical_widths", None)
            if scale.numel() == 1:
                expanded = scale.reshape(1, 1).expand(n, 1).contiguous()
            elif widths is not None and len(widths) == scale.numel() and sum(widths) == n:
                expanded = torch.repeat_interleave(scale.reshape(-1), torch.tensor(widths, device=scale.device))
                expanded = expanded.reshape(n, 1).contiguous()
            else:
                return None
            return weight, _EXPANDED_SCALE, expanded
        if shape == block_shape and n > _SCALE_BLOCK:
            return weight, name, None  # block scales without a declared block size (e.g. a plain module)
        return None
    return None


def quantise_per_token_group(y: Tensor) -> "tuple[Tensor, Tensor]":
    """``y`` [T, N] quantised per token group of 128 columns with gatejit's fp8-out
    arithmetic (docs/contract.md): in fp32, ``s = max(amax, 1e-10) / 448`` and
    ``q = e4m3(clamp(y / s, -448, 448))``, both IEEE divisions when run
    eagerly. vLLM's Triton ``per_token_group_quant_fp8`` computes the same
    expressions with Triton's division, which is not correctly rounded, and
    so may this function inside ``torch.compile`` (Inductor emits Triton): a
    scale or code one ulp apart in some groups. Returns (q float8_e4m3fn
    [T, N], s float32 [T, N / 128])."""
    if _FP8 is None:
        raise RuntimeError("this torch has no float8_e4m3fn")
    t, n = y.shape
    if n % _OUT_GROUP:
        raise ValueError(f"N = {n}: an fp8 out quantised per token group needs N a multiple of {_OUT_GROUP}")
    groups = y.float().reshape(t, n // _OUT_GROUP, _OUT_GROUP)
    amax = torch.clamp(groups.abs().amax(-1), min=1e-10)
    # Tensor by tensor: a CUDA tensor divided by a Python scalar is multiplied
    # by its reciprocal, one ulp off the IEEE division in about half the groups.
    scale = amax / torch.full_like(amax, _FP8_MAX)
    q = (groups / scale.unsqueeze(-1)).clamp(-_FP8_MAX, _FP8_MAX).to(_FP8)
    return q.reshape(t, n), scale


class GatejitOutputGate:
    """The output-gate callback with gatejit's fused kernel behind it.

    Args:
        capture_sizes: the batch sizes (token counts T) the engine captures in
            CUDA graphs; ``prepare`` resolves each before capture.
        act: "sigmoid" (the MLA gate) or "silu"; the fallback uses the same.
        rounding: "boundary" (the existing expression's roundings) or "fused".
        in_place: write the gated values into ``attn_output`` (and return it)
            instead of a new tensor.
        fallback: the existing expression, ``(hidden_states, gate_proj,
            attn_output) -> Tensor``; default: ``attn * act(gate_proj(hidden))``.
        fp8_weights: serve fp8 e4m3 projections with their scales (see the
            module docstring); False keeps the existing expression for them.
        fp8_out: also prepare gatejit's fp8-out kernels for :meth:`quantised`
            (the gated values quantised per token group for an fp8 o_proj).
        measure: time the fused path against the fallback for each capture
            size at ``prepare`` and keep the faster per size (module docstring).
    """

    def __init__(self, capture_sizes: Iterable[int] = (1,), *, act: str = "sigmoid", rounding: str = "boundary",
                 in_place: bool = False, fallback: Optional[Callable[[Tensor, nn.Module, Tensor], Tensor]] = None,
                 fp8_weights: bool = True, fp8_out: bool = False, measure: bool = False):
        if act not in _ACTIVATIONS:
            raise ValueError(f"act = {act!r}: allowed are 'sigmoid', 'silu'")
        self.capture_sizes = sorted({int(m) for m in capture_sizes})
        self.act = act
        self.rounding = rounding
        self.in_place = in_place
        self.fp8_weights = fp8_weights
        self.fp8_out = fp8_out
        self.fallback = fallback if fallback is not None else self._existing_expression
        self.measure = measure
        self._measured: Dict[tuple, routing.RouteDecision] = {}  # one measurement per layer shape and size

    def _existing_expression(self, hidden_states: Tensor, gate_proj: nn.Module, attn_output: Tensor) -> Tensor:
        return attn_output * _ACTIVATIONS[self.act](project(gate_proj, hidden_states))

    def prepare(self, gate_proj: nn.Module, capture_sizes: Optional[Iterable[int]] = None) -> bool:
        """Decides, at model load, whether this projection takes the fused path,
        and resolves the kernel of every capture size on the current stream
        (run it on the stream that will be captured). Returns the decision,
        also stored on ``gate_proj`` as ``gatejit_output_gate``. An unsupported
        layer keeps the existing expression (False); GatejitError is raised only
        when a kernel gatejit has fails to load."""
        sizes = sorted({int(m) for m in capture_sizes}) if capture_sizes is not None else self.capture_sizes
        weight = _plain_weight(gate_proj)
        fused = False
        taken = None  # the fused path's (sizes, n, k, dtype, device, weight kwargs), for the fp8 out
        if weight is not None and sizes:
            n, k = int(weight.shape[0]), int(weight.shape[1])
            device = weight.device
            if all(supports_shape(m, n, k, weight.dtype, self.act, self.rounding, device=device) for m in sizes):
                prepare_for(sizes, n, k, weight.dtype, self.act, self.rounding, device=device)
                fused = True
                taken = (sizes, n, k, weight.dtype, device, {})
        fp8 = _fp8_weight(gate_proj) if weight is None and self.fp8_weights and sizes else None
        if fp8 is not None:
            weight, scale_name, expanded = fp8
            scale = expanded if expanded is not None else getattr(gate_proj, scale_name)
            n, k = int(weight.shape[0]), int(weight.shape[1])
            device = weight.device
            # The activations' dtype: the layer's own (vLLM keeps it as orig_dtype), else bf16.
            dtype = getattr(gate_proj, "orig_dtype", torch.bfloat16)
            sizes = [m for m in sizes if m <= FP8_FUSED_MAX_M]
            if sizes and dtype in _FUSED_DTYPES and all(
                    supports_shape(m, n, k, dtype, self.act, self.rounding, device=device, weight_dtype=_FP8,
                                   weight_scale=scale) for m in sizes):
                prepare_for(sizes, n, k, dtype, self.act, self.rounding, device=device, weight_dtype=_FP8,
                            weight_scale=scale)
                if expanded is not None:
                    gate_proj.register_buffer(_EXPANDED_SCALE, expanded, persistent=False)
                setattr(gate_proj, SCALE_ATTRIBUTE, (scale_name, dtype))
                fused = True
                taken = (sizes, n, k, dtype, device, {"weight_dtype": _FP8, "weight_scale": scale})
        if not fused and hasattr(gate_proj, SCALE_ATTRIBUTE):
            delattr(gate_proj, SCALE_ATTRIBUTE)
        setattr(gate_proj, DECISION_ATTRIBUTE, fused)
        if hasattr(gate_proj, ROUTES_ATTRIBUTE):
            delattr(gate_proj, ROUTES_ATTRIBUTE)
        if fused and self.measure:
            setattr(gate_proj, ROUTES_ATTRIBUTE, self._measure_routes(gate_proj, taken))
        # The fp8 out: the same contracts with out quantised per token group.
        fp8_out = False
        if self.fp8_out and taken is not None and _FP8 is not None:
            sizes, n, k, dtype, device, wkw = taken
            if n % _OUT_GROUP == 0 and all(
                    supports_shape(m, n, k, dtype, self.act, self.rounding, device=device, out_dtype=_FP8, **wkw)
                    for m in sizes):
                prepare_for(sizes, n, k, dtype, self.act, self.rounding, device=device, out_dtype=_FP8, **wkw)
                fp8_out = True
        setattr(gate_proj, FP8_OUT_ATTRIBUTE, fp8_out)
        return fused

    def _measure_routes(self, gate_proj: nn.Module, taken) -> Dict[int, routing.RouteDecision]:
        """{M: decision} for each prepared size: the fused path against the fallback, timed."""
        sizes, n, k, dtype, device, wkw = taken
        scale = wkw.get("weight_scale")
        kind = (n, k, dtype, gate_proj.weight.dtype, None if scale is None else tuple(scale.shape), self.act,
                self.rounding, self.fallback)
        decisions = {}
        copies = None
        for m in sizes:
            decision = self._measured.get((kind, m))
            if decision is None:
                if copies is None:  # rotating copies of the layer, so that each call reads its weight from HBM
                    layer_bytes = sum(t.numel() * t.element_size() for t in (*gate_proj.parameters(),
                                                                             *gate_proj.buffers()))
                    copies = [gate_proj] + [copy.deepcopy(gate_proj) for _ in
                                            range(routing.rotating_sets(layer_bytes) - 1)]
                decision = self._time_size(copies, m, n, k, dtype, device)
                self._measured[(kind, m)] = decision
            decisions[m] = decision
        return decisions

    def _time_size(self, copies, m: int, n: int, k: int, dtype, device) -> routing.RouteDecision:
        sets = len(copies)
        gen = torch.Generator(device=device)
        gen.manual_seed(m)
        hidden = [torch.randn(m, k, generator=gen, device=device).to(dtype) for _ in range(sets)]
        attn = [torch.randn(m, n, generator=gen, device=device).to(dtype) for _ in range(sets)]

        def fused(i):
            weight, scale = self._fused_operands(hidden[i], copies[i], attn[i], routed=False)
            return ops.gate_epilogue(hidden[i], weight, attn[i], None, self.act, self.rounding, weight_scale=scale)
        fused_us, fallback_us = routing.time_two_paths(
            fused, lambda i: self.fallback(hidden[i], copies[i], attn[i]), sets, device)
        return routing.decide(m, n, k, fused_us, fallback_us, "fallback", device)

    @staticmethod
    def decision_record(gate_proj: nn.Module) -> dict:
        """What ``prepare`` decided for this projection: whether gatejit serves
        it, its fp8 out, and with ``measure=True`` the path per measured size
        with both times (µs per call)."""
        routes = getattr(gate_proj, ROUTES_ATTRIBUTE, None) or {}
        return {"fused": bool(getattr(gate_proj, DECISION_ATTRIBUTE, False)),
                "fp8_out": bool(getattr(gate_proj, FP8_OUT_ATTRIBUTE, False)),
                "routes": {m: d.as_dict() for m, d in sorted(routes.items())}}

    @staticmethod
    def _route_takes_gatejit(gate_proj: nn.Module, m) -> bool:
        routes = getattr(gate_proj, ROUTES_ATTRIBUTE, None)
        if not routes:
            return True
        paths = {d.takes_gatejit for d in routes.values()}
        if len(paths) == 1:  # one path for every size: no branch on M (nothing to specialise when tracing)
            return paths.pop()
        if isinstance(m, torch.SymInt):
            # A dynamic batch size under torch.compile: one graph serves every M,
            # so one path: the smallest size's (decode). Static compile sizes route per size.
            return routes[min(routes)].takes_gatejit
        return routing.covering(routes, int(m)).takes_gatejit

    def _fused_operands(self, hidden_states: Tensor, gate_proj: nn.Module, attn_output: Tensor, routed: bool = True):
        """(weight [N, K], weight scales or None) where this call takes the
        fused path prepared for `gate_proj`; None where it takes the existing
        expression (`routed`: as the measured routes decide for its M)."""
        fused = getattr(gate_proj, DECISION_ATTRIBUTE, None)
        if fused is None:
            fused = False if torch.compiler.is_compiling() else self.prepare(gate_proj)
        if not fused:
            return None
        if routed and not self._route_takes_gatejit(gate_proj, hidden_states.shape[0]):
            return None
        weight = gate_proj.weight
        fp8 = getattr(gate_proj, SCALE_ATTRIBUTE, None)
        scale = None
        if fp8 is not None:  # the weight as [N, K], its scales, the activations' dtype prepared
            scale_name, dtype = fp8
            weight = _weight_nk(weight)
            scale = getattr(gate_proj, scale_name)
            dtype_ok = hidden_states.dtype == dtype and hidden_states.shape[0] <= FP8_FUSED_MAX_M
        else:
            dtype_ok = hidden_states.dtype == weight.dtype
        if (hidden_states.dim() == 2 and attn_output.dim() == 2
                and dtype_ok and attn_output.dtype == hidden_states.dtype
                and hidden_states.device == weight.device and attn_output.device == weight.device
                and hidden_states.shape[1] == weight.shape[1] and attn_output.shape[1] == weight.shape[0]
                and hidden_states.shape[0] == attn_output.shape[0]
                and hidden_states.is_contiguous() and attn_output.is_contiguous()):
            return weight, scale
        return None

    def __call__(self, hidden_states: Tensor, gate_proj: nn.Module, attn_output: Tensor) -> Tensor:
        operands = self._fused_operands(hidden_states, gate_proj, attn_output)
        if operands is not None:
            weight, scale = operands
            out = attn_output if self.in_place else None
            return ops.gate_epilogue(hidden_states, weight, attn_output, out, self.act, self.rounding,
                                     weight_scale=scale)
        if self.in_place:
            gated = self.fallback(hidden_states, gate_proj, attn_output)
            attn_output.copy_(gated)
            return attn_output
        return self.fallback(hidden_states, gate_proj, attn_output)

    def quantised(self, hidden_states: Tensor, gate_proj: nn.Module, attn_output: Tensor) -> "tuple[Tensor, Tensor]":
        """The gated values quantised per token group for an fp8 o_proj: (q
        float8_e4m3fn [T, N], scales float32 [T, N / 128]), vLLM's
        ``per_token_group_quant_fp8(self(...), 128)``. One gatejit kernel where
        ``prepare`` (with ``fp8_out=True``) took the fp8 out for this
        projection; otherwise ``__call__``'s values quantised in torch
        (:func:`quantise_per_token_group`). attn_output is left as it is
        (``in_place`` applies to ``__call__`` only)."""
        operands = self._fused_operands(hidden_states, gate_proj, attn_output)
        if operands is not None and getattr(gate_proj, FP8_OUT_ATTRIBUTE, False):
            weight, scale = operands
            t, n = attn_output.shape
            q = torch.empty(t, n, dtype=_FP8, device=attn_output.device)
            scales = torch.empty(t, n // _OUT_GROUP, dtype=torch.float32, device=attn_output.device)
            ops.gate_epilogue(hidden_states, weight, attn_output, q, self.act, self.rounding, weight_scale=scale,
                              out_scale=scales)
            return q, scales
        if operands is not None:
            weight, scale = operands
            gated = ops.gate_epilogue(hidden_states, weight, attn_output, None, self.act, self.rounding,
                                      weight_scale=scale)
        else:
            gated = self.fallback(hidden_states, gate_proj, attn_output)
        return quantise_per_token_group(gated)
