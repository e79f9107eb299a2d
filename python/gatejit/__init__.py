"""gatejit: the fused gate epilogue for torch, over the gatejit runtime (libgatejit.so, through ctypes).

One fused kernel computes

    out[m, n] = act(sum_k hidden[m, k] * weight[n, k]) * attn[m, n]
    act = sigmoid | silu

on torch CUDA tensors, on the current torch stream, through torch custom ops
(``torch.ops.gatejit.gate_epilogue``, ``gate_epilogue_out``,
``gate_epilogue_inplace``; see gatejit.ops) that work eagerly, under
``torch.compile(fullgraph=True)`` and in CUDA graphs::

    import torch, gatejit
    out = gatejit.gate_epilogue(hidden, weight, attn)             # new tensor
    gatejit.gate_epilogue(hidden, weight, attn, out=attn)         # in place
    gatejit.gate_epilogue(hidden, w_fp8, attn, weight_scale=s)    # fp8 e4m3 weight, fp32 scales
    gatejit.prepare_for([1, 2, 4, 8], n, k, torch.bfloat16)       # before CUDA graph capture
    gatejit.supports(hidden, weight, attn)                        # bool; never raises, never compiles
    print(gatejit.explain(hidden, weight, attn))                  # which kernel, why

gatejit.integrations.vllm has the output-gate callback for vLLM's MLA seam.

Kernels come from precompiled bundles ($GATEJIT_BUNDLE_PATH, or
``Runtime(bundle_path=...)``), the disk cache, or the JIT when the loaded
library has the compiler in it. The first call for a contract (shape, dtype,
strides, alignment, act, rounding, device) resolves and loads a kernel; later
calls only launch. Resolve before a CUDA graph capture (:func:`prepare_for`,
:func:`prepare`, or one eager call): a first use inside a capture raises.

Errors raise :class:`GatejitError` (a RuntimeError); arguments rejected by the
Python checks raise its subclass :class:`GatejitArgumentError` (also a
ValueError), whose ``argument`` names the offending argument.

``import gatejit`` imports torch where it is installed, to register the ops
(so the import order of torch and gatejit does not matter); without torch it
works too, as do the contract-level functions (:func:`explain_contract`,
:func:`resolve_contract`, :func:`supports_contract`). See docs/python.md.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import sys
import threading
from typing import Any, Mapping, Optional, Sequence, Union

from . import _capi
from ._call import ACTIVATIONS, ROUNDINGS, _Call, _torch, run_on_device
from ._capi import GatejitArgumentError, GatejitError, library_path, load_library
from ._launch import Launcher

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
    "launch_count",
    "supports",
    "supports_shape",
    "supports_contract",
    "prepare_for",
    "SCALE_LAYOUTS",
]

PathLike = Union[str, "os.PathLike[str]"]


def _c_string(text: bytes, argument: str, shown: Any) -> bytes:
    """`text` as it crosses into C, where a char* ends at its first NUL: one
    inside would silently cut the string (``/tmp/a\\x00b`` opening ``/tmp/a``)."""
    if b"\x00" in text:
        echo = repr(shown)
        if len(echo) > 200:
            echo = f"{echo[:200]}... ({len(echo)} characters)"
        raise GatejitArgumentError(
            argument, f"{argument} = {echo}: contains a NUL byte, which would cut the string the C library reads"
        )
    return text


def _path(path: PathLike, argument: str) -> bytes:
    # os.fsencode: the bytes the OS uses for the name (undecodable bytes survive).
    return _c_string(os.fsencode(path), argument, path)


def _contract_text(contract: Union[str, Mapping[str, Any]]) -> bytes:
    if isinstance(contract, str):
        return _c_string(contract.encode(), "contract", contract)
    if isinstance(contract, Mapping):
        # json.dumps writes a NUL inside a value as the escape \u0000: no cut.
        return json.dumps(dict(contract)).encode()
    raise GatejitArgumentError(
        "contract", f"contract: expected a dict or a JSON string, got {type(contract).__name__}"
    )


def _path_list(paths: Union[None, PathLike, Sequence[PathLike]]) -> Optional[bytes]:
    if paths is None:
        return None
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return b":".join(_path(p, "bundle_path") for p in paths)


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
        record: append every contract this runtime resolves to this file,
            one JSON line each, for ``gatejit precompile --contracts FILE``
            (also GATEJIT_RECORD=FILE; see docs/serving.md).
        shipped_bundle: load the bundle of generic kernels installed beside
            the library (default; also GATEJIT_SHIPPED_BUNDLE=0 to leave it out).
        jit: what a call does when its specialised kernel is in no bundle or
            cache: "sync" compiles it before the call returns; "background"
            serves the generic kernel at once while worker threads compile
            it, swapped in by a later call outside any CUDA graph capture
            (:meth:`prepare` and :func:`prepare_for` still wait for it);
            "off" never compiles. None: $GATEJIT_JIT, else "sync".

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
        record: Optional[PathLike] = None,
        shipped_bundle: bool = True,
        jit: Optional[str] = None,
    ):
        if jit not in _capi.JIT_MODES:
            raise GatejitArgumentError("jit", f"jit = {jit!r}: allowed are 'sync', 'background', 'off' or None")
        self._lib = load_library()
        self._handle: Optional[int] = None
        handle = ctypes.c_void_p()
        plain = (bundle_path is None and cache_dir is None and record is None and shipped_bundle and jit is None
                 and not (disable_jit or disable_cache or cache_read_only))
        if plain:
            options = None  # defaults + environment
        else:
            options = _capi.RuntimeOptions(
                _path(cache_dir, "cache_dir") if cache_dir is not None else None,
                int(bool(disable_cache)),
                int(bool(cache_read_only)),
                int(bool(disable_jit)),
                _path_list(bundle_path),
                os.fspath(record).encode() if record is not None else None,
                int(not shipped_bundle),
                _capi.JIT_MODES[jit],
            )
        status = self._lib.gatejit_runtime_create(ctypes.byref(options) if options is not None else None,
                                                  ctypes.byref(handle))
        _capi.check(status, "gatejit_runtime_create")
        self._handle = handle.value
        # The mode asked for ("background": a first call launches at once; see _launch). Where
        # GATEJIT_DISABLE_JIT turns the JIT off anyway, launching at once only resolves there instead.
        self.jit_mode = "off" if disable_jit else jit if jit is not None else os.environ.get("GATEJIT_JIT") or "sync"
        self.jit_attached = False
        attach = getattr(self._lib, "gatejit_runtime_attach_jit", None)
        if attach is not None:
            try:
                _capi.check(attach(self._handle), "gatejit_runtime_attach_jit")
            except GatejitError:
                self.close()
                raise
            self.jit_attached = True
        self._launcher = Launcher(self)

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
        _capi.check(self._lib.gatejit_runtime_load_bundle(self.handle, _path(path, "path")),
                    f"load_bundle({os.fsdecode(path)})")

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

    def gate_epilogue(self, hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
                      *, weight_scale=None, out_scale=None):
        """``out = act(hidden @ weight.T) * attn``, launched on the current torch stream.

        Args:
            hidden: [M, K], or [K] (taken as [1, K]).
            weight: [N, K] (the torch Linear layout).
            attn: [M, N] ([N] allowed when hidden is 1-D).
            out: like attn; may be attn itself (in place). None: a new packed
                tensor with attn's shape, dtype and device is allocated.
            act: "sigmoid" or "silu".
            rounding: "boundary" (default) or "fused".
            weight_scale: for a torch.float8_e4m3fn weight (and only then):
                its torch.float32 scales, packed (contiguous), on the same
                device: [N, 1] (or [N]) one per output channel, or
                [ceil(N/128), ceil(K/128)] one per 128 x 128 block (DeepSeek-V3's
                layout, vLLM's ``weight_scale_inv``). The weight's value is
                its fp8 value times its scale; the projection is accumulated
                in fp32, everything after it is as for a bf16/f16 weight.
            out_scale: for a torch.float8_e4m3fn out (and only then): the
                torch.float32 tensor [M, N / 128] (packed, same device) the
                kernel writes the scales to, one per row and 128 columns
                (vLLM's per_token_group_quant_fp8 layout; N a multiple of
                128). With y the gated value in attn's dtype: scale =
                max(max |y| of the group, 1e-10) / 448, out = e4m3(y / scale).
                An fp8 out may not be attn.

        All tensors: same dtype (bfloat16, float16 or float32), except that the
        weight may be torch.float8_e4m3fn (with weight_scale) for bfloat16 /
        float16 activations; same CUDA device, inner dimension contiguous
        (stride(-1) == 1); the row stride stride(0) is the leading dimension.
        Returns ``out``. No synchronisation; with ``out`` given, no allocation
        (safe inside CUDA graph capture once the kernel is prepared). Not
        differentiable.
        """
        if out is None:
            torch = _torch()
            if not isinstance(attn, torch.Tensor):
                _Call(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)  # raises, naming the argument
            out = torch.empty(attn.shape, dtype=attn.dtype, device=attn.device)
        self._launcher.launch(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)
        return out

    def prepare(self, hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
                *, weight_scale=None, out_scale=None) -> None:
        """Resolves and loads the kernel of this call without launching it.

        Call it before capturing the call in a CUDA graph: the first call of a
        contract reads bundles/cache and loads a module, which capture forbids
        (a first call inside a capture raises GatejitError). With out=None it
        prepares for the packed output gate_epilogue allocates. Shapes only
        known as numbers: :func:`gatejit.prepare_for`.
        """
        call = _Call(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)
        if not call.empty:
            self._launcher.prepare_args(call.args, "prepare")

    @property
    def launch_count(self) -> int:
        """How many kernels this runtime has launched (successful launches, all threads).

        A real count of gatejit_gate_epilogue calls that returned success, for
        tests and engines that want to see the fused path taken; a CUDA graph
        replay launches without calling it (its capture counted once)."""
        return self._launcher.launch_count

    def explain(self, hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
                *, weight_scale=None, out_scale=None) -> str:
        """Which kernel path this call takes and why, e.g. "specialised gemv from bundle kernels.gjb"."""
        call = _Call(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)
        if call.empty:
            return "nothing to compute: M or N is 0"
        return self._explain_args(call.args)

    def _explain_args(self, args: _capi.GateArgs) -> str:
        """gatejit_explain on built descriptors (never compiles, never launches)."""
        text = ctypes.c_void_p()
        _capi.check(run_on_device(self._lib.gatejit_explain, self.handle, args, ctypes.byref(text)), "explain")
        kernel = _capi.take_string(text)
        route = self._launcher.route(args)
        return f"{route.describe()}; gatejit's kernel: {kernel}" if route is not None else kernel


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
                  *, runtime: Optional[Runtime] = None, weight_scale=None, out_scale=None):
    """``act(hidden @ weight.T) * attn``; see :meth:`Runtime.gate_epilogue` for the arguments.

    On the default runtime this goes through the torch custom ops
    (``torch.ops.gatejit.gate_epilogue``, ``gate_epilogue_out`` when ``out``
    is given, ``gate_epilogue_inplace`` when ``out is attn``), so it works
    under ``torch.compile(fullgraph=True)`` and in CUDA graphs. With
    ``runtime=`` it calls that runtime directly (eager only).
    """
    if runtime is not None:
        return runtime.gate_epilogue(hidden, weight, attn, out, act, rounding, weight_scale=weight_scale,
                                     out_scale=out_scale)
    return _ops_module().gate_epilogue(hidden, weight, attn, out, act, rounding, weight_scale=weight_scale,
                                       out_scale=out_scale)


def launch_count() -> int:
    """Kernels launched by the default runtime so far; see :attr:`Runtime.launch_count`."""
    return default_runtime().launch_count


def prepare(hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
            *, runtime: Optional[Runtime] = None, weight_scale=None, out_scale=None) -> None:
    """Resolve and load without launching (before CUDA graph capture); see :meth:`Runtime.prepare`."""
    (runtime or default_runtime()).prepare(hidden, weight, attn, out, act, rounding, weight_scale=weight_scale,
                                           out_scale=out_scale)


def explain(hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
            *, runtime: Optional[Runtime] = None, weight_scale=None, out_scale=None) -> str:
    """Which kernel path the call takes and why; see :meth:`Runtime.explain`."""
    return (runtime or default_runtime()).explain(hidden, weight, attn, out, act, rounding,
                                                  weight_scale=weight_scale, out_scale=out_scale)


def load_bundle(path: PathLike) -> None:
    """Loads a bundle into the default runtime."""
    default_runtime().load_bundle(path)


def explain_contract(contract: Union[str, Mapping[str, Any]]) -> str:
    """:meth:`Runtime.explain_contract` on the default runtime."""
    return default_runtime().explain_contract(contract)


def resolve_contract(contract: Union[str, Mapping[str, Any]]) -> str:
    """:meth:`Runtime.resolve_contract` on the default runtime."""
    return default_runtime().resolve_contract(contract)


# --- the torch custom ops -------------------------------------------------------------

_ops = None


def _ops_module():
    """gatejit.ops (registers the torch.library ops on import; needs torch)."""
    global _ops
    if _ops is None:
        from . import ops as module
        _ops = module
    return _ops


from ._support import SCALE_LAYOUTS, prepare_for, supports, supports_contract, supports_shape  # noqa: E402

# Where torch is installed, register the ops now (importing torch), so that
# torch.ops.gatejit.* exist and a torch.compile'd function that calls
# gate_epilogue never has to import anything, whatever the import order.
# Without torch, `import gatejit` and the contract-level calls still work.
if sys.modules.get("torch") is not None or (
        "torch" not in sys.modules and importlib.util.find_spec("torch") is not None):
    try:
        _ops_module()
    except ImportError:  # a torch that cannot be imported: the tensor API says why when used
        pass
