"""The gate epilogue as torch custom operators, for torch.compile and CUDA graphs.

Three operators under the ``gatejit`` namespace, defined with
``torch.library.Library`` (schemas written out below, tagged
``pt2_compliant_tag``), one implementation that checks its arguments
(registered for CUDA and CPU, so errors name the argument for CPU tensors
too) and a fake implementation for tracing (symbolic M included):

    torch.ops.gatejit.gate_epilogue(hidden, weight, attn, act="sigmoid", rounding="boundary",
                                    weight_scale=None) -> Tensor
        a new packed tensor with attn's shape, dtype and device;
    torch.ops.gatejit.gate_epilogue_out(hidden, weight, attn, out, act=..., rounding=..., weight_scale=None,
                                        out_scale=None) -> ()
        writes into the caller's `out` (mutates `out`, and `out_scale` for an fp8 out);
    torch.ops.gatejit.gate_epilogue_inplace(hidden, weight, attn, act=..., rounding=..., weight_scale=None) -> ()
        writes into `attn` (mutates `attn` only).

``weight_scale`` (last, optional) is the fp32 scales of a torch.float8_e4m3fn
weight: [N, 1] or [N] per output channel, or [ceil(N/128), ceil(K/128)] per
128 x 128 block; None for a bf16/f16/f32 weight. ``out_scale`` (gate_epilogue_out
only) is the fp32 [M, N / 128] tensor a torch.float8_e4m3fn out's scales are
written to (one per row and 128 columns); None for a bf16/f16/f32 out.

They are registered straight on the dispatcher, as vLLM registers its own
ops, rather than through ``torch.library.custom_op``, whose Python autograd,
in-place/view and aliasing-check layers cost microseconds on every eager
call: an eager call is the dispatcher, then the implementation. They have no
autograd formula (not differentiable: with inputs that require grad, torch's
autograd fallback warns on backward).

:func:`gate_epilogue` picks one of them from ``out`` (None, ``attn`` itself,
another tensor); ``gatejit.gate_epilogue`` calls it. All of them launch on
the default runtime (``gatejit.default_runtime()``) on torch's current
stream. ``import gatejit`` imports this module where torch (>= 2.4) is installed.
"""

from typing import Optional

import torch

if not hasattr(torch.library, "register_fake"):  # torch < 2.4
    raise ImportError(f"gatejit.ops needs torch >= 2.4 (torch.library.register_fake); this is torch {torch.__version__}")

from torch import Tensor  # noqa: E402

from ._call import ACTIVATIONS, ROUNDINGS, _check_fp8_activations, _choice, _dtype_mismatch  # noqa: E402
from ._capi import GatejitArgumentError  # noqa: E402

__all__ = ["gate_epilogue", "NAMESPACE", "OP_NAMES", "SCHEMAS"]

NAMESPACE = "gatejit"
_OPTIONS = 'str act="sigmoid", str rounding="boundary", Tensor? weight_scale=None'
#: The operators' schemas: exactly `out` (resp. `attn`) is written (the "(a!)");
#: weight_scale comes last, so calls without it keep their positions.
SCHEMAS = {
    "gate_epilogue": f"(Tensor hidden, Tensor weight, Tensor attn, {_OPTIONS}) -> Tensor",
    "gate_epilogue_out": f"(Tensor hidden, Tensor weight, Tensor attn, Tensor(a!) out, {_OPTIONS}, "
                         "Tensor(b!)? out_scale=None) -> ()",
    "gate_epilogue_inplace": f"(Tensor hidden, Tensor weight, Tensor(a!) attn, {_OPTIONS}) -> ()",
}
OP_NAMES = tuple(SCHEMAS)

_launcher = None


_FP8 = getattr(torch, "float8_e4m3fn", None)


def _launch(hidden: Tensor, weight: Tensor, attn: Tensor, out: Tensor, act: str, rounding: str,
            weight_scale: Optional[Tensor], out_scale: Optional[Tensor] = None) -> None:
    global _launcher
    if _launcher is None:
        from . import default_runtime
        _launcher = default_runtime()._launcher
    _launcher.launch(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)


def _check_choices(act, rounding) -> None:
    _choice("act", act, ACTIVATIONS)
    _choice("rounding", rounding, ROUNDINGS)


def _check_meta(hidden: Tensor, weight: Tensor, attn: Tensor, out: Optional[Tensor], act: str, rounding: str,
                weight_scale: Optional[Tensor], out_scale: Optional[Tensor] = None) -> None:
    """What a fake implementation can check without sizes' values: choices, dtypes, ranks."""
    _check_choices(act, rounding)
    fp8 = _FP8 is not None and weight.dtype == _FP8
    fp8_out = _FP8 is not None and out is not None and out.dtype == _FP8
    for name, t in (("weight", weight), ("attn", attn), ("out", out)):
        if t is not None and t.dtype != hidden.dtype and not (name == "weight" and fp8) and not (
                name == "out" and fp8_out):
            _dtype_mismatch(name, t, hidden)
    if fp8_out:
        _check_fp8_activations(out, hidden, "out")
        if out_scale is None:
            raise GatejitArgumentError("out_scale", f"out is {out.dtype}: out_scale is required")
        if out_scale.dtype != torch.float32:
            raise GatejitArgumentError("out_scale", f"out_scale.dtype = {out_scale.dtype}: must be torch.float32")
    elif out_scale is not None:
        raise GatejitArgumentError(
            "out_scale", "out_scale is given but out is not torch.float8_e4m3fn: scales belong to an fp8 out only")
    if fp8:
        _check_fp8_activations(weight, hidden)
        if weight_scale is None:
            raise GatejitArgumentError("weight_scale", f"weight is {weight.dtype}: weight_scale is required")
        if weight_scale.dtype != torch.float32:
            raise GatejitArgumentError("weight_scale", f"weight_scale.dtype = {weight_scale.dtype}: must be torch.float32")
        if weight_scale.dim() not in (1, 2):
            raise GatejitArgumentError(
                "weight_scale", f"weight_scale has {weight_scale.dim()} dimensions: expected [N], [N, 1] or "
                "[ceil(N/128), ceil(K/128)]")
    elif weight_scale is not None:
        raise GatejitArgumentError(
            "weight_scale", f"weight_scale is given but weight.dtype = {weight.dtype}: scales belong to a "
            "torch.float8_e4m3fn weight only")
    if hidden.dim() not in (1, 2):
        raise GatejitArgumentError("hidden", f"hidden has {hidden.dim()} dimensions: expected [M, K] or [K]")
    if weight.dim() != 2:
        raise GatejitArgumentError("weight", f"weight has {weight.dim()} dimensions: expected [N, K]")
    if attn.dim() not in (1, 2):
        raise GatejitArgumentError("attn", f"attn has {attn.dim()} dimensions: expected [M, N] or [N]")


# --- implementations ---------------------------------------------------------------------


def _gate_epilogue(hidden, weight, attn, act="sigmoid", rounding="boundary", weight_scale=None):
    out = torch.empty(attn.shape, dtype=attn.dtype, device=attn.device)
    _launch(hidden, weight, attn, out, act, rounding, weight_scale)
    return out


def _gate_epilogue_fake(hidden, weight, attn, act="sigmoid", rounding="boundary", weight_scale=None):
    _check_meta(hidden, weight, attn, None, act, rounding, weight_scale)
    return attn.new_empty(attn.shape)


def _gate_epilogue_out(hidden, weight, attn, out, act="sigmoid", rounding="boundary", weight_scale=None,
                       out_scale=None):
    _launch(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)


def _gate_epilogue_out_fake(hidden, weight, attn, out, act="sigmoid", rounding="boundary", weight_scale=None,
                            out_scale=None):
    _check_meta(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)


def _gate_epilogue_inplace(hidden, weight, attn, act="sigmoid", rounding="boundary", weight_scale=None):
    _launch(hidden, weight, attn, attn, act, rounding, weight_scale)


def _gate_epilogue_inplace_fake(hidden, weight, attn, act="sigmoid", rounding="boundary", weight_scale=None):
    _check_meta(hidden, weight, attn, None, act, rounding, weight_scale)


# --- registration ------------------------------------------------------------------------

_IMPLEMENTATIONS = {
    "gate_epilogue": (_gate_epilogue, _gate_epilogue_fake),
    "gate_epilogue_out": (_gate_epilogue_out, _gate_epilogue_out_fake),
    "gate_epilogue_inplace": (_gate_epilogue_inplace, _gate_epilogue_inplace_fake),
}

# Kept for the life of the process: dropping a Library object unregisters its ops.
_library = torch.library.Library(NAMESPACE, "FRAGMENT")
for _name, (_impl, _fake) in _IMPLEMENTATIONS.items():
    _library.define(_name + SCHEMAS[_name], tags=(torch.Tag.pt2_compliant_tag,))
    torch.library.register_fake(f"{NAMESPACE}::{_name}", _fake, lib=_library)
    # CPU too: CPU tensors reach the checks, whose error names the argument.
    for _key in ("CUDA", "CPU"):
        _library.impl(_name, _impl, _key)


# --- the entry point ------------------------------------------------------------------------


def gate_epilogue(hidden: Tensor, weight: Tensor, attn: Tensor, out: Optional[Tensor] = None,
                  act: str = "sigmoid", rounding: str = "boundary", *, weight_scale: Optional[Tensor] = None,
                  out_scale: Optional[Tensor] = None) -> Tensor:
    """``act(hidden @ weight.T) * attn`` through the op that fits ``out``:
    None -> ``gatejit::gate_epilogue`` (returns a new tensor), ``attn`` itself
    -> ``gatejit::gate_epilogue_inplace`` (returns attn), another tensor ->
    ``gatejit::gate_epilogue_out`` (returns out). Traceable by torch.compile.
    ``weight_scale``: the fp32 scales of a torch.float8_e4m3fn weight (see
    :meth:`gatejit.Runtime.gate_epilogue`); ``out_scale``: the fp32 [M, N / 128] scales of a
    torch.float8_e4m3fn ``out`` (written by the kernel; the out op only)."""
    if not isinstance(hidden, Tensor):
        _not_a_tensor("hidden", hidden)
    if not isinstance(weight, Tensor):
        _not_a_tensor("weight", weight)
    if not isinstance(attn, Tensor):
        _not_a_tensor("attn", attn)
    if out is not None and not isinstance(out, Tensor):
        _not_a_tensor("out", out)
    if weight_scale is not None and not isinstance(weight_scale, Tensor):
        _not_a_tensor("weight_scale", weight_scale)
    if out_scale is not None and not isinstance(out_scale, Tensor):
        _not_a_tensor("out_scale", out_scale)
    _check_choices(act, rounding)
    if out_scale is not None or (_FP8 is not None and out is not None and out.dtype == _FP8):
        if out is None or out is attn:
            raise GatejitArgumentError(
                "out", "an fp8 out (with out_scale) is a separate torch.float8_e4m3fn tensor: pass out=")
        torch.ops.gatejit.gate_epilogue_out.default(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)
        return out
    if out is None:
        return torch.ops.gatejit.gate_epilogue.default(hidden, weight, attn, act, rounding, weight_scale)
    if out is attn:
        torch.ops.gatejit.gate_epilogue_inplace.default(hidden, weight, attn, act, rounding, weight_scale)
        return attn
    torch.ops.gatejit.gate_epilogue_out.default(hidden, weight, attn, out, act, rounding, weight_scale)
    return out


def _not_a_tensor(name: str, value) -> None:
    raise GatejitArgumentError(name, f"{name}: expected a torch.Tensor, got {type(value).__name__}"
                               + (" (or None)" if name in ("weight_scale", "out_scale") else ""))
