"""gatejit: Python binding of the gatejit runtime (libgatejit.so, through ctypes).

One fused kernel computes the gate epilogue

    out[m, n] = act(sum_k hidden[m, k] * weight[n, k]) * attn[m, n]
    act = sigmoid | silu

on torch CUDA tensors, on the current torch stream::

    import gatejit
    out = gatejit.gate_epilogue(hidden, weight, attn)             # new tensor
    gatejit.gate_epilogue(hidden, weight, attn, out=attn)         # in place
    print(gatejit.explain(hidden, weight, attn))                  # which kernel, why

Kernels come from precompiled bundles ($GATEJIT_BUNDLE_PATH, or
``Runtime(bundle_path=...)``), the disk cache, or the JIT when the loaded
library has the compiler in it. The first call for a contract (shape, dtype,
strides, alignment, act, rounding, device) resolves and loads a kernel; later
calls only launch. For CUDA graphs, call :func:`prepare` (or make one eager
call) before capture; during capture pass ``out`` so nothing is allocated.

Errors raise :class:`GatejitError` (a RuntimeError); arguments rejected by the
Python checks raise its subclass :class:`GatejitArgumentError` (also a
ValueError), whose ``argument`` names the offending argument.

torch is imported lazily: ``import gatejit`` and the contract-level functions
(:meth:`Runtime.explain_contract`, :meth:`Runtime.resolve_contract`) work
without it. See docs/python.md.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from typing import Any, Mapping, Optional, Sequence, Union

from . import _capi
from ._capi import GatejitArgumentError, GatejitError, library_path, load_library

__version__ = "0.1.0"

__all__ = [
    "GatejitError",
    "GatejitArgumentError",
    "Runtime",
    "ACTIVATIONS",
    "ROUNDINGS",
    "default_runtime",
    "gate_epilogue",
    "prepare",
    "explain",
    "load_bundle",
    "explain_contract",
    "resolve_contract",
    "library_path",
    "load_library",
]

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

PathLike = Union[str, "os.PathLike[str]"]


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

    __slots__ = ("args", "device", "empty", "out_shape")

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
                raise GatejitArgumentError(
                    name,
                    f"{name}.dtype = {t.dtype} differs from hidden.dtype = {hidden.dtype}: "
                    "hidden, weight, attn and out must all have the same dtype",
                )
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
        self.out_shape = tuple(attn.shape)
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

    def set_out(self, out) -> None:
        m, n = int(self.args.attn.rows), int(self.args.attn.cols)
        self.args.out = _matrix("out", out, m, n)

    def run(self, fn, runtime_handle, *extra):
        """Calls the C function `fn` with the call's device current (as torch sees it)."""
        torch = _torch()
        index = self.args.device_ordinal
        if torch.cuda.current_device() == index:
            return fn(runtime_handle, ctypes.byref(self.args), *extra)
        with torch.cuda.device(index):
            return fn(runtime_handle, ctypes.byref(self.args), *extra)


def _contract_text(contract: Union[str, Mapping[str, Any]]) -> bytes:
    if isinstance(contract, str):
        return contract.encode()
    if isinstance(contract, Mapping):
        return json.dumps(dict(contract)).encode()
    raise GatejitArgumentError(
        "contract", f"contract: expected a dict or a JSON string, got {type(contract).__name__}"
    )


def _path_list(paths: Union[None, PathLike, Sequence[PathLike]]) -> Optional[bytes]:
    if paths is None:
        return None
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return ":".join(os.fspath(p) for p in paths).encode()


class Runtime:
    """A gatejit runtime: loaded bundles, the disk cache, resolved kernels.

    Args:
        bundle_path: a bundle file, or a list of them, loaded at creation
            (besides those in $GATEJIT_BUNDLE_PATH, which are always loaded).
        cache_dir: the disk cache folder (default $GATEJIT_CACHE_DIR,
            $XDG_CACHE_HOME/gatejit, ~/.cache/gatejit).
        disable_jit: never compile (also GATEJIT_DISABLE_JIT=1).
        disable_cache: never touch the disk cache.
        cache_read_only: read the cache, never write it.

    If the loaded library has the compiler in it (gatejit_runtime_attach_jit),
    the JIT is attached (``jit_attached``); libgatejit.so alone serves bundles
    and the cache. Keep a runtime alive as long as any CUDA graph that captured
    its launches may be replayed: closing it unloads its kernels. All methods
    are thread-safe.
    """

    def __init__(
        self,
        bundle_path: Union[None, PathLike, Sequence[PathLike]] = None,
        *,
        cache_dir: Optional[PathLike] = None,
        disable_jit: bool = False,
        disable_cache: bool = False,
        cache_read_only: bool = False,
    ):
        self._lib = load_library()
        self._handle: Optional[int] = None
        handle = ctypes.c_void_p()
        plain = bundle_path is None and cache_dir is None and not (disable_jit or disable_cache or cache_read_only)
        if plain:
            options = None  # defaults + environment
        else:
            options = _capi.RuntimeOptions(
                os.fspath(cache_dir).encode() if cache_dir is not None else None,
                int(bool(disable_cache)),
                int(bool(cache_read_only)),
                int(bool(disable_jit)),
                _path_list(bundle_path),
            )
        status = self._lib.gatejit_runtime_create(ctypes.byref(options) if options is not None else None,
                                                  ctypes.byref(handle))
        _capi.check(status, "gatejit_runtime_create")
        self._handle = handle.value
        self.jit_attached = False
        attach = getattr(self._lib, "gatejit_runtime_attach_jit", None)
        if attach is not None:
            try:
                _capi.check(attach(self._handle), "gatejit_runtime_attach_jit")
            except GatejitError:
                self.close()
                raise
            self.jit_attached = True

    # -- lifetime --------------------------------------------------------------

    @property
    def handle(self) -> int:
        """The gatejit_runtime_t pointer as an int (for other C code in the process)."""
        if self._handle is None:
            raise GatejitError("this gatejit Runtime is closed", _capi.INVALID_ARGUMENT)
        return self._handle

    def close(self) -> None:
        """Destroys the runtime (unloads its kernels). Idempotent."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            self._lib.gatejit_runtime_destroy(handle)

    def __enter__(self) -> "Runtime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        # At interpreter exit the driver may be gone already: leave it to the OS.
        if sys is not None and not sys.is_finalizing():
            try:
                self.close()
            except Exception:
                pass

    # -- bundles and contracts -------------------------------------------------

    def load_bundle(self, path: PathLike) -> None:
        """Loads one more bundle file (searched after those loaded before)."""
        p = os.fspath(path)
        _capi.check(self._lib.gatejit_runtime_load_bundle(self.handle, p.encode()), f"load_bundle({p})")

    def explain_contract(self, contract: Union[str, Mapping[str, Any]]) -> str:
        """Which path a contract would take and why, without a device.

        ``contract`` is a dict or JSON text with the keys of the command-line
        flags, e.g. ``{"m": 1, "n": 1536, "k": 7168, "dtype": "bf16",
        "act": "sigmoid", "target": "sm_90"}``.
        """
        text = ctypes.c_void_p()
        status = self._lib.gatejit_explain_contract_json(self.handle, _contract_text(contract), ctypes.byref(text))
        _capi.check(status, "explain_contract")
        return _capi.take_string(text)

    def resolve_contract(self, contract: Union[str, Mapping[str, Any]]) -> str:
        """Resolves a contract (bundles -> cache -> JIT) without a device; returns the explanation."""
        text = ctypes.c_void_p()
        status = self._lib.gatejit_resolve_contract_json(self.handle, _contract_text(contract), ctypes.byref(text))
        _capi.check(status, "resolve_contract")
        return _capi.take_string(text)

    # -- tensors ---------------------------------------------------------------

    def gate_epilogue(self, hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary"):
        """``out = act(hidden @ weight.T) * attn``, launched on the current torch stream.

        Args:
            hidden: [M, K], or [K] (taken as [1, K]).
            weight: [N, K] (the torch Linear layout).
            attn: [M, N] ([N] allowed when hidden is 1-D).
            out: like attn; may be attn itself (in place). None: a new packed
                tensor with attn's shape, dtype and device is allocated.
            act: "sigmoid" or "silu".
            rounding: "boundary" (default) or "fused".

        All tensors: same dtype (bfloat16, float16 or float32), same CUDA
        device, inner dimension contiguous (stride(-1) == 1); the row stride
        stride(0) is the leading dimension. Returns ``out``. No synchronisation;
        with ``out`` given, no allocation (safe inside CUDA graph capture once
        the kernel is prepared). Not differentiable.
        """
        call = _Call(hidden, weight, attn, out, act, rounding)
        if out is None:
            torch = _torch()
            out = torch.empty(call.out_shape, dtype=attn.dtype, device=attn.device)
            if not call.empty:
                call.set_out(out)
        if call.empty:
            return out
        _capi.check(call.run(self._lib.gatejit_gate_epilogue, self.handle), "gate_epilogue")
        return out

    def prepare(self, hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary") -> None:
        """Resolves and loads the kernel of this call without launching it.

        Call it before capturing the call in a CUDA graph: the first call of a
        contract reads bundles/cache and loads a module, which capture forbids.
        With out=None it prepares for the packed output gate_epilogue allocates.
        """
        call = _Call(hidden, weight, attn, out, act, rounding)
        if not call.empty:
            _capi.check(call.run(self._lib.gatejit_prepare, self.handle), "prepare")

    def explain(self, hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary") -> str:
        """Which kernel path this call takes and why, e.g. "specialised gemv from bundle kernels.gjb"."""
        call = _Call(hidden, weight, attn, out, act, rounding)
        if call.empty:
            return "nothing to compute: M or N is 0"
        text = ctypes.c_void_p()
        _capi.check(call.run(self._lib.gatejit_explain, self.handle, ctypes.byref(text)), "explain")
        return _capi.take_string(text)


# --- the default runtime and module-level functions --------------------------------

_default: Optional[Runtime] = None
_default_lock = threading.Lock()


def default_runtime() -> Runtime:
    """The process-wide runtime, created on first use with the defaults and the
    environment (GATEJIT_BUNDLE_PATH, GATEJIT_DISABLE_JIT, GATEJIT_CACHE_DIR,
    GATEJIT_CACHE_READONLY). It lives until the process exits."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Runtime()
    return _default


def gate_epilogue(hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
                  *, runtime: Optional[Runtime] = None):
    """``act(hidden @ weight.T) * attn`` on the default runtime; see :meth:`Runtime.gate_epilogue`."""
    return (runtime or default_runtime()).gate_epilogue(hidden, weight, attn, out, act, rounding)


def prepare(hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
            *, runtime: Optional[Runtime] = None) -> None:
    """Resolve and load without launching (before CUDA graph capture); see :meth:`Runtime.prepare`."""
    (runtime or default_runtime()).prepare(hidden, weight, attn, out, act, rounding)


def explain(hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
            *, runtime: Optional[Runtime] = None) -> str:
    """Which kernel path the call takes and why; see :meth:`Runtime.explain`."""
    return (runtime or default_runtime()).explain(hidden, weight, attn, out, act, rounding)


def load_bundle(path: PathLike) -> None:
    """Loads a bundle into the default runtime."""
    default_runtime().load_bundle(path)


def explain_contract(contract: Union[str, Mapping[str, Any]]) -> str:
    """:meth:`Runtime.explain_contract` on the default runtime."""
    return default_runtime().explain_contract(contract)


def resolve_contract(contract: Union[str, Mapping[str, Any]]) -> str:
    """:meth:`Runtime.resolve_contract` on the default runtime."""
    return default_runtime().resolve_contract(contract)
