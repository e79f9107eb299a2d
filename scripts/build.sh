#!/usr/bin/env bash
# Configures and builds everything (compiler, runtime, tests, examples,
# benchmarks) into ${BUILD:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
BUILD=${BUILD:-build}
# ccache where installed: worktrees and rebuilds share object files.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DGATEJIT_BUILD_COMPILER=ON \
  -DGATEJIT_BUILD_TESTS=ON -DGATEJIT_BUILD_BENCHMARKS=ON >/dev/null
ninja -C "$BUILD" "$@"
