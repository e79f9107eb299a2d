"""ctypes declarations of the gatejit C API (runtime/include/gatejit/gatejit.h).

This layer knows nothing about torch: it finds and loads libgatejit.so, mirrors
the C structs and enums, declares every entry point's argument and return
types, and turns status objects into :class:`GatejitError`. ``gatejit``'s
public API (``__init__.py``) is built on it.

The struct layouts below must match gatejit.h exactly (x86-64 / aarch64 SysV:
a C enum is a 4-byte int; int64_t fields are 8-byte aligned):

    gatejit_tensor_t           40 bytes: data@0 dtype@8 rows@16 cols@24 ld@32
    gatejit_gate_args_t       272 bytes: struct_size@0 hidden@8 weight@48
                                         attn@88 out@128 act@168 rounding@172
                                         device_kind@176 device_ordinal@180
                                         stream@184 weight_scale@192
                                         out_scale@232
    gatejit_runtime_options_t  56 bytes: struct_size@0 cache_dir@8
                                         disable_cache@16 cache_read_only@20
                                         disable_jit@24 bundle_path@32
                                         record_path@40
                                         disable_shipped_bundle@48
                                         jit_mode@52

Both structs begin with ``struct_size`` (API version 2); their constructors
here set it, and take the other fields positionally as before. API version 3
appended ``weight_scale`` (the fp32 scales of an fp8 e4m3 weight) to
gatejit_gate_args_t; API version 4 appended ``out_scale`` (the fp32 scales
the kernel writes for an fp8 e4m3 out, one per row and 128 columns). This
binding passes the version-4 size (272), and leaves ``weight_scale`` /
``out_scale`` all zero for a bf16 / f16 / f32 weight / out. API version 5
appended ``record_path``, ``disable_shipped_bundle`` and ``jit_mode`` to
gatejit_runtime_options_t.

:func:`check_layout` asserts these numbers at load time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import threading
from pathlib import Path
from typing import List, Optional

__all__ = [
    "GatejitError",
    "GatejitArgumentError",
    "Tensor",
    "GateArgs",
    "RuntimeOptions",
    "load_library",
    "library_path",
    "check",
    "take_string",
    "STATUS_NAMES",
]

# --- enums (values as in gatejit.h) -----------------------------------------

API_VERSION = 5  # GATEJIT_API_VERSION this binding was written against

# gatejit_jit_mode_t, by the names Runtime(jit=...) takes
JIT_MODES = {None: 0, "sync": 1, "background": 2, "off": 3}

OK = 0
INVALID_ARGUMENT = 1
UNSUPPORTED = 2
NOT_FOUND = 3
CORRUPT = 4
IO_ERROR = 5
PERMISSION_DENIED = 6
COMPILE_ERROR = 7
DEVICE_ERROR = 8
INTERNAL = 9

STATUS_NAMES = {
    OK: "OK",
    INVALID_ARGUMENT: "INVALID_ARGUMENT",
    UNSUPPORTED: "UNSUPPORTED",
    NOT_FOUND: "NOT_FOUND",
    CORRUPT: "CORRUPT",
    IO_ERROR: "IO_ERROR",
    PERMISSION_DENIED: "PERMISSION_DENIED",
    COMPILE_ERROR: "COMPILE_ERROR",
    DEVICE_ERROR: "DEVICE_ERROR",
    INTERNAL: "INTERNAL",
}

BF16 = 0
F16 = 1
F32 = 2
FP8_E4M3 = 3  # OCP e4m3 ("e4m3fn", torch.float8_e4m3fn); weights only, with weight_scale

#: Rows/columns of the weight that one block scale covers (weight_scale
#: [ceil(N / 128), ceil(K / 128)], DeepSeek-V3's layout).
SCALE_BLOCK = 128

SIGMOID = 0
SILU = 1

ROUNDING_BOUNDARY = 0
ROUNDING_FUSED = 1

DEVICE_CUDA = 1
DEVICE_HIP = 2


# --- errors ------------------------------------------------------------------

# The environment variable the compiler reads its tuning override from; its
# errors begin with the name.
TUNING_OVERRIDE = "GATEJIT_MMA_TUNING"


class GatejitError(RuntimeError):
    """An error from gatejit: a rejected argument or a runtime status.

    Attributes:
        code: the runtime's status code (an int, see ``STATUS_NAMES``);
            ``INVALID_ARGUMENT`` for errors found by the Python checks.
        code_name: the code's name, e.g. ``"UNSUPPORTED"``.
        argument: the name of the offending argument when the Python
            checks found it (``"hidden"``, ``"weight"``, ``"act"``, ...),
            else ``None``.
    """

    def __init__(self, message: str, code: int = INTERNAL, argument: Optional[str] = None):
        super().__init__(message)
        self.code = code
        self.code_name = STATUS_NAMES.get(code, f"code {code}")
        self.argument = argument


class GatejitArgumentError(GatejitError, ValueError):
    """An argument rejected by the Python-side checks (also a ValueError), or
    the compiler's tuning override (``argument`` ``"GATEJIT_MMA_TUNING"``)."""

    def __init__(self, argument: str, message: str):
        super().__init__(message, INVALID_ARGUMENT, argument)


# --- structs -----------------------------------------------------------------


class Tensor(ctypes.Structure):
    """gatejit_tensor_t: a 2-D row-major device tensor (rows x cols, row stride ld)."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("rows", ctypes.c_int64),
        ("cols", ctypes.c_int64),
        ("ld", ctypes.c_int64),
    ]


class _Sized(ctypes.Structure):
    """A C API struct that begins with struct_size: set to this struct's size
    on construction; the other fields keep their positional order."""

    def __init__(self, *args, **kwargs):
        super().__init__(ctypes.sizeof(type(self)), *args, **kwargs)


class GateArgs(_Sized):
    """gatejit_gate_args_t: one call's four tensors, activation, rounding, device and stream,
    (API version 3) the fp32 scales of an fp8 weight and (API version 4) those the kernel
    writes for an fp8 out (all zero otherwise)."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("hidden", Tensor),
        ("weight", Tensor),
        ("attn", Tensor),
        ("out", Tensor),
        ("act", ctypes.c_int),
        ("rounding", ctypes.c_int),
        ("device_kind", ctypes.c_int),
        ("device_ordinal", ctypes.c_int),
        ("stream", ctypes.c_void_p),
        ("weight_scale", Tensor),
        ("out_scale", Tensor),
    ]


class RuntimeOptions(_Sized):
    """gatejit_runtime_options_t: options of gatejit_runtime_create (NULL fields = defaults/env)."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("cache_dir", ctypes.c_char_p),
        ("disable_cache", ctypes.c_int),
        ("cache_read_only", ctypes.c_int),
        ("disable_jit", ctypes.c_int),
        ("bundle_path", ctypes.c_char_p),
        ("record_path", ctypes.c_char_p),
        ("disable_shipped_bundle", ctypes.c_int),
        ("jit_mode", ctypes.c_int),
    ]


def check_layout() -> None:
    """Asserts the struct sizes and offsets documented in this module's docstring."""
    expected = {
        Tensor: (40, {"data": 0, "dtype": 8, "rows": 16, "cols": 24, "ld": 32}),
        GateArgs: (
            272,
            {
                "struct_size": 0,
                "hidden": 8,
                "weight": 48,
                "attn": 88,
                "out": 128,
                "act": 168,
                "rounding": 172,
                "device_kind": 176,
                "device_ordinal": 180,
                "stream": 184,
                "weight_scale": 192,
                "out_scale": 232,
            },
        ),
        RuntimeOptions: (
            56,
            {
                "struct_size": 0,
                "cache_dir": 8,
                "disable_cache": 16,
                "cache_read_only": 20,
                "disable_jit": 24,
                "bundle_path": 32,
                "record_path": 40,
                "disable_shipped_bundle": 48,
                "jit_mode": 52,
            },
        ),
    }
    for struct, (size, offsets) in expected.items():
        if ctypes.sizeof(struct) != size:
            raise GatejitError(
                f"ctypes layout of {struct.__name__} is {ctypes.sizeof(struct)} bytes, gatejit.h has {size}: "
                "this platform's ABI differs from the one the binding was written for"
            )
        for name, offset in offsets.items():
            got = getattr(struct, name).offset
            if got != offset:
                raise GatejitError(f"ctypes layout: {struct.__name__}.{name} at offset {got}, gatejit.h has {offset}")


# --- library loading ----------------------------------------------------------

_LIB_NAME = "libgatejit.so"
# The runtime with the compiler linked in (the JIT); when packaged beside the
# binding it is preferred, as it serves everything libgatejit.so does.
_JIT_LIB_NAME = "libgatejit_jit.so"
_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None


def _candidates() -> List[str]:
    """Where to look for the library when $GATEJIT_LIBRARY is unset, in order.

    1. inside the package (what ``pip install .`` puts there), the JIT library first;
    2. an installed tree (``cmake --install``, the .deb packages): the package
       lives in ``<libdir>/gatejit/python/gatejit`` and the libraries in
       ``<libdir>``, the JIT library first, by SONAME (the unversioned links
       come with the dev package only);
    3. a source checkout: ``build-py/runtime``, then the other ``build*/runtime``
       folders of the repository, newest first.
    """
    package_dir = Path(__file__).resolve().parent
    out = [str(package_dir / _JIT_LIB_NAME), str(package_dir / _LIB_NAME)]
    if package_dir.parent.name == "python" and package_dir.parent.parent.name == "gatejit":
        libdir = package_dir.parent.parent.parent
        out += [str(libdir / name) for name in (_JIT_LIB_NAME + ".0", _JIT_LIB_NAME, _LIB_NAME + ".0", _LIB_NAME)]
    repo = package_dir.parent.parent  # python/gatejit -> repository root
    if (repo / "CMakeLists.txt").is_file() and (repo / "runtime").is_dir():
        out.append(str(repo / "build-py" / "runtime" / _LIB_NAME))
        others = glob.glob(str(repo / "build*" / "runtime" / _LIB_NAME))
        others.sort(key=lambda p: os.path.getmtime(p) if os.path.exists(p) else 0.0, reverse=True)
        out += [p for p in others if p not in out]
    return out


def _declare(lib: ctypes.CDLL) -> None:
    """Declares argument and return types of every entry point used."""
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    status = ctypes.c_void_p  # gatejit_status_t: opaque; NULL (None) means success
    sigs = {
        "gatejit_status_code": (ctypes.c_int, [status]),
        "gatejit_status_message": (cp, [status]),
        "gatejit_status_free": (None, [status]),
        "gatejit_runtime_create": (status, [ctypes.POINTER(RuntimeOptions), ctypes.POINTER(vp)]),
        "gatejit_runtime_destroy": (None, [vp]),
        "gatejit_runtime_load_bundle": (status, [vp, cp]),
        "gatejit_gate_epilogue": (status, [vp, ctypes.POINTER(GateArgs)]),
        "gatejit_prepare": (status, [vp, ctypes.POINTER(GateArgs)]),
        # out_text is declared void** (not char**) so the exact pointer can be
        # handed back to gatejit_string_free.
        "gatejit_explain": (status, [vp, ctypes.POINTER(GateArgs), ctypes.POINTER(vp)]),
        "gatejit_explain_contract_json": (status, [vp, cp, ctypes.POINTER(vp)]),
        "gatejit_resolve_contract_json": (status, [vp, cp, ctypes.POINTER(vp)]),
        "gatejit_string_free": (None, [vp]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)  # AttributeError: not a gatejit library
        fn.restype = restype
        fn.argtypes = argtypes
    # Defined by the compiler library only; absent from a runtime-only build.
    try:
        fn = lib.gatejit_runtime_attach_jit
    except AttributeError:
        pass
    else:
        fn.restype = status
        fn.argtypes = [vp]


def _open(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    try:
        _declare(lib)
    except AttributeError as e:
        raise OSError(f"{path} is not a gatejit library: {e}") from None
    # The structs' layout changes with the API version: a library of another
    # version would read every field at the wrong offset.
    version = getattr(lib, "gatejit_api_version", None)
    if version is not None:
        version.restype, version.argtypes = ctypes.c_int, []
    found = 1 if version is None else version()
    if found != API_VERSION:
        raise OSError(
            f"{path} is gatejit API version {found}; this binding needs {API_VERSION} "
            "(rebuild or reinstall the library and the package together)"
        )
    return lib


def load_library() -> ctypes.CDLL:
    """Loads libgatejit.so once (thread-safe) and returns it.

    Search order: ``$GATEJIT_LIBRARY`` (a file, or a folder holding
    libgatejit.so; when set, nothing else is tried), then :func:`_candidates`
    (inside the package, an installed tree's libdir, a source checkout's build
    folders), then the system's library path.
    Raises GatejitError (code NOT_FOUND) listing what was tried.
    """
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        check_layout()
        tried = []
        env = os.environ.get("GATEJIT_LIBRARY")
        if env:
            path = os.path.join(env, _LIB_NAME) if os.path.isdir(env) else env
            try:
                lib = _open(path)
            except OSError as e:
                raise GatejitError(f"GATEJIT_LIBRARY={env}: cannot load {path}: {e}", NOT_FOUND) from None
            _lib, _lib_path = lib, path
            return lib
        for path in _candidates():
            if not os.path.exists(path):
                continue
            try:
                lib = _open(path)
            except OSError as e:  # e.g. a sanitizer build that needs its runtime preloaded
                tried.append(f"{path}: {e}")
                continue
            _lib, _lib_path = lib, path
            return lib
        system = ctypes.util.find_library("gatejit")
        if system:
            try:
                lib = _open(system)
            except OSError as e:
                tried.append(f"{system}: {e}")
            else:
                _lib, _lib_path = lib, system
                return lib
        detail = "".join(f"\n  - {t}" for t in tried)
        raise GatejitError(
            "libgatejit.so not found: `pip install .` from the repository puts it inside the package; "
            "or set GATEJIT_LIBRARY=/path/to/libgatejit.so; or build it with "
            "`cmake -S . -B build-py -G Ninja -DGATEJIT_BUILD_COMPILER=OFF -DGATEJIT_BUILD_BENCHMARKS=OFF "
            "-DGATEJIT_BUILD_TESTS=OFF && ninja -C build-py gatejit_shared`" + (f"; tried:{detail}" if detail else ""),
            NOT_FOUND,
        )


def library_path() -> str:
    """The path libgatejit.so was loaded from (loads it if needed)."""
    load_library()
    assert _lib_path is not None
    return _lib_path


# --- status objects and strings ------------------------------------------------


def check(status: Optional[int], what: str) -> None:
    """Raises GatejitError for a non-NULL status, always freeing it.

    The message is ``"<what>: <runtime message>"``; ``code`` is the runtime's.
    """
    if not status:
        return
    lib = load_library()
    try:
        code = int(lib.gatejit_status_code(status))
        raw = lib.gatejit_status_message(status)
        message = raw.decode("utf-8", errors="replace") if raw else ""
    finally:
        lib.gatejit_status_free(status)
    text = f"{what}: {message}" if message else f"{what}: failed ({STATUS_NAMES.get(code, code)})"
    if code == INVALID_ARGUMENT and message.startswith(TUNING_OVERRIDE + ": "):
        # The compiler refused the tuning override: an argument, from the environment.
        raise GatejitArgumentError(TUNING_OVERRIDE, text)
    raise GatejitError(text, code)


def take_string(ptr: ctypes.c_void_p) -> str:
    """Copies a string returned by the runtime and frees it with gatejit_string_free."""
    if not ptr.value:
        return ""
    lib = load_library()
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", errors="replace")
    finally:
        lib.gatejit_string_free(ptr)
