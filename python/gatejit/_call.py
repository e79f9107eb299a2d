"""One call's validated description: the checks of every tensor argument and
the C descriptors (``GateArgs``) built from them, shared by launch, prepare,
explain and supports. Also the contract key: the part of a call's
description that decides which kernel serves it (everything but the data
pointers' values, which only count through their alignment).
"""

from __future__ import annotations

import ctypes
from typing import Any, Mapping, Optional

from . import _capi
from ._capi import GatejitArgumentError, GatejitError

#: Allowed values of ``act`` and their C enum values.
ACTIVATIONS = {"sigmoid": _capi.SIGMOID, "silu": _capi.SILU}
#: Allowed values of ``rounding``. ``"boundary"`` rounds to the tensor dtype
#: after the projection, after the activation and after the product (as the
#: unfused torch expression does); ``"fused"`` keeps fp32 until the output.
ROUNDINGS = {"boundary": _capi.ROUNDING_BOUNDARY, "fused": _capi.ROUNDING_FUSED}

# Stands in for the data pointer of an output not yet allocated (prepare and
# explain with out=None): a fresh torch allocation is at least 256-byte
# aligned, the most the runtime's alignment analysis distinguishes.
_FRESH_ALLOCATION = 256

def _torch():
    """Imports torch on first use (the ctypes layer and contract calls need none)."""
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise GatejitError(f"gatejit's tensor API needs PyTorch: {e}", _capi.INVALID_ARGUMENT) from None
    return torch


_DTYPES: Optional[dict] = None


def _dtype_codes() -> dict:
    global _DTYPES
    if _DTYPES is None:
        torch = _torch()
        _DTYPES = {torch.bfloat16: _capi.BF16, torch.float16: _capi.F16, torch.float32: _capi.F32}
    return _DTYPES


def _choice(argument: str, value: Any, allowed: Mapping[str, int]) -> int:
    if isinstance(value, str) and value in allowed:
        return allowed[value]
    names = ", ".join(repr(k) for k in allowed)
    raise GatejitArgumentError(argument, f"{argument} = {value!r}: allowed are {names}")


def _dtype_mismatch(name: str, t, hidden) -> None:
    raise GatejitArgumentError(
        name,
        f"{name}.dtype = {t.dtype} differs from hidden.dtype = {hidden.dtype}: "
        "hidden, weight, attn and out must all have the same dtype",
    )


def _matrix(name: str, t, rows: int, cols: int, data: Optional[int] = None) -> _capi.Tensor:
    """Describes tensor `t` viewed as rows x cols (shape already checked)."""
    if cols > 1 and t.stride(-1) != 1:
        raise GatejitArgumentError(
            name,
            f"{name}.stride(-1) = {t.stride(-1)}: the inner (last) dimension must be contiguous "
            f"(stride 1); pass {name}.contiguous()",
        )
    if t.dim() == 1 or rows == 1:
        # A single row: its row stride is never used, so describe it as a
        # packed one (the contract, and so the bundle lookup, includes ld).
        ld = cols
    else:
        ld = t.stride(0)
        if ld < cols:
            raise GatejitArgumentError(
                name,
                f"{name}.stride(0) = {ld}: the row stride must be at least the row length {cols} "
                "(rows must not overlap)",
            )
    return _capi.Tensor(data if data is not None else t.data_ptr(), _dtype_codes()[t.dtype], rows, cols, ld)


class _Call:
    """The validated description of one call (shared by launch, prepare, explain)."""

    __slots__ = ("args", "device", "empty")

    def __init__(self, hidden, weight, attn, out, act, rounding):
        torch = _torch()
        act_code = _choice("act", act, ACTIVATIONS)
        rounding_code = _choice("rounding", rounding, ROUNDINGS)
        named = [("hidden", hidden), ("weight", weight), ("attn", attn)]
        if out is not None:
            named.append(("out", out))
        codes = _dtype_codes()
        for name, t in named:
            if not isinstance(t, torch.Tensor):
                raise GatejitArgumentError(name, f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        for name, t in named:
            if t.dtype not in codes:
                raise GatejitArgumentError(
                    name, f"{name}.dtype = {t.dtype}: allowed are torch.bfloat16, torch.float16, torch.float32"
                )
        for name, t in named[1:]:
            if t.dtype != hidden.dtype:
                _dtype_mismatch(name, t, hidden)
        if hidden.device.type != "cuda":
            raise GatejitArgumentError(
                "hidden", f"hidden is on device '{hidden.device}': gatejit needs CUDA tensors (move it with .cuda())"
            )
        for name, t in named[1:]:
            if t.device != hidden.device:
                raise GatejitArgumentError(
                    name,
                    f"{name} is on device '{t.device}' but hidden is on '{hidden.device}': "
                    "all tensors must be on the same CUDA device",
                )

        # Shapes: hidden [M, K] (or [K] = [1, K]), weight [N, K], attn and out [M, N]
        # (or [N] when hidden is 1-D).
        if hidden.dim() not in (1, 2):
            raise GatejitArgumentError(
                "hidden", f"hidden has shape {tuple(hidden.shape)}: expected [M, K] or [K] (1-D, as [1, K])"
            )
        if weight.dim() != 2:
            raise GatejitArgumentError("weight", f"weight has shape {tuple(weight.shape)}: expected [N, K] (2-D)")
        m = 1 if hidden.dim() == 1 else int(hidden.shape[0])
        k = int(hidden.shape[-1])
        n = int(weight.shape[0])
        if int(weight.shape[1]) != k:
            raise GatejitArgumentError(
                "weight",
                f"weight has shape {tuple(weight.shape)}: weight.shape[1] must equal hidden.shape[-1] = {k} (K)",
            )
        allowed_shapes = [(m, n)] + ([(n,)] if hidden.dim() == 1 else [])
        shape_text = f"[{m}, {n}] (M, N)" + (f" or [{n}]" if hidden.dim() == 1 else "")
        if tuple(attn.shape) not in allowed_shapes:
            raise GatejitArgumentError("attn", f"attn has shape {tuple(attn.shape)}: expected {shape_text}")
        if out is not None and tuple(out.shape) != tuple(attn.shape):
            raise GatejitArgumentError(
                "out", f"out has shape {tuple(out.shape)}: expected the shape of attn, {tuple(attn.shape)}"
            )
        if k == 0:
            raise GatejitArgumentError("hidden", f"hidden has shape {tuple(hidden.shape)}: K must be at least 1")
        if out is not None and out.data_ptr() == attn.data_ptr() and out.stride() != attn.stride():
            raise GatejitArgumentError(
                "out", "out shares attn's memory with different strides: pass out=attn itself, or a separate tensor"
            )

        self.device = hidden.device
        self.empty = m == 0 or n == 0
        if self.empty:
            self.args = None
            return
        args = _capi.GateArgs()
        args.hidden = _matrix("hidden", hidden, m, k)
        args.weight = _matrix("weight", weight, n, k)
        args.attn = _matrix("attn", attn, m, n)
        if out is not None:
            args.out = _matrix("out", out, m, n)
        else:  # described as the packed tensor gate_epilogue would allocate
            args.out = _capi.Tensor(_FRESH_ALLOCATION, codes[hidden.dtype], m, n, n)
        args.act = act_code
        args.rounding = rounding_code
        args.device_kind = _capi.DEVICE_HIP if getattr(torch.version, "hip", None) else _capi.DEVICE_CUDA
        args.device_ordinal = hidden.device.index if hidden.device.index is not None else torch.cuda.current_device()
        args.stream = torch.cuda.current_stream(hidden.device).cuda_stream or None
        self.args = args


def run_on_device(fn, runtime_handle, args: _capi.GateArgs, *extra):
    """Calls the C function `fn` on `args` with the args' device current (as torch sees it)."""
    torch = _torch()
    index = args.device_ordinal
    if torch.cuda.current_device() == index:
        return fn(runtime_handle, ctypes.byref(args), *extra)
    with torch.cuda.device(index):
        return fn(runtime_handle, ctypes.byref(args), *extra)


# The runtime normalises the alignment it derives from the pointers to at most
# 16 bytes, so a pointer counts through its low four bits only.
_ALIGN_MASK = 15


def contract_key(args: _capi.GateArgs) -> tuple:
    """What decides the kernel (and so what must be resolved before a CUDA graph
    capture): the descriptors without the pointer values, the pointers'
    alignment (low four bits), act, rounding and the device."""
    def part(t: _capi.Tensor):
        return (t.dtype, t.rows, t.cols, t.ld, (t.data or 0) & _ALIGN_MASK)
    return (part(args.hidden), part(args.weight), part(args.attn), part(args.out),
            args.act, args.rounding, args.device_kind, args.device_ordinal)
