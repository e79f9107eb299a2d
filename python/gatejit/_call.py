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
_FP8 = None  # torch.float8_e4m3fn, or False where this torch has no float8


def _dtype_codes() -> dict:
    """torch dtype -> C enum, float8_e4m3fn included where this torch has it."""
    global _DTYPES
    if _DTYPES is None:
        torch = _torch()
        codes = {torch.bfloat16: _capi.BF16, torch.float16: _capi.F16, torch.float32: _capi.F32}
        fp8 = fp8_dtype()
        if fp8 is not None:
            codes[fp8] = _capi.FP8_E4M3
        _DTYPES = codes
    return _DTYPES


def fp8_dtype():
    """torch.float8_e4m3fn (the C API's GATEJIT_FP8_E4M3), or None on a torch without float8 (< 2.1)."""
    global _FP8
    if _FP8 is None:
        _FP8 = getattr(_torch(), "float8_e4m3fn", None) or False
    return _FP8 or None


#: Activation dtypes an fp8 weight can be used with (hidden, attn and out).
_FP8_ACTIVATION_CODES = (_capi.BF16, _capi.F16)


def scale_shapes(n: int, k: int) -> dict:
    """The shapes weight_scale may have for an [n, k] fp8 weight, by layout."""
    b = _capi.SCALE_BLOCK
    return {"per_channel": (n, 1), "block128": (-(-n // b), -(-k // b))}


def _scale_shape_text(n: int, k: int) -> str:
    shapes = scale_shapes(n, k)
    r, c = shapes["block128"]
    return (f"[N] or [N, 1] = [{n}, 1] (one scale per output channel) or "
            f"[ceil(N/128), ceil(K/128)] = [{r}, {c}] (one per 128 x 128 block of the weight)")


def check_weight_scale(weight_scale, weight, n: int, k: int, device) -> Optional[tuple]:
    """Checks weight_scale against an [n, k] weight; returns the (rows, cols) it
    is described with (per channel: (n, 1), a 1-D [n] included; per block:
    (ceil(n/128), ceil(k/128))), or None for a weight without scales.
    Raises GatejitArgumentError naming weight_scale."""
    torch = _torch()
    fp8 = fp8_dtype()
    is_fp8 = fp8 is not None and weight.dtype == fp8
    if weight_scale is None:
        if is_fp8:
            raise GatejitArgumentError(
                "weight_scale",
                f"weight is {weight.dtype}: weight_scale is required (torch.float32, {_scale_shape_text(n, k)}); "
                "the weight's value is its fp8 value times its scale")
        return None
    if not isinstance(weight_scale, torch.Tensor):
        raise GatejitArgumentError(
            "weight_scale", f"weight_scale: expected a torch.Tensor or None, got {type(weight_scale).__name__}")
    if not is_fp8:
        raise GatejitArgumentError(
            "weight_scale",
            f"weight_scale is given but weight.dtype = {weight.dtype}: scales belong to a torch.float8_e4m3fn "
            "weight only (pass weight_scale=None for a bfloat16 / float16 / float32 weight)")
    if weight_scale.dtype != torch.float32:
        raise GatejitArgumentError(
            "weight_scale", f"weight_scale.dtype = {weight_scale.dtype}: must be torch.float32")
    if weight_scale.device != device:
        raise GatejitArgumentError(
            "weight_scale",
            f"weight_scale is on device '{weight_scale.device}' but hidden is on '{device}': "
            "all tensors must be on the same CUDA device")
    shape = tuple(int(d) for d in weight_scale.shape)
    shapes = scale_shapes(n, k)
    if shape == (n,):
        rows, cols = n, 1
    elif shape in (shapes["per_channel"], shapes["block128"]):
        rows, cols = shape
    else:
        raise GatejitArgumentError(
            "weight_scale", f"weight_scale has shape {shape}: expected {_scale_shape_text(n, k)}")
    if not weight_scale.is_contiguous():
        raise GatejitArgumentError(
            "weight_scale",
            f"weight_scale has strides {tuple(weight_scale.stride())}: it must be packed (contiguous, row stride = "
            f"its number of columns); pass weight_scale.contiguous()")
    return rows, cols


#: Columns of an fp8 out that share one scale (out_scale: [M, N / 128]).
OUT_GROUP = 128


def check_out_scale(out_scale, out, m: int, n: int, device) -> bool:
    """Checks out_scale against an [m, n] out: required (torch.float32 [m, n / 128],
    contiguous, same device) for a torch.float8_e4m3fn out, refused for any other.
    Returns whether the out is fp8. Raises GatejitArgumentError naming the argument."""
    torch = _torch()
    fp8 = fp8_dtype()
    is_fp8 = out is not None and fp8 is not None and out.dtype == fp8
    shape = (m, n // OUT_GROUP)
    if out_scale is None:
        if is_fp8:
            raise GatejitArgumentError(
                "out_scale", f"out is {out.dtype}: out_scale is required (torch.float32 [M, N / 128] = "
                f"{list(shape)}, written by the kernel: one scale per row and 128 columns)")
        return False
    if not isinstance(out_scale, torch.Tensor):
        raise GatejitArgumentError(
            "out_scale", f"out_scale: expected a torch.Tensor or None, got {type(out_scale).__name__}")
    if not is_fp8:
        raise GatejitArgumentError(
            "out_scale", "out_scale is given but out is not torch.float8_e4m3fn: scales belong to an fp8 out only "
            "(pass out_scale=None)")
    if n % OUT_GROUP:
        raise GatejitArgumentError(
            "out", f"out has {n} columns: an fp8 out is quantised in groups of 128 columns (N a multiple of 128)")
    if out_scale.dtype != torch.float32:
        raise GatejitArgumentError("out_scale", f"out_scale.dtype = {out_scale.dtype}: must be torch.float32")
    if out_scale.device != device:
        raise GatejitArgumentError(
            "out_scale", f"out_scale is on device '{out_scale.device}' but hidden is on '{device}': "
            "all tensors must be on the same CUDA device")
    allowed = [shape] + ([shape[1:]] if m == 1 else [])  # [N / 128] for one row, as attn may be [N]
    if tuple(int(d) for d in out_scale.shape) not in allowed:
        raise GatejitArgumentError(
            "out_scale", f"out_scale has shape {tuple(out_scale.shape)}: expected [M, N / 128] = {list(shape)}")
    if not out_scale.is_contiguous():
        raise GatejitArgumentError(
            "out_scale", f"out_scale has strides {tuple(out_scale.stride())}: it must be packed; pass "
            "out_scale.contiguous()")
    return True


def _choice(argument: str, value: Any, allowed: Mapping[str, int]) -> int:
    if isinstance(value, str) and value in allowed:
        return allowed[value]
    names = ", ".join(repr(k) for k in allowed)
    raise GatejitArgumentError(argument, f"{argument} = {value!r}: allowed are {names}")


def _dtype_mismatch(name: str, t, hidden) -> None:
    raise GatejitArgumentError(
        name,
        f"{name}.dtype = {t.dtype} differs from hidden.dtype = {hidden.dtype}: "
        "hidden, weight, attn and out must all have the same dtype (the weight may instead be "
        "torch.float8_e4m3fn, with weight_scale, for bfloat16 / float16 hidden, attn and out)",
    )


def _check_fp8_activations(weight, hidden, name: str = "weight") -> None:
    """An fp8 weight (or out) goes with bf16 / f16 activations only."""
    if _dtype_codes().get(hidden.dtype) not in _FP8_ACTIVATION_CODES:
        raise GatejitArgumentError(
            name,
            f"{name}.dtype = {weight.dtype} needs bfloat16 or float16 hidden and attn; "
            f"hidden.dtype = {hidden.dtype}",
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

    def __init__(self, hidden, weight, attn, out, act, rounding, weight_scale=None, out_scale=None):
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
        fp8 = fp8_dtype()
        for name, t in named:
            if t.dtype not in codes or (t.dtype == fp8 and name not in ("weight", "out")):
                raise GatejitArgumentError(
                    name, f"{name}.dtype = {t.dtype}: allowed are torch.bfloat16, torch.float16, torch.float32"
                    + (" (and torch.float8_e4m3fn for weight, with weight_scale, and for out, with out_scale)"
                       if fp8 is not None else ""))
        if fp8 is not None and weight.dtype == fp8:
            _check_fp8_activations(weight, hidden)
        if fp8 is not None and out is not None and out.dtype == fp8:
            _check_fp8_activations(out, hidden, "out")
        for name, t in named[1:]:
            if t.dtype != hidden.dtype and not (name in ("weight", "out") and t.dtype == fp8):
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
        scale_shape = check_weight_scale(weight_scale, weight, n, k, hidden.device)
        # (An fp8 out overlapping attn is refused by the runtime at every call, naming out.)
        fp8_out = check_out_scale(out_scale, out, m, n, hidden.device)

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
        if scale_shape is not None:
            rows, cols = scale_shape
            args.weight_scale = _capi.Tensor(weight_scale.data_ptr(), _capi.F32, rows, cols, cols)
        if fp8_out:
            args.out_scale = _capi.Tensor(out_scale.data_ptr(), _capi.F32, m, n // OUT_GROUP, n // OUT_GROUP)
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
    alignment (low four bits), act, rounding and the device; the weight
    scales' descriptor too (all zero without them)."""
    def part(t: _capi.Tensor):
        return (t.dtype, t.rows, t.cols, t.ld, (t.data or 0) & _ALIGN_MASK)
    return (part(args.hidden), part(args.weight), part(args.attn), part(args.out),
            args.act, args.rounding, args.device_kind, args.device_ordinal, part(args.weight_scale),
            part(args.out_scale))


def route_key(args: _capi.GateArgs) -> tuple:
    """What a measured routing decision is keyed on (gatejit.routing): the
    sizes, dtypes, act, rounding and device; layouts and alignment aside, the
    replaced expression serves every layout of them."""
    return (args.attn.rows, args.weight.rows, args.weight.cols, args.hidden.dtype, args.weight.dtype,
            args.out.dtype, args.act, args.rounding, args.device_kind, args.device_ordinal)
