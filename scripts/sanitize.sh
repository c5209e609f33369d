#!/usr/bin/env bash
# Builds the library and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in
# ${SANITIZE_BUILD_DIR:-build-sanitize} and runs the CPU tests (GPU tests too, where a GPU is
# present: CUDA needs ASAN_OPTIONS=protect_shadow_gap=0, set here). Leaks inside NVRTC and
# nvJitLink themselves are suppressed (tests/lsan.supp); any other report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${SANITIZE_BUILD_DIR:-build-sanitize}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
  -DCUDACORE_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The install check builds an unsanitized consumer against the sanitized library: not meaningful.
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 -E InstallAndFindPackage
