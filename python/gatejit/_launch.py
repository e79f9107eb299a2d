"""The launch path of one Runtime: what a call costs on the host after its first time.

The first call of a given tensor layout validates every argument
(:class:`gatejit._call._Call`), builds the C descriptors once and makes sure
the contract is resolved and loaded (``gatejit_prepare``). Later calls with
the same layout only write the four data pointers and the stream into those
descriptors and call ``gatejit_gate_epilogue``: no validation again, no
allocation, no synchronisation. Entries are per thread (each thread writes
its own descriptors), keyed on everything that was validated: shapes,
strides, dtypes, devices, act, rounding and the pointers' alignment.

Measured routing (:mod:`gatejit.routing`): a contract whose measured
decision is the replaced expression keeps that expression in its entry, and
a call runs it instead of the kernel (and is not counted as a launch).

Background JIT (``jit="background"``): an eager first call is not
prepared first; its launch resolves it, served at once by the best kernel
already loadable while the specialised one compiles.

CUDA graphs: a contract resolved here (by a call, :meth:`Launcher.prepare` or
``gatejit.prepare_for``) is remembered; a call whose contract was never
resolved in this process raises :class:`GatejitError` when it comes inside a
CUDA graph capture, instead of reading bundles and loading a module there.
"""

from __future__ import annotations

import ctypes
import threading
from typing import List

from . import _capi
from ._call import _ALIGN_MASK, _Call, _torch, contract_key, route_key, run_on_device
from ._capi import GatejitArgumentError, GatejitError

# Byte offsets of the fields written per call (see _capi.check_layout).
_OFFSETS = {name: getattr(_capi.GateArgs, name).offset
            for name in ("hidden", "weight", "attn", "out", "stream", "weight_scale", "out_scale")}
_MAX_ENTRIES = 4096  # per thread; cleared when exceeded (a new layout then pays its first-call cost again)


class _Entry:
    """The prebuilt descriptors of one layout and views of the fields written per call."""

    __slots__ = ("args", "ref", "hidden", "weight", "attn", "out", "stream", "scale", "out_scale", "device", "empty",
                 "alias_check", "replaced", "unresolved_key")

    def __init__(self, call: _Call, alias_check: bool, replaced=None, unresolved_key=None):
        self.empty = call.empty
        self.replaced = replaced  # the replaced expression where a measured decision chose it
        self.unresolved_key = unresolved_key  # background JIT: resolved by the first launch, not before it
        self.alias_check = alias_check
        self.device = call.device.index if call.device.index is not None else _torch().cuda.current_device()
        if call.empty:
            return
        args = call.args
        self.args = args
        self.ref = ctypes.byref(args)
        self.hidden = ctypes.c_void_p.from_buffer(args, _OFFSETS["hidden"])  # Tensor.data is its first field
        self.weight = ctypes.c_void_p.from_buffer(args, _OFFSETS["weight"])
        self.attn = ctypes.c_void_p.from_buffer(args, _OFFSETS["attn"])
        self.out = ctypes.c_void_p.from_buffer(args, _OFFSETS["out"])
        self.stream = ctypes.c_void_p.from_buffer(args, _OFFSETS["stream"])
        self.scale = ctypes.c_void_p.from_buffer(args, _OFFSETS["weight_scale"])
        self.out_scale = ctypes.c_void_p.from_buffer(args, _OFFSETS["out_scale"])


class _ThreadState:
    __slots__ = ("entries", "launches")

    def __init__(self):
        self.entries = {}
        self.launches = 0


def _raw_stream_function():
    """torch's current raw CUDA stream of a device index, as an int (0: the legacy default)."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


class Launcher:
    """The per-runtime launch path (see the module docstring). Thread-safe."""

    def __init__(self, runtime):
        self._runtime = runtime
        self._lib = runtime._lib
        self._launch_fn = self._lib.gatejit_gate_epilogue
        self._local = threading.local()
        self._states: List[_ThreadState] = []
        self._states_lock = threading.Lock()
        self._prepared = set()        # resolved by gatejit_prepare (which also waits for a background compile)
        self._launch_resolved = set()  # background JIT: resolved by a first launch (prepare still waits for them)
        self._prepared_lock = threading.Lock()
        self._raw_stream = None
        self._routes = {}  # route_key -> (RouteDecision, the replaced expression or None)
        # Background JIT: an eager first call launches at once (the runtime serves what it has while
        # the specialised kernel compiles) instead of waiting in gatejit_prepare.
        self._serve_at_once = runtime.jit_mode == "background"

    # -- bookkeeping -------------------------------------------------------------

    def _state(self) -> _ThreadState:
        state = _ThreadState()
        self._local.state = state
        with self._states_lock:
            self._states.append(state)
        return state

    @property
    def launch_count(self) -> int:
        """Kernel launches this runtime has made (successful gatejit_gate_epilogue calls), all threads."""
        with self._states_lock:
            return sum(s.launches for s in self._states)

    # -- resolving -------------------------------------------------------------------

    def prepare_args(self, args: _capi.GateArgs, what: str = "prepare") -> None:
        """Resolves and loads the kernel of `args` (gatejit_prepare) unless done before."""
        key = contract_key(args)
        if key in self._prepared:
            return
        torch = _torch()
        if torch.cuda.is_current_stream_capturing():
            if key in self._launch_resolved:
                return  # served by what a launch loaded; nothing is loaded inside the capture
            raise GatejitError(
                f"{what}: the first use of this contract ({_describe(args)}) is inside a CUDA graph capture, "
                "where reading bundles and loading a module is not allowed; resolve it before capture with "
                "gatejit.prepare_for(m_values, n, k, dtype, act, rounding) or gatejit.prepare(...) (same layout), "
                "or make one eager call first",
                _capi.INVALID_ARGUMENT,
            )
        _capi.check(run_on_device(self._lib.gatejit_prepare, self._runtime.handle, args), what)
        with self._prepared_lock:
            self._prepared.add(key)

    # -- measured routing ---------------------------------------------------------------

    def set_route(self, args: _capi.GateArgs, decision, replaced=None) -> None:
        """Records a measured decision for the contract of `args` (None forgets it); `replaced`
        is the expression calls run where the decision is not gatejit. Built entries are
        dropped so that the next call of every layout sees it."""
        with self._states_lock:
            if decision is None:
                self._routes.pop(route_key(args), None)
            else:
                self._routes[route_key(args)] = (decision, None if decision.takes_gatejit else replaced)
            for state in self._states:
                state.entries.clear()

    def route(self, args: _capi.GateArgs):
        """The measured decision for the contract of `args`, or None."""
        found = self._routes.get(route_key(args))
        return found[0] if found else None

    # -- launching -------------------------------------------------------------------

    def launch(self, hidden, weight, attn, out, act: str, rounding: str, weight_scale=None, out_scale=None) -> None:
        """``out = act(hidden @ weight.T) * attn`` on torch's current stream of the tensors' device
        (the weight's value is weight * weight_scale for an fp8 weight; an fp8 out's scales go to
        out_scale)."""
        try:
            state = self._local.state
        except AttributeError:
            state = self._state()
        try:
            hp, wp, ap, op = hidden.data_ptr(), weight.data_ptr(), attn.data_ptr(), out.data_ptr()
            if weight_scale is None:
                sp, scale_key = 0, None
            else:
                sp = weight_scale.data_ptr()
                scale_key = (weight_scale.shape, weight_scale.stride(), weight_scale.dtype,
                             weight_scale.get_device(), sp & _ALIGN_MASK)
            if out_scale is None:
                osp, out_scale_key = 0, None
            else:
                osp = out_scale.data_ptr()
                out_scale_key = (out_scale.shape, out_scale.stride(), out_scale.dtype, out_scale.get_device(),
                                 osp & _ALIGN_MASK)
            key = (hidden.shape, hidden.stride(), weight.shape, weight.stride(), attn.shape, attn.stride(),
                   out.shape, out.stride(), hidden.dtype, weight.dtype, attn.dtype, out.dtype,
                   hidden.get_device(), weight.get_device(), attn.get_device(), out.get_device(),
                   act, rounding, hp & _ALIGN_MASK, wp & _ALIGN_MASK, ap & _ALIGN_MASK, op & _ALIGN_MASK, scale_key,
                   out_scale_key)
            entry = state.entries.get(key)
        except (AttributeError, TypeError, RuntimeError):
            # Not tensors, or tensors without storage: the full checks say which argument.
            key, entry = None, None
        if entry is None:
            entry = self._first_call(state, key, hidden, weight, attn, out, act, rounding, weight_scale, out_scale)
        if entry.empty:
            return
        if entry.replaced is not None:
            entry.replaced(hidden, weight, attn, out)
            return
        if entry.alias_check and ap == op:
            raise GatejitArgumentError(
                "out", "out shares attn's memory with different strides: pass out=attn itself, or a separate tensor")
        entry.hidden.value = hp
        entry.weight.value = wp
        entry.attn.value = ap
        entry.out.value = op
        if sp:
            entry.scale.value = sp
        if osp:
            entry.out_scale.value = osp
        entry.stream.value = self._raw_stream(entry.device) or None
        status = self._launch_fn(self._runtime.handle, entry.ref)
        if status:
            _capi.check(status, "gate_epilogue")
        state.launches += 1
        if entry.unresolved_key is not None:  # resolved by this launch: a later capture may use it
            with self._prepared_lock:
                self._launch_resolved.add(entry.unresolved_key)
            entry.unresolved_key = None

    def _first_call(self, state: _ThreadState, key, hidden, weight, attn, out, act, rounding, weight_scale,
                    out_scale=None) -> _Entry:
        # raises GatejitArgumentError naming the argument
        call = _Call(hidden, weight, attn, out, act, rounding, weight_scale, out_scale)
        if key is None:  # pragma: no cover - _Call rejects what made the key fail
            raise GatejitError("gate_epilogue: could not describe the arguments", _capi.INVALID_ARGUMENT)
        if self._raw_stream is None:
            self._raw_stream = _raw_stream_function()
        unresolved = None
        if not call.empty:
            if self._serve_at_once and not _torch().cuda.is_current_stream_capturing():
                unresolved = contract_key(call.args)
            else:
                self.prepare_args(call.args, "gate_epilogue")
        # Read after resolving (which may take a compile's time): a route set meanwhile counts.
        route = self._routes.get(route_key(call.args)) if self._routes and not call.empty else None
        entry = _Entry(call, alias_check=tuple(attn.stride()) != tuple(out.stride()),
                       replaced=route[1] if route else None, unresolved_key=unresolved)
        if len(state.entries) >= _MAX_ENTRIES:
            state.entries.clear()
        state.entries[key] = entry
        return entry


def _describe(args: _capi.GateArgs) -> str:
    names = {_capi.BF16: "bf16", _capi.F16: "f16", _capi.F32: "f32", _capi.FP8_E4M3: "fp8_e4m3"}
    acts = {_capi.SIGMOID: "sigmoid", _capi.SILU: "silu"}
    roundings = {_capi.ROUNDING_BOUNDARY: "boundary", _capi.ROUNDING_FUSED: "fused"}
    weight = ""
    if args.weight.dtype != args.hidden.dtype:
        scale = args.weight_scale
        layout = "per_channel" if scale.cols == 1 and scale.rows == args.weight.rows else "block128"
        weight = f"weight {names.get(args.weight.dtype)} scales {layout} [{scale.rows}, {scale.cols}] "
    return (f"M={args.attn.rows} N={args.weight.rows} K={args.weight.cols} {names.get(args.hidden.dtype)} {weight}"
            f"act={acts.get(args.act)} rounding={roundings.get(args.rounding)} "
            f"ld_hidden={args.hidden.ld} ld_weight={args.weight.ld} ld_attn={args.attn.ld} ld_out={args.out.ld} "
            f"device {args.device_ordinal}")
