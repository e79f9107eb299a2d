#!/usr/bin/env bash
# The main job: compile the seed contract (Kimi-K3 MLA output gate at decode:
# M=1, N=1536, K=7168, bf16, sigmoid) for gfx950 and show its report, then
# what LLVM's own tools say about the code object.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh gatejit
BUILD=${BUILD:-build}
"$BUILD"/compiler/gatejit compile --m 1 --n 1536 --k 7168 --dtype bf16 --act sigmoid --target gfx950 \
  -o "$BUILD"/gate_seed_gfx950.hsaco
echo
echo "llvm-readelf-22 --notes (excerpt):"
llvm-readelf-22 --notes "$BUILD"/gate_seed_gfx950.hsaco | grep -E "amdhsa.target|\.vgpr_count|\.sgpr_count|private_segment_fixed_size|group_segment_fixed_size|\.name:" | sed 's/^/  /'
echo "llvm-objdump-22 -d --mcpu=gfx950: $(llvm-objdump-22 -d --mcpu=gfx950 "$BUILD"/gate_seed_gfx950.hsaco | grep -c global_load_dwordx4) global_load_dwordx4, $(llvm-objdump-22 -d --mcpu=gfx950 "$BUILD"/gate_seed_gfx950.hsaco | grep -c '_dpp') DPP instructions"
