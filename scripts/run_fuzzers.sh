#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a
# bounded time. Exits non-zero if the build fails or any target finds a
# crash, leak, sanitizer report or violated property.
#
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_MAX_LEN   largest input in bytes (default 1 MiB: the readers' bounds
#                  and deep nesting are reachable; libFuzzer's own default of
#                  4 KB would hide both)
#   FUZZ_BUILD_DIR build directory (default build-fuzz)
#   FUZZ_CC/FUZZ_CXX compilers (default clang-22 / clang++-22)
#   FUZZ_JOBS      build parallelism (default: ninja's)
# Crash reproducers and logs go to $FUZZ_BUILD_DIR/fuzz-out/<target>/; the
# corpus that grows from run to run is in $FUZZ_BUILD_DIR/fuzz-corpus/<target>/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${FUZZ_SECONDS:-60}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
[[ "$build" = /* ]] || build="$root/$build"
cc="${FUZZ_CC:-clang-22}"
cxx="${FUZZ_CXX:-clang++-22}"
targets=(bundle_reader_fuzz contract_parser_fuzz cache_entry_fuzz)

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  CC="$cc" CXX="$cxx" cmake -S "$root" -B "$build" "${generator[@]}" \
    -DGATEJIT_BUILD_FUZZERS=ON -DGATEJIT_BUILD_COMPILER=OFF -DGATEJIT_BUILD_TESTS=OFF \
    -DGATEJIT_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" ${FUZZ_JOBS:+-j "$FUZZ_JOBS"} --target "${targets[@]}" bundle_fuzz_seeds cache_entry_fuzz_seeds

# fuzz-out is per run; the corpus grows across runs.
out="$build/fuzz-out"
corpora="$build/fuzz-corpus"
rm -rf "$out"
mkdir -p "$out" "$corpora"

# Seeds are made here, never committed: valid bundles and cache entries from
# the writers, and contract JSON covering each field.
seeds_bundle="$out/seeds/bundle_reader_fuzz"
seeds_contract="$out/seeds/contract_parser_fuzz"
seeds_cache="$out/seeds/cache_entry_fuzz"
mkdir -p "$seeds_bundle" "$seeds_contract" "$seeds_cache"
"$build/fuzz/bundle_fuzz_seeds" "$seeds_bundle"
"$build/fuzz/cache_entry_fuzz_seeds" "$seeds_cache"
i=0
while IFS= read -r line; do
  [[ -n "$line" ]] && printf '%s' "$line" > "$seeds_contract/contract-$((i++)).json"
done <<'JSON'
{"m": 1, "n": 1536, "k": 7168, "dtype": "bf16", "act": "sigmoid", "target": "gfx950"}
{"m": "dynamic", "m_max": 64, "n": 4096, "k": 4096, "dtype": "f16", "act": "silu", "target": "gfx942"}
{"m": 8, "n": 256, "k": 512, "dtype": "f32", "template": "generic", "rounding": "fused", "target": "sm_90"}
{"m": 4, "m_max": 16, "n": 1024, "k": 2048, "dtype_hidden": "bf16", "dtype_weight": "bf16", "dtype_attn": "bf16", "dtype_out": "bf16", "ld_hidden": 4096, "ld_weight": 2048, "ld_attn": 1024, "ld_out": 1024, "align": 64, "template": "gemv"}
{"m": 1, "n": 7, "k": 9, "dtype": "bfloat16", "align": 2, "template": "auto"}
{"m": 0, "n": -1, "k": 1e3, "dtype": "int8", "unknown": true}
{"m": 18446744073709551615, "n": 9223372036854775808, "k": -9223372036854775808}
JSON
# Nesting: deep enough to overflow any recursive walk (the parser's bound is
# 64 levels), in arrays, objects and a contract value.
python3 - "$seeds_contract" <<'PY'
import sys
d = sys.argv[1]
open(f"{d}/deep-arrays.json", "w").write("[" * 100000 + "]" * 100000)
open(f"{d}/deep-objects.json", "w").write('{"a":' * 50000 + "1" + "}" * 50000)
open(f"{d}/deep-value.json", "w").write('{"m": ' + "[" * 70 + "]" * 70 + ', "n": 1, "k": 1}')
open(f"{d}/unclosed.json", "w").write("[" * 200000)
open(f"{d}/duplicate-key.json", "w").write('{"n": 1536, "k": 7168, "n": 4096}')
open(f"{d}/escapes.json", "w").write('{"\\u001b[31m\\n\\u0000": 1, "dtype": "' + "z" * 300000 + '"}')
PY

max_len="${FUZZ_MAX_LEN:-1048576}"
status=0
for t in "${targets[@]}"; do
  artifacts="$out/$t"
  corpus="$corpora/$t"
  mkdir -p "$artifacts" "$corpus"
  echo "== $t: ${seconds}s"
  # -rss_limit_mb: the reader caps what a hostile size can allocate, so
  # going over this is a finding too.
  if "$build/fuzz/$t" "$corpus" "$out/seeds/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len="$max_len" \
       -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$artifacts/log.txt" 2>&1; then
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
      "$artifacts/log.txt" | sed "s/^/   /" || true
  else
    status=1
    echo "!! $t failed; log: $artifacts/log.txt" >&2
    grep -E 'ERROR|SUMMARY|property violated|Test unit written' "$artifacts/log.txt" | head -20 >&2 || true
  fi
done
exit $status
