"""A GATEJIT_MMA_TUNING the compiler refuses reaches Python as a
GatejitArgumentError naming the variable, key and range (no GPU, no torch
needed): through libgatejit_jit.so's own C API, and through libgatejit.so
with the JIT library attached. Each case runs in a fresh interpreter with a
clean environment. Skipped, with the reason, where no JIT library is built.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GATEJIT_") and k != "PYTHONPATH"}

CODE = """
import sys
sys.modules['torch'] = None  # the contract-level API needs no torch
sys.path.insert(0, {package!r})
import gatejit
from gatejit import GatejitArgumentError
with gatejit.Runtime(disable_cache=True) as rt:
    try:
        rt.resolve_contract({{"m": 64, "n": 1536, "k": 7168, "dtype": "bf16", "target": "sm_90"}})
    except GatejitArgumentError as e:
        assert isinstance(e, ValueError) and isinstance(e, gatejit.GatejitError)
        print(e.argument)
        print(e.code_name)
        print(e)
    else:
        print("resolved")
"""


def _built(pattern: str) -> Path:
    found = sorted(REPO.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    if not found:
        pytest.skip(f"no {pattern} in the repository (build it: scripts/build.sh gatejit_jit gatejit_shared)")
    return found[0]


def _refusal(env: dict, tuning: str) -> list:
    env = dict(env, GATEJIT_MMA_TUNING=tuning)
    done = subprocess.run([sys.executable, "-c", CODE.format(package=str(REPO / "python"))], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout.splitlines()


@pytest.mark.parametrize("through", ["jit_library", "runtime_with_jit"])
def test_refused_override_is_an_argument_error(tmp_path, through):
    jit = _built("build*/compiler/libgatejit_jit.so")
    env = dict(CLEAN_ENV, GATEJIT_CACHE_DIR=str(tmp_path / "cache"))
    if through == "jit_library":
        env["GATEJIT_LIBRARY"] = str(jit)
    else:
        env["GATEJIT_LIBRARY"] = str(_built("build*/runtime/libgatejit.so"))
        env["GATEJIT_JIT_LIBRARY"] = str(jit)
    # The value that killed the host with SIGFPE, one that hung it, and an unknown key.
    for tuning, says in [("rt=2147483648", "rt=2147483648 is out of range: rt takes 1-4"),
                         ("splits=65536", "splits=65536 is out of range: splits takes 1-32"),
                         ("colour=1", "unknown key 'colour'")]:
        lines = _refusal(env, tuning)
        assert lines[:2] == ["GATEJIT_MMA_TUNING", "INVALID_ARGUMENT"], (tuning, lines)
        assert says in lines[2], (tuning, lines)
