"""The ctypes mirror of the C API (gatejit._capi) against gatejit.h itself, on
any machine: no GPU, no torch and no libgatejit.so needed.

A small C program compiled against runtime/include/gatejit/gatejit.h prints
sizeof and offsetof of every field of the three structs and the enum values
the binding uses; the test compares them with the ctypes structs and
constants. Without a C compiler that part is skipped; the API version and the
enum values are then still read from the header's text.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gatejit import _capi

REPO = Path(__file__).resolve().parents[2]
HEADER = REPO / "runtime" / "include" / "gatejit" / "gatejit.h"

STRUCTS = {
    "gatejit_tensor_t": _capi.Tensor,
    "gatejit_gate_args_t": _capi.GateArgs,
    "gatejit_runtime_options_t": _capi.RuntimeOptions,
}
ENUMS = {
    "GATEJIT_BF16": _capi.BF16, "GATEJIT_F16": _capi.F16, "GATEJIT_F32": _capi.F32,
    "GATEJIT_FP8_E4M3": _capi.FP8_E4M3,
    "GATEJIT_SIGMOID": _capi.SIGMOID, "GATEJIT_SILU": _capi.SILU,
    "GATEJIT_ROUNDING_BOUNDARY": _capi.ROUNDING_BOUNDARY, "GATEJIT_ROUNDING_FUSED": _capi.ROUNDING_FUSED,
    "GATEJIT_DEVICE_CUDA": _capi.DEVICE_CUDA, "GATEJIT_DEVICE_HIP": _capi.DEVICE_HIP,
    "GATEJIT_OK": _capi.OK, "GATEJIT_INVALID_ARGUMENT": _capi.INVALID_ARGUMENT,
    "GATEJIT_UNSUPPORTED": _capi.UNSUPPORTED, "GATEJIT_INTERNAL": _capi.INTERNAL,
}

pytestmark = pytest.mark.skipif(not HEADER.is_file(), reason=f"{HEADER} is not in this tree (an installed package)")


def _header_text() -> str:
    return HEADER.read_text()


def test_api_version_matches_the_header():
    found = re.search(r"#define\s+GATEJIT_API_VERSION\s+(\d+)", _header_text())
    assert found, "GATEJIT_API_VERSION not found in gatejit.h"
    assert int(found.group(1)) == _capi.API_VERSION == 5


def test_enum_values_match_the_header():
    text = _header_text()
    for name, value in ENUMS.items():
        found = re.search(rf"\b{name}\s*=\s*(\d+)", text)
        assert found, f"{name} not found in gatejit.h"
        assert int(found.group(1)) == value, f"{name}: gatejit.h {found.group(1)}, _capi {value}"


def test_check_layout_and_v4_args():
    """The documented layout holds on this platform; GateArgs is the version-4
    struct (weight_scale at 192, out_scale last at 232, 272 bytes) and sets
    struct_size to it."""
    _capi.check_layout()
    assert ctypes.sizeof(_capi.Tensor) == 40
    assert ctypes.sizeof(_capi.GateArgs) == 272
    assert _capi.GateArgs.weight_scale.offset == 192
    assert _capi.GateArgs.out_scale.offset == 232
    assert [f[0] for f in _capi.GateArgs._fields_][-3:] == ["stream", "weight_scale", "out_scale"]
    args = _capi.GateArgs()
    assert args.struct_size == 272
    for t in (args.weight_scale, args.out_scale):
        assert (t.data, t.dtype, t.rows, t.cols, t.ld) == (None, 0, 0, 0, 0)  # all zero: a call without scales


def _c_compiler():
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no C compiler (cc, gcc, clang) to compile gatejit.h with")


def test_ctypes_structs_match_the_compiled_header(tmp_path):
    """sizeof / offsetof of every field as a C compiler lays out gatejit.h."""
    compiler = _c_compiler()
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "gatejit/gatejit.h"', "int main(void) {"]
    for c_name, struct in STRUCTS.items():
        lines.append(f'  printf("{c_name} sizeof %zu\\n", sizeof({c_name}));')
        for field, _ in struct._fields_:
            lines.append(f'  printf("{c_name} {field} %zu\\n", offsetof({c_name}, {field}));')
    for name in ENUMS:
        lines.append(f'  printf("enum {name} %d\\n", (int){name});')
    lines += ["  return 0;", "}"]
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines) + "\n")
    binary = tmp_path / "layout"
    done = subprocess.run([compiler, "-std=c99", "-I", str(HEADER.parents[1]), str(source), "-o", str(binary)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"compiling against gatejit.h failed:\n{done.stderr}"
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    seen = {}
    for line in out.splitlines():
        kind, field, value = line.split()
        seen[(kind, field)] = int(value)
    for c_name, struct in STRUCTS.items():
        assert seen[(c_name, "sizeof")] == ctypes.sizeof(struct), \
            f"{c_name}: C sizeof {seen[(c_name, 'sizeof')]}, ctypes {ctypes.sizeof(struct)}"
        for field, _ in struct._fields_:
            assert seen[(c_name, field)] == getattr(struct, field).offset, \
                f"{c_name}.{field}: C offset {seen[(c_name, field)]}, ctypes {getattr(struct, field).offset}"
    for name, value in ENUMS.items():
        assert seen[("enum", name)] == value, f"{name}: C {seen[('enum', name)]}, _capi {value}"
    assert seen[("gatejit_gate_args_t", "sizeof")] == 272
