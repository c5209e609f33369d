#!/usr/bin/env bash
# Runs a prebuilt tree's tests, CLI checks and benchmarks on a GPU machine, without CTest (so the
# build folder may have moved), and writes OUT_DIR/summary.txt and OUT_DIR/logs.tar.gz (one log
# per program).
#   scripts/gpu-check.sh BUILD_DIR OUT_DIR [tests|bench|all]
# Shared libraries the build needs and the GPU machine may lack can be put in BUILD_DIR/runtime-libs.
set -uo pipefail
build="$(cd "$1" && pwd)"; out="$2"; what="${3:-all}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
final="$out"
out="$(mktemp -d)"
export LD_LIBRARY_PATH="$build:$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary="$final/summary.txt"
: >"$summary"

note() { echo "$*" | tee -a "$summary"; }

note "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
"$build/tools/cudacore" devices >"$out/devices.txt" 2>&1; note "cudacore devices: rc=$?"
"$build/tools/cudacore" demo >"$out/demo.txt" 2>&1; note "cudacore demo: rc=$? ($(grep -c SKIPPED "$out/demo.txt") skipped steps)"

if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in "$build"/tests/gpu_* "$build"/tests/cpu_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    timeout 300 "$t" --gtest_color=no >"$out/$name.log" 2>&1
    rc=$?
    passed=$(grep -c '^\[       OK \]' "$out/$name.log")
    failed=$(grep -c '^\[  FAILED  \] [A-Za-z]' "$out/$name.log")
    skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z]' "$out/$name.log")
    note "$(printf '%-44s rc=%-3s passed=%-3s failed=%-3s skipped=%s' "$name" "$rc" "$passed" "$failed" "$skipped")"
    grep -E '^\[  FAILED  \] [A-Za-z]|^\[  SKIPPED \] [A-Za-z]' "$out/$name.log" | sort -u | sed 's/^/    /' | tee -a "$summary" >/dev/null
  done
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  for b in "$build"/bench/*_bench; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    timeout 240 "$b" --benchmark_min_time=0.2 --benchmark_enable_random_interleaving=true >"$out/$name.txt" 2>&1
    note "$name: rc=$?"
    sed -n '/^operation /,$p' "$out/$name.txt" | tee -a "$summary" >/dev/null
  done
fi
tar -C "$out" -czf "$final/logs.tar.gz" .
note "== done"
