"""The build step of `pip install .` / `pip wheel .` (metadata: pyproject.toml).

build_py also configures the repository with CMake (runtime only:
-DGATEJIT_BUILD_COMPILER=OFF, no LLVM), builds the `gatejit_shared` target and
copies libgatejit.so into the package, where gatejit._capi finds it first. If
the CMake build also makes the JIT library (libgatejit_jit.so: pass
-DGATEJIT_BUILD_COMPILER=ON in GATEJIT_CMAKE_ARGS on a machine with LLVM, and
the `gatejit_jit` target exists), it is built and packaged too, and so is the
shipped bundle of generic kernels (gatejit-generic.gjb, target
`gatejit_generic_bundle`: it needs the gatejit tool), which the runtime finds
beside itself. The wheel is tagged py3-none-<platform>: the library is native,
the Python is not.

Environment:
  GATEJIT_EXTRA_INCLUDE_DIR  folder with xxhash.h and nlohmann/json.hpp where
                             the system has none (the GPU machine: .device/include)
  GATEJIT_CMAKE_ARGS         more CMake arguments (shell words)
  GATEJIT_BUILD_JOBS         parallel build jobs (default: the CPU count)
  GATEJIT_SHIPPED_BUNDLE_FILE  a gatejit-generic.gjb built elsewhere (`gatejit
                             precompile --all-generic ...`), packaged where this
                             build has no compiler to make one
"""

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

ROOT = Path(__file__).resolve().parent
RUNTIME_LIBRARY = "libgatejit.so"
JIT_LIBRARY = "libgatejit_jit.so"
JIT_TARGET = "gatejit_jit"
SHIPPED_BUNDLE = "gatejit-generic.gjb"
SHIPPED_BUNDLE_TARGET = "gatejit_generic_bundle"


def _run(command, cwd=None):
    print("gatejit build:", " ".join(shlex.quote(str(c)) for c in command), flush=True)
    subprocess.run([str(c) for c in command], cwd=cwd, check=True)


def _cmake_arguments():
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DGATEJIT_BUILD_COMPILER=OFF", "-DGATEJIT_BUILD_TESTS=OFF",
            "-DGATEJIT_BUILD_BENCHMARKS=OFF"]
    include = os.environ.get("GATEJIT_EXTRA_INCLUDE_DIR")
    if include:
        args.append(f"-DGATEJIT_EXTRA_INCLUDE_DIR={include}")
    # Later arguments win in CMake, so GATEJIT_CMAKE_ARGS can turn the compiler on.
    return args + shlex.split(os.environ.get("GATEJIT_CMAKE_ARGS", ""))


def _has_target(build_dir: Path, target: str) -> bool:
    listing = subprocess.run(["cmake", "--build", str(build_dir), "--target", "help"],
                             capture_output=True, text=True, check=False).stdout
    return any(line.split(":")[0].strip().lstrip(". ") == target for line in listing.splitlines())


def build_libraries(build_dir: Path):
    """Configures and builds; returns the paths of the files to package (libraries, the shipped bundle)."""
    if shutil.which("cmake") is None:
        raise RuntimeError("building gatejit needs CMake >= 3.22 on PATH (Debian: apt-get install cmake ninja-build)")
    configure = ["cmake", "-S", ROOT, "-B", build_dir]
    if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    _run(configure + _cmake_arguments())
    jobs = os.environ.get("GATEJIT_BUILD_JOBS") or str(os.cpu_count() or 1)
    targets = ["gatejit_shared"]
    for optional in (JIT_TARGET, SHIPPED_BUNDLE_TARGET):
        if _has_target(build_dir, optional):
            targets.append(optional)
    for target in targets:
        _run(["cmake", "--build", build_dir, "--target", target, "--parallel", jobs])
    runtime = build_dir / "runtime" / RUNTIME_LIBRARY
    if not runtime.exists():
        raise RuntimeError(f"the CMake build did not produce {runtime}")
    libraries = [runtime]
    libraries += sorted(p for p in build_dir.rglob(JIT_LIBRARY) if p.is_file() or p.is_symlink())[:1]
    prebuilt = os.environ.get("GATEJIT_SHIPPED_BUNDLE_FILE")
    bundle = Path(prebuilt) if prebuilt else build_dir / "runtime" / SHIPPED_BUNDLE
    if prebuilt and not bundle.is_file():
        raise RuntimeError(f"GATEJIT_SHIPPED_BUNDLE_FILE={prebuilt}: not a file")
    if bundle.is_file():
        libraries.append(bundle)
    return libraries


class BuildPyWithRuntime(build_py):
    """build_py, then the native library into the package folder of the build."""

    def run(self):
        super().run()
        build_temp = Path(self.get_finalized_command("build").build_temp).resolve()
        package_dir = Path(self.build_lib) / "gatejit"
        package_dir.mkdir(parents=True, exist_ok=True)
        for library in build_libraries(build_temp / "cmake"):
            # The runtime finds the shipped bundle beside itself under this name.
            target = package_dir / (SHIPPED_BUNDLE if library.suffix == ".gjb" else library.name)
            shutil.copyfile(library.resolve(), target)  # the file behind the SONAME links
            target.chmod(0o644 if library.suffix == ".gjb" else 0o755)
            print(f"gatejit build: packaged {library.resolve()} as {target}", flush=True)


class NativeDistribution(Distribution):
    """Holds a native library: installed as platform-specific (platlib, a platform wheel)."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """A wheel for this platform (it holds a native library) but any Python 3."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


(ROOT / "build-pip").mkdir(exist_ok=True)
setup(
    distclass=NativeDistribution,
    cmdclass={"build_py": BuildPyWithRuntime, "bdist_wheel": PlatformWheel},
    # Not "build/": that is the repository's CMake build folder.
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
)
