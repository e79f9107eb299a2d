"""The package as users get it, on any machine (no GPU, no torch needed):
`import gatejit` with no environment variables, the loader in an installed
tree, and `pip install .` / `pip wheel .` in a fresh virtual environment
with --no-build-isolation (no package index is reachable).

The pip test builds libgatejit.so with CMake (in build-pip/ of the
repository, incremental); it is skipped, with the reason, where CMake, a C++
compiler, setuptools, wheel or the header-only dependencies are missing.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GATEJIT_") and k != "PYTHONPATH"}


def _python(python, code, cwd, env=None):
    done = subprocess.run([str(python), "-c", code], cwd=cwd, env=env or CLEAN_ENV, capture_output=True, text=True)
    assert done.returncode == 0, f"{python} -c ...: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _loaded_library():
    import gatejit
    try:
        return Path(gatejit.library_path()).resolve()
    except gatejit.GatejitError as e:
        pytest.skip(f"no libgatejit.so to test the loader with: {e}")


def test_import_without_torch_answers_without_raising(tmp_path):
    """import gatejit with torch unavailable: the library loads, the ops are not
    imported, supports* answer False instead of raising."""
    library = _loaded_library()
    package_parent = Path(__import__("gatejit").__file__).resolve().parents[1]
    code = ("import sys; sys.modules['torch'] = None\n"
            f"sys.path.insert(0, {str(package_parent)!r})\n"
            "import gatejit\n"
            "print(gatejit.library_path())\n"
            "assert 'gatejit.ops' not in sys.modules\n"
            "assert gatejit.supports(1, 2, 3) is False\n"
            "assert gatejit.supports_shape(1, 8, 8, 'bf16') is False\n"
            "assert gatejit.supports_contract('{not json') is False\n"
            "assert gatejit.supports_contract({'m': 1, 'n': 8, 'k': 8, 'colour': 'red'}) is False\n"
            "print('ok')\n")
    env = dict(CLEAN_ENV, GATEJIT_LIBRARY=str(library))
    out = _python(sys.executable, code, tmp_path, env)
    assert out.split() == [str(library), "ok"], out


def test_import_with_an_unusable_torch(tmp_path):
    """Where torch is installed, import gatejit registers the ops; a torch too old
    for them leaves import gatejit working and says why when the op is used."""
    library = _loaded_library()
    package_parent = Path(__import__("gatejit").__file__).resolve().parents[1]
    stub = tmp_path / "stub" / "torch"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('__version__ = "2.3-stub"\nclass library:\n    pass\n')
    code = (f"import sys; sys.path[:0] = [{str(tmp_path / 'stub')!r}, {str(package_parent)!r}]\n"
            "import gatejit\n"
            "assert 'torch' in sys.modules and 'gatejit.ops' not in sys.modules\n"
            "print(gatejit.library_path())\n"
            "try:\n"
            "    gatejit.gate_epilogue(1, 2, 3)\n"
            "except ImportError as e:\n"
            "    print('use:', e)\n")
    out = _python(sys.executable, code, tmp_path, dict(CLEAN_ENV, GATEJIT_LIBRARY=str(library)))
    lines = out.splitlines()
    assert lines[0] == str(library), out
    assert lines[1] == "use: gatejit.ops needs torch >= 2.4 (torch.library.register_fake); this is torch 2.3-stub", out


def test_installed_tree_finds_lib_libgatejit(tmp_path):
    """cmake --install puts the package in <libdir>/gatejit/python/gatejit and the
    library in <libdir>; the package must find it with no environment variable."""
    library = _loaded_library()
    libdir = tmp_path / "prefix" / "lib"
    package = libdir / "gatejit" / "python" / "gatejit"
    source = Path(__import__("gatejit").__file__).resolve().parent
    shutil.copytree(source, package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copyfile(library, libdir / "libgatejit.so")
    env = dict(CLEAN_ENV, PYTHONPATH=str(package.parent))
    out = _python(sys.executable, "import gatejit; print(gatejit.__file__); print(gatejit.library_path())", tmp_path, env)
    lines = out.split()
    assert lines[0] == str(package / "__init__.py"), out
    assert lines[1] == str(libdir / "libgatejit.so"), out


def _pip_prerequisites():
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"building the package needs {', '.join(missing)} on PATH")
    for module in ("setuptools", "wheel", "venv", "pip"):
        try:
            __import__(module)
        except ImportError:
            pytest.skip(f"building the package with --no-build-isolation needs the Python module {module}")
    include = os.environ.get("GATEJIT_EXTRA_INCLUDE_DIR")
    for header in ("xxhash.h", "nlohmann/json.hpp"):
        if not any(Path(d, header).exists() for d in filter(None, [include, "/usr/include", "/usr/local/include"])):
            pytest.skip(f"{header} not found (set GATEJIT_EXTRA_INCLUDE_DIR)")


def _fresh_venv(path: Path) -> Path:
    """A new virtual environment that sees this interpreter's packages (setuptools,
    wheel, torch where installed), also when this interpreter is itself a venv."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = _python(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])", path).strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    Path(purelib, "outer-site-packages.pth").write_text("".join(p + "\n" for p in sorted(ours) if os.path.isdir(p)))
    return python


def test_pip_install_and_wheel_in_a_fresh_venv(tmp_path):
    _pip_prerequisites()
    python = _fresh_venv(tmp_path / "venv")
    build_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # GATEJIT_EXTRA_INCLUDE_DIR may be needed
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run(pip + ["install", "--no-build-isolation", "--no-deps", "--no-index", str(REPO)],
                   check=True, env=build_env)
    subprocess.run(pip + ["wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", str(tmp_path / "dist"),
                          str(REPO)], check=True, env=build_env)

    wheels = glob.glob(str(tmp_path / "dist" / "gatejit-*.whl"))
    assert len(wheels) == 1, wheels
    name = Path(wheels[0]).name
    assert name.startswith("gatejit-0.1.0-py3-none-linux_"), name
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
    assert {"gatejit/__init__.py", "gatejit/ops.py", "gatejit/integrations/vllm.py", "gatejit/libgatejit.so"} <= names

    # The installed package loads its own library, with no environment variable, from anywhere.
    out = _python(python, "import gatejit; print(gatejit.__file__); print(gatejit.library_path())", tmp_path)
    package_file, library = out.split()
    installed = Path(package_file).parent
    assert str(installed).startswith(str(tmp_path / "venv")), out
    assert Path(library) in (installed / "libgatejit.so", installed / "libgatejit_jit.so"), out


def test_runtime_records_contracts_and_serves_the_shipped_bundle(tmp_path):
    """Runtime(record=...) appends each resolved contract once, as a JSON line
    (docs/serving.md); with the JIT off and an empty cache the shipped bundle
    beside the library serves a contract, and explain says so (no GPU)."""
    import gatejit
    library = _loaded_library()
    if not (library.parent / "gatejit-generic.gjb").is_file():
        pytest.skip(f"no shipped bundle beside {library} (built with the compiler: target gatejit_generic_bundle)")
    record = tmp_path / "record.jsonl"
    contract = {"m": 3, "n": 1000, "k": 999, "target": "gfx942", "dtype": "f16", "act": "silu"}
    rt = gatejit.Runtime(record=record, disable_jit=True, cache_dir=tmp_path / "cache")
    try:
        for _ in range(3):
            text = rt.resolve_contract(contract)
        assert "from the shipped bundle gatejit-generic.gjb" in text, text
        assert rt.explain_contract(contract) == text
    finally:
        rt.close()
    lines = record.read_text().splitlines()
    assert len(lines) == 1, lines
    assert {k: v for k, v in json.loads(lines[0]).items() if k in contract} == contract
    bare = gatejit.Runtime(disable_jit=True, shipped_bundle=False, cache_dir=tmp_path / "cache")
    try:
        with pytest.raises(gatejit.GatejitError, match="no kernel can serve"):
            bare.resolve_contract(contract)
    finally:
        bare.close()


def test_runtime_jit_mode_argument(tmp_path):
    """Runtime(jit=...) takes sync, background, off or None; anything else is an
    argument error naming it, before any library call."""
    import gatejit
    _loaded_library()
    with pytest.raises(gatejit.GatejitArgumentError) as error:
        gatejit.Runtime(jit="eager")
    assert error.value.argument == "jit"
    for mode in ("sync", "background", "off"):
        rt = gatejit.Runtime(jit=mode, cache_dir=tmp_path / "cache")
        rt.close()
