"""gatejit at vLLM's MLA output-gate seam (importable without vLLM).

The seam (vLLM PR #50664): the MLA attention module takes an optional
output-gate callback,

    gated = output_gate(hidden_states, gate_proj, attn_output)

whose default is the existing expression ``attn_output *
sigmoid(gate_proj(hidden_states))``, and an adapter installs a fused one.
:class:`GatejitOutputGate` is that callback: the fused gatejit op where gatejit
can serve the layer, the existing expression otherwise (quantised or biased
projection, unsupported device, dtype or layout, no kernel for the shape).

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

from typing import Callable, Iterable, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import ops
from .._support import prepare_for, supports_shape

__all__ = ["GatejitOutputGate", "project", "DECISION_ATTRIBUTE"]

#: The attribute ``prepare`` sets on a gate projection: True (fused) or False.
DECISION_ATTRIBUTE = "gatejit_output_gate"

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
    """

    def __init__(self, capture_sizes: Iterable[int] = (1,), *, act: str = "sigmoid", rounding: str = "boundary",
                 in_place: bool = False, fallback: Optional[Callable[[Tensor, nn.Module, Tensor], Tensor]] = None):
        if act not in _ACTIVATIONS:
            raise ValueError(f"act = {act!r}: allowed are 'sigmoid', 'silu'")
        self.capture_sizes = sorted({int(m) for m in capture_sizes})
        self.act = act
        self.rounding = rounding
        self.in_place = in_place
        self.fallback = fallback if fallback is not None else self._existing_expression

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
        if weight is not None and sizes:
            n, k = int(weight.shape[0]), int(weight.shape[1])
            device = weight.device
            if all(supports_shape(m, n, k, weight.dtype, self.act, self.rounding, device=device) for m in sizes):
                prepare_for(sizes, n, k, weight.dtype, self.act, self.rounding, device=device)
                fused = True
        setattr(gate_proj, DECISION_ATTRIBUTE, fused)
        return fused

    def __call__(self, hidden_states: Tensor, gate_proj: nn.Module, attn_output: Tensor) -> Tensor:
        fused = getattr(gate_proj, DECISION_ATTRIBUTE, None)
        if fused is None:
            fused = False if torch.compiler.is_compiling() else self.prepare(gate_proj)
        if fused:
            weight = gate_proj.weight
            if (hidden_states.dim() == 2 and attn_output.dim() == 2
                    and hidden_states.dtype == weight.dtype and attn_output.dtype == weight.dtype
                    and hidden_states.device == weight.device and attn_output.device == weight.device
                    and hidden_states.shape[1] == weight.shape[1] and attn_output.shape[1] == weight.shape[0]
                    and hidden_states.shape[0] == attn_output.shape[0]
                    and hidden_states.is_contiguous() and attn_output.is_contiguous()):
                out = attn_output if self.in_place else None
                return ops.gate_epilogue(hidden_states, weight, attn_output, out, self.act, self.rounding)
        if self.in_place:
            gated = self.fallback(hidden_states, gate_proj, attn_output)
            attn_output.copy_(gated)
            return attn_output
        return self.fallback(hidden_states, gate_proj, attn_output)
