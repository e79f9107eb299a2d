#!/usr/bin/env bash
# Installs what gatejit needs on a fresh Debian 12 machine (as root; uses sudo
# otherwise). Every package is from Debian; docs/dependencies.md says why each
# one is here. Idempotent: a second run installs nothing.
set -euo pipefail
PACKAGES=(
  cmake ninja-build g++ pkg-config dpkg-dev xz-utils                           # build; .deb packages (dpkg-shlibdeps); device carry
  llvm-22-dev libmlir-22-dev mlir-22-tools liblld-22-dev lld-22 llvm-22        # compiler: MLIR -> LLVM -> lld
  clang-22 libclang-rt-22-dev                                                    # libFuzzer targets
  libfmt-dev libcli11-dev nlohmann-json3-dev libxxhash-dev libzstd-dev          # compiler/runtime libraries
  libgtest-dev googletest libbenchmark-dev                                      # tests and benchmarks
  libamdhip64-dev                                                               # HIP headers (the library is dlopen'ed)
  python3-pytest python3-venv python3-pip python3-setuptools python3-wheel      # the Python package's host tests (pip install/wheel)
)
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "gatejit: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
