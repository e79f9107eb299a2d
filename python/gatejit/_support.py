"""Deciding and warming up before serving: which calls gatejit can serve, and
resolving every batch size an engine will capture before it captures.

* :func:`supports` (tensors), :func:`supports_shape` (numbers, on a device) and
  :func:`supports_contract` (a contract, no device) answer True or False:
  they never raise and never compile. They ask the runtime the same chain a
  call would walk (bundles, cache, the JIT when attached) through
  ``gatejit_explain``, so True means a kernel is there to load or the JIT
  would make one.
* :func:`prepare_for` resolves and loads (or JIT-compiles) the kernel of each
  M for packed tensors, on the current stream, and remembers the contracts,
  so that a CUDA graph capture of those calls reads and loads nothing.

These run eagerly, at model load: they call into the C library, which
``torch.compile`` cannot trace. Tensors without storage (fake or meta
tensors, as inside a compiled region) make :func:`supports` answer False.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Union

from . import _capi
from ._call import (_FP8_ACTIVATION_CODES, _FRESH_ALLOCATION, ACTIVATIONS, OUT_GROUP, ROUNDINGS, _Call, _choice,
                    _torch, fp8_dtype, scale_shapes)
from ._capi import GatejitArgumentError, GatejitError

_DTYPE_NAMES = {"bf16": _capi.BF16, "bfloat16": _capi.BF16, "f16": _capi.F16, "float16": _capi.F16,
                "half": _capi.F16, "f32": _capi.F32, "float32": _capi.F32}
#: Names of weight_dtype for an fp8 e4m3 weight (besides torch.float8_e4m3fn).
_FP8_NAMES = {"fp8_e4m3": _capi.FP8_E4M3, "fp8": _capi.FP8_E4M3, "e4m3": _capi.FP8_E4M3,
              "float8_e4m3fn": _capi.FP8_E4M3}
#: Layouts of the scales of an fp8 weight (the values of weight_scale given as a name).
SCALE_LAYOUTS = ("per_channel", "block128")


def _runtime(runtime):
    if runtime is not None:
        return runtime
    from . import default_runtime
    return default_runtime()


def _dtype_code(dtype: Any) -> int:
    if isinstance(dtype, str):
        return _choice("dtype", dtype, _DTYPE_NAMES)
    torch = _torch()
    codes = {torch.bfloat16: _capi.BF16, torch.float16: _capi.F16, torch.float32: _capi.F32}
    if dtype in codes:
        return codes[dtype]
    raise GatejitArgumentError(
        "dtype", f"dtype = {dtype!r}: allowed are torch.bfloat16, torch.float16, torch.float32 (or 'bf16', 'f16', 'f32'); "
        "an fp8 weight is weight_dtype=torch.float8_e4m3fn")


def _names_fp8(dtype: Any) -> bool:
    """Whether `dtype` names fp8 e4m3: one of its names, or torch.float8_e4m3fn."""
    if isinstance(dtype, str):
        return dtype in _FP8_NAMES
    return fp8_dtype() is not None and dtype == fp8_dtype()


def _weight_code(weight_dtype: Any, code: int) -> int:
    """The weight's C dtype: the activations' (weight_dtype None or equal), or FP8_E4M3."""
    if weight_dtype is None:
        return code
    if _names_fp8(weight_dtype):
        wcode = _capi.FP8_E4M3
    else:
        try:
            wcode = _dtype_code(weight_dtype)
        except GatejitArgumentError:
            wcode = None
        if wcode != code:
            raise GatejitArgumentError(
                "weight_dtype", f"weight_dtype = {weight_dtype!r}: allowed are None (the dtype of the activations), "
                "torch.float8_e4m3fn or 'fp8_e4m3'")
    if wcode == _capi.FP8_E4M3 and code not in _FP8_ACTIVATION_CODES:
        raise GatejitArgumentError(
            "weight_dtype", "weight_dtype = fp8 e4m3 needs bfloat16 or float16 activations (dtype)")
    return wcode


def _scale_descriptor(weight_scale: Any, wcode: int, n: int, k: int) -> _capi.Tensor:
    """The weight_scale descriptor of packed scales: weight_scale names the
    layout ("per_channel" or "block128") or is a scale tensor whose shape says it."""
    if wcode != _capi.FP8_E4M3:
        if weight_scale is not None:
            raise GatejitArgumentError(
                "weight_scale", f"weight_scale = {weight_scale!r} is given without an fp8 weight: "
                "pass weight_dtype=torch.float8_e4m3fn, or weight_scale=None")
        return _capi.Tensor()
    shapes = scale_shapes(n, k)
    layout = None
    if isinstance(weight_scale, str) and weight_scale in SCALE_LAYOUTS:
        layout = weight_scale
    elif weight_scale is not None and not isinstance(weight_scale, str) and hasattr(weight_scale, "shape"):
        shape = tuple(int(d) for d in weight_scale.shape)
        layout = "per_channel" if shape in ((n,), shapes["per_channel"]) else \
            "block128" if shape == shapes["block128"] else None
    if layout is None:
        raise GatejitArgumentError(
            "weight_scale", f"weight_scale = {weight_scale!r}: an fp8 weight needs its scales' layout, "
            f"'per_channel' ([N, 1] = {list(shapes['per_channel'])}) or 'block128' ([ceil(N/128), ceil(K/128)] = "
            f"{list(shapes['block128'])}), or a scale tensor of one of those shapes")
    rows, cols = shapes[layout]
    return _capi.Tensor(_FRESH_ALLOCATION, _capi.F32, rows, cols, cols)


def _is_fp8_out(out_dtype: Any, code: int) -> bool:
    """Whether `out_dtype` asks for an fp8 e4m3 out (None: the activations' dtype)."""
    if out_dtype is None:
        return False
    if _names_fp8(out_dtype):
        return True
    try:
        same = _dtype_code(out_dtype) == code
    except GatejitArgumentError:
        same = False
    if not same:
        raise GatejitArgumentError(
            "out_dtype", f"out_dtype = {out_dtype!r}: allowed are None (the dtype of the activations), "
            "torch.float8_e4m3fn or 'fp8_e4m3' (quantised per token group of 128 columns, with out_scale)")
    return False


# An fp8 out and its scales may not overlap attn (or each other): packed
# calls place them at their own stand-in addresses, 16-byte aligned as fresh
# allocations are.
_FRESH_OUT = 1 << 40
_FRESH_OUT_SCALE = 1 << 41


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GatejitArgumentError(name, f"{name} = {value!r}: expected an int >= 1")
    return value


def _device_index(device: Any) -> int:
    torch = _torch()
    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "cuda":
        raise GatejitArgumentError("device", f"device = {device!r}: gatejit needs a CUDA device")
    return d.index if d.index is not None else torch.cuda.current_device()


def packed_args(m: int, n: int, k: int, dtype: Any, act: str, rounding: str, device: Any,
                weight_dtype: Any = None, weight_scale: Any = None, out_dtype: Any = None) -> _capi.GateArgs:
    """The descriptors of a call on fresh packed tensors (hidden [m, k], weight
    [n, k], attn and out [m, n], for an fp8 weight its packed scales, for an
    fp8 out its scales [m, n / 128]) on `device`, on its current stream; the
    pointers stand in for fresh allocations (their alignment is what counts)."""
    torch = _torch()
    m, n, k = _positive("m", m), _positive("n", n), _positive("k", k)
    code = _dtype_code(dtype)
    wcode = _weight_code(weight_dtype, code)
    args = _capi.GateArgs()
    args.hidden = _capi.Tensor(_FRESH_ALLOCATION, code, m, k, k)
    args.weight = _capi.Tensor(_FRESH_ALLOCATION, wcode, n, k, k)
    args.weight_scale = _scale_descriptor(weight_scale, wcode, n, k)
    args.attn = _capi.Tensor(_FRESH_ALLOCATION, code, m, n, n)
    if _is_fp8_out(out_dtype, code):
        groups = n // OUT_GROUP  # N not a multiple of 128: the C API refuses the contract, naming it
        args.out = _capi.Tensor(_FRESH_OUT, _capi.FP8_E4M3, m, n, n)
        args.out_scale = _capi.Tensor(_FRESH_OUT_SCALE, _capi.F32, m, max(groups, 1), max(groups, 1))
    else:
        args.out = _capi.Tensor(_FRESH_ALLOCATION, code, m, n, n)
    args.act = _choice("act", act, ACTIVATIONS)
    args.rounding = _choice("rounding", rounding, ROUNDINGS)
    args.device_kind = _capi.DEVICE_HIP if getattr(torch.version, "hip", None) else _capi.DEVICE_CUDA
    args.device_ordinal = _device_index(device)
    args.stream = torch.cuda.current_stream(args.device_ordinal).cuda_stream or None
    return args


def supports(hidden, weight, attn, out=None, act: str = "sigmoid", rounding: str = "boundary",
             *, runtime=None, weight_scale=None) -> bool:
    """Whether gatejit can serve this call: the arguments pass every check and
    a kernel for its contract is in a loaded bundle or the cache, or the JIT
    is attached. Never raises, never compiles, launches nothing."""
    try:
        if any(_without_storage(t) for t in (hidden, weight, attn, out, weight_scale)):
            return False
        call = _Call(hidden, weight, attn, out, act, rounding, weight_scale)
        if call.empty:
            return True
        _runtime(runtime)._explain_args(call.args)
        return True
    except Exception:  # noqa: BLE001 - the contract of this function is a bool
        return False


def _without_storage(t: Any) -> bool:
    """A fake or meta tensor (tracing): it has no data pointer to judge alignment by."""
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        return False
    from torch._subclasses.fake_tensor import FakeTensor
    return t.is_meta or isinstance(t, FakeTensor)


def supports_shape(m: int, n: int, k: int, dtype: Any, act: str = "sigmoid", rounding: str = "boundary",
                   *, device: Any = None, runtime=None, weight_dtype: Any = None, weight_scale: Any = None,
                   out_dtype: Any = None) -> bool:
    """:func:`supports` for fresh packed tensors of these sizes on `device`
    (default: torch's current CUDA device). An fp8 weight: ``weight_dtype=
    torch.float8_e4m3fn`` and ``weight_scale="per_channel"`` or ``"block128"``
    (or a scale tensor, whose shape says which). An fp8 out (quantised per
    token group, with its scales): ``out_dtype=torch.float8_e4m3fn``. Never
    raises, never compiles."""
    try:
        _runtime(runtime)._explain_args(
            packed_args(m, n, k, dtype, act, rounding, device, weight_dtype, weight_scale, out_dtype))
        return True
    except Exception:  # noqa: BLE001
        return False


def supports_contract(contract: Union[str, Mapping[str, Any]], *, runtime=None) -> bool:
    """The contract-level twin of :func:`supports`: whether a contract (a dict
    or JSON text, keys as in :meth:`Runtime.explain_contract`, with a
    ``target``) can be served, without a device. Never raises, never compiles."""
    try:
        _runtime(runtime).explain_contract(contract)
        return True
    except Exception:  # noqa: BLE001
        return False


def prepare_for(m_values: Iterable[int], n: int, k: int, dtype: Any, act: str = "sigmoid",
                rounding: str = "boundary", *, device: Any = None, runtime=None, weight_dtype: Any = None,
                weight_scale: Any = None, out_dtype: Any = None, measure: bool = False) -> Dict[int, str]:
    """Resolves and loads (or JIT-compiles) the kernel of every M in `m_values`
    for packed tensors ([M, k] hidden, [n, k] weight, [M, n] attn and out,
    freshly allocated or at least 16-byte aligned) on `device`, on its current
    stream, before a CUDA graph capture of those calls.

    `dtype` is the activations' (hidden, attn, out) and, by default, the
    weight's. An fp8 e4m3 weight: ``weight_dtype=torch.float8_e4m3fn`` (or
    "fp8_e4m3") and ``weight_scale="per_channel"`` ([N, 1] scales) or
    ``"block128"`` ([ceil(N/128), ceil(K/128)]), or the scale tensor itself.
    An fp8 out quantised per token group (fp32 scales [M, N / 128] beside
    it): ``out_dtype=torch.float8_e4m3fn`` (or "fp8_e4m3").

    Run it on the stream that will be captured: the tiled mma kernels
    (sm_90, M > 16) keep one module instance per stream, loaded by the
    first call on that stream. Returns {M: explanation} (which kernel serves
    each M). Raises GatejitError naming the M no kernel can serve.

    ``measure=True`` (plain weights and outs): for each M, also times the
    kernel against torch's unfused ``attn * act(hidden @ weight.T)`` on this
    device (CUDA graphs over rotating operands, :mod:`gatejit.routing`) and
    keeps the faster: later calls of that contract on this runtime run the
    unfused expression where it won. The explanation and ``explain`` name
    the path and both times. Measure once per process, before capture.
    """
    rt = _runtime(runtime)
    if isinstance(m_values, int):
        m_values = [m_values]
    try:
        ms = [int(m) for m in m_values]
    except (TypeError, ValueError):
        raise GatejitArgumentError("m_values", f"m_values = {m_values!r}: expected an iterable of ints >= 1") from None
    if not ms:
        raise GatejitArgumentError("m_values", "m_values is empty: name at least one batch size")
    if measure:
        _check_measurable(dtype, weight_dtype, weight_scale, out_dtype)
        if _torch().cuda.is_current_stream_capturing():
            raise GatejitError("prepare_for(measure=True) inside a CUDA graph capture: it times graphs of its "
                               "own; measure before the capture", _capi.INVALID_ARGUMENT)
    explained: Dict[int, str] = {}
    for m in sorted(set(ms)):
        if m < 1:
            raise GatejitArgumentError("m_values", f"m_values holds {m}: every M must be >= 1")
        args = packed_args(m, n, k, dtype, act, rounding, device, weight_dtype, weight_scale, out_dtype)
        try:
            rt._launcher.prepare_args(args, f"prepare_for(m={m}, n={n}, k={k})")
        except GatejitError as e:
            if isinstance(e, GatejitArgumentError):
                raise
            raise GatejitError(f"prepare_for: M = {m}: {e}", e.code) from None
        if measure:
            _measure_route(rt, args, m, n, k, act, rounding)
        explained[m] = rt._explain_args(args)
    return explained


def _check_measurable(dtype: Any, weight_dtype: Any, weight_scale: Any, out_dtype: Any) -> None:
    code = _dtype_code(dtype)
    if _weight_code(weight_dtype, code) != code or weight_scale is not None or _is_fp8_out(out_dtype, code):
        raise GatejitArgumentError(
            "measure", "measure=True times the kernel against torch's unfused expression, which exists for "
            "plain bf16/f16/f32 weights and outs only; an fp8 weight's or out's replaced path is the engine's "
            "own (gatejit.integrations.vllm.GatejitOutputGate(measure=True) times that)")


def _measure_route(rt, args: _capi.GateArgs, m: int, n: int, k: int, act: str, rounding: str) -> None:
    """Times this contract's kernel against the unfused expression and records the faster for later calls."""
    from ._call import _dtype_codes
    from .routing import measure_against_torch, unfused_expression
    torch = _torch()
    dtype = {code: t for t, code in _dtype_codes().items()}[args.hidden.dtype]
    device = torch.device("cuda", args.device_ordinal)
    launcher = rt._launcher
    launcher.set_route(args, None)  # measure the kernel itself, whatever was decided before
    decision = measure_against_torch(
        lambda h, w, a, o: launcher.launch(h, w, a, o, act, rounding), m, n, k, dtype, act, device)
    launcher.set_route(args, decision, unfused_expression(act))

