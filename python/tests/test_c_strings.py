"""Every path and string the binding hands to C is checked for NUL first
(issue 45): ctypes passes a char* that C reads up to the first NUL, so
``load_bundle('/tmp/a\\x00b')`` would otherwise load ``/tmp/a``. A NUL is a
GatejitArgumentError (a ValueError) naming the argument. Host side: no GPU,
no torch needed.
"""

from __future__ import annotations

import pytest

import gatejit
from gatejit import GatejitArgumentError

CONTRACT = '{"m": 1, "n": 256, "k": 512, "dtype": "bf16", "target": "gfx950"}'


@pytest.fixture
def runtime(tmp_path):
    try:
        rt = gatejit.Runtime(disable_jit=True, shipped_bundle=False, cache_dir=tmp_path / "cache")
    except gatejit.GatejitError as e:
        pytest.skip(f"no libgatejit.so to test the binding with: {e}")
    yield rt
    rt.close()


def _refused(argument, call):
    with pytest.raises(GatejitArgumentError) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert info.value.argument == argument, str(info.value)
    assert "NUL" in str(info.value), str(info.value)


def test_load_bundle_refuses_a_path_with_a_nul(runtime, tmp_path):
    (tmp_path / "a").write_bytes(b"not a bundle")  # what C would open without the check
    _refused("path", lambda: runtime.load_bundle(str(tmp_path / "a") + "\x00b"))
    _refused("path", lambda: runtime.load_bundle((str(tmp_path / "a") + "\x00b").encode()))


def test_runtime_options_refuse_paths_with_a_nul(tmp_path):
    try:
        gatejit.library_path()
    except gatejit.GatejitError as e:
        pytest.skip(f"no libgatejit.so to test the binding with: {e}")
    _refused("cache_dir", lambda: gatejit.Runtime(disable_jit=True, cache_dir=str(tmp_path / "c") + "\x00d"))
    _refused("bundle_path", lambda: gatejit.Runtime(disable_jit=True, bundle_path=[str(tmp_path / "x.gjb\x00")]))
    _refused("bundle_path", lambda: gatejit.Runtime(disable_jit=True, bundle_path=str(tmp_path / "x\x00.gjb")))


def test_contract_text_with_a_nul_is_refused(runtime):
    # Without the NUL the text reaches the resolver (which has nothing to serve it with).
    with pytest.raises(gatejit.GatejitError, match="no kernel can serve"):
        runtime.explain_contract(CONTRACT)
    _refused("contract", lambda: runtime.explain_contract(CONTRACT + "\x00{garbage"))
    _refused("contract", lambda: runtime.resolve_contract(CONTRACT + "\x00"))
    # A dict goes over as JSON, where a NUL inside a value is the escape \u0000: no cut.
    with pytest.raises(gatejit.GatejitError, match=r"\\0"):
        runtime.explain_contract({"m": 1, "n": 256, "k": 512, "dtype": "bf\x0016"})
