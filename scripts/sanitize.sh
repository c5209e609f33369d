#!/usr/bin/env bash
# Builds the library and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in
# ${SANITIZE_BUILD_DIR:-build-sanitize} and runs the CPU tests (GPU tests too, where a GPU is
# present: CUDA needs ASAN_OPTIONS=protect_shadow_gap=0, set here). Leaks inside NVRTC and
# nvJitLink themselves are suppressed (tests/lsan.supp); any other report fails the run.
# handle_segv=0: tests that crash a child on purpose (the load probe, the link worker) expect it
# to die of the signal, not of ASan's report; a segfault elsewhere still fails its test.
# The MPI tests run with leak detection off: Open MPI leaves allocations of its plugins, which it
# has unloaded by then, at MPI_Finalize (their frames name no library a suppression could match).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${SANITIZE_BUILD_DIR:-build-sanitize}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
  -DCUDACORE_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
# Without a GPU only what the CPU tests run is built (the GPU tests and examples would skip):
# about a third less to compile.
if nvidia-smi -L >/dev/null 2>&1; then
  cmake --build "$build_dir" -j "$(nproc)"
  labels=()
else
  cmake --build "$build_dir" -j "$(nproc)" --target cudacore_cpu_checks
  labels=(-L cpu)
fi
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:handle_segv=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# A failing test runs up to twice more: LeakSanitizer's own tracer can crash in its exit-time
# check of a CLI child that compiled ("Tracer caught signal 11", LeakSanitizer's fatal error;
# CliExactCache.ACacheHitIsReportedOnlyWhenTheCodeCameFromTheCache, up to 1 run in 2 under CTest
# on 2 cores; not yet understood). A test that fails three times fails the pass.
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 "${labels[@]}" \
  --repeat until-pass:3 -E '^mpi\.'
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
  ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 "${labels[@]}" -R '^mpi\.'
echo "sanitize: ASan + UBSan pass over the CPU suite clean"
