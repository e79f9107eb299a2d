"""The gate epilogue as torch custom operators, for torch.compile and CUDA graphs.

Three operators under the ``gatejit`` namespace, defined with
``torch.library.custom_op`` (schema inferred from the signatures below, a
real implementation for every device type that checks its arguments, and a
fake implementation for tracing, symbolic M included):

    torch.ops.gatejit.gate_epilogue(hidden, weight, attn, act="sigmoid", rounding="boundary") -> Tensor
        a new packed tensor with attn's shape, dtype and device;
    torch.ops.gatejit.gate_epilogue_out(hidden, weight, attn, out, act=..., rounding=...) -> ()
        writes into the caller's `out` (mutates `out` only);
    torch.ops.gatejit.gate_epilogue_inplace(hidden, weight, attn, act=..., rounding=...) -> ()
        writes into `attn` (mutates `attn` only).

:func:`gate_epilogue` picks one of them from ``out`` (None, ``attn`` itself,
another tensor); ``gatejit.gate_epilogue`` calls it. All of them launch on
the default runtime (``gatejit.default_runtime()``) on torch's current
stream. Not differentiable. Importing this module needs torch >= 2.4;
``import gatejit`` imports it when torch is already imported.
"""

# No "from __future__ import annotations": torch.library infers the schemas
# from these functions' annotations, which must be real types.
from typing import Optional

import torch
from torch import Tensor

from ._call import ACTIVATIONS, ROUNDINGS
from ._capi import GatejitArgumentError

if not hasattr(torch.library, "custom_op"):  # pragma: no cover - depends on the environment
    raise ImportError(f"gatejit.ops needs torch >= 2.4 (torch.library.custom_op); this is torch {torch.__version__}")

__all__ = ["gate_epilogue", "NAMESPACE", "OP_NAMES"]

NAMESPACE = "gatejit"
OP_NAMES = ("gate_epilogue", "gate_epilogue_out", "gate_epilogue_inplace")

_launcher = None


def _launch(hidden: Tensor, weight: Tensor, attn: Tensor, out: Tensor, act: str, rounding: str) -> None:
    global _launcher
    if _launcher is None:
        from . import default_runtime
        _launcher = default_runtime()._launcher
    _launcher.launch(hidden, weight, attn, out, act, rounding)


def _check_choices(act, rounding) -> None:
    if not (isinstance(act, str) and act in ACTIVATIONS):
        raise GatejitArgumentError("act", f"act = {act!r}: allowed are " + ", ".join(repr(a) for a in ACTIVATIONS))
    if not (isinstance(rounding, str) and rounding in ROUNDINGS):
        raise GatejitArgumentError(
            "rounding", f"rounding = {rounding!r}: allowed are " + ", ".join(repr(r) for r in ROUNDINGS))


def _check_meta(hidden: Tensor, weight: Tensor, attn: Tensor, out: Optional[Tensor], act: str, rounding: str) -> None:
    """What a fake implementation can check without sizes' values: choices, dtypes, ranks."""
    _check_choices(act, rounding)
    for name, t in (("weight", weight), ("attn", attn), ("out", out)):
        if t is not None and t.dtype != hidden.dtype:
            raise GatejitArgumentError(
                name, f"{name}.dtype = {t.dtype} differs from hidden.dtype = {hidden.dtype}: "
                      "hidden, weight, attn and out must all have the same dtype")
    if hidden.dim() not in (1, 2):
        raise GatejitArgumentError("hidden", f"hidden has {hidden.dim()} dimensions: expected [M, K] or [K]")
    if weight.dim() != 2:
        raise GatejitArgumentError("weight", f"weight has {weight.dim()} dimensions: expected [N, K]")
    if attn.dim() not in (1, 2):
        raise GatejitArgumentError("attn", f"attn has {attn.dim()} dimensions: expected [M, N] or [N]")


# --- the operators --------------------------------------------------------------------------


@torch.library.custom_op("gatejit::gate_epilogue", mutates_args=())
def _gate_epilogue(hidden: Tensor, weight: Tensor, attn: Tensor, act: str = "sigmoid",
                   rounding: str = "boundary") -> Tensor:
    out = torch.empty(attn.shape, dtype=attn.dtype, device=attn.device)
    _launch(hidden, weight, attn, out, act, rounding)
    return out


@_gate_epilogue.register_fake
def _gate_epilogue_fake(hidden, weight, attn, act="sigmoid", rounding="boundary"):
    _check_meta(hidden, weight, attn, None, act, rounding)
    return attn.new_empty(attn.shape)


@torch.library.custom_op("gatejit::gate_epilogue_out", mutates_args=("out",))
def _gate_epilogue_out(hidden: Tensor, weight: Tensor, attn: Tensor, out: Tensor, act: str = "sigmoid",
                       rounding: str = "boundary") -> None:
    _launch(hidden, weight, attn, out, act, rounding)


@_gate_epilogue_out.register_fake
def _gate_epilogue_out_fake(hidden, weight, attn, out, act="sigmoid", rounding="boundary"):
    _check_meta(hidden, weight, attn, out, act, rounding)


@torch.library.custom_op("gatejit::gate_epilogue_inplace", mutates_args=("attn",))
def _gate_epilogue_inplace(hidden: Tensor, weight: Tensor, attn: Tensor, act: str = "sigmoid",
                           rounding: str = "boundary") -> None:
    _launch(hidden, weight, attn, attn, act, rounding)


@_gate_epilogue_inplace.register_fake
def _gate_epilogue_inplace_fake(hidden, weight, attn, act="sigmoid", rounding="boundary"):
    _check_meta(hidden, weight, attn, None, act, rounding)


# --- the entry point ------------------------------------------------------------------------


def gate_epilogue(hidden: Tensor, weight: Tensor, attn: Tensor, out: Optional[Tensor] = None,
                  act: str = "sigmoid", rounding: str = "boundary") -> Tensor:
    """``act(hidden @ weight.T) * attn`` through the op that fits ``out``:
    None -> ``gatejit::gate_epilogue`` (returns a new tensor), ``attn`` itself
    -> ``gatejit::gate_epilogue_inplace`` (returns attn), another tensor ->
    ``gatejit::gate_epilogue_out`` (returns out). Traceable by torch.compile."""
    for name, t in (("hidden", hidden), ("weight", weight), ("attn", attn), ("out", out)):
        if not isinstance(t, Tensor) and not (name == "out" and t is None):
            raise GatejitArgumentError(name, f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    _check_choices(act, rounding)
    if out is None:
        return torch.ops.gatejit.gate_epilogue.default(hidden, weight, attn, act, rounding)
    if out is attn:
        torch.ops.gatejit.gate_epilogue_inplace.default(hidden, weight, attn, act, rounding)
        return attn
    torch.ops.gatejit.gate_epilogue_out.default(hidden, weight, attn, out, act, rounding)
    return out
