#!/usr/bin/env bash
# Set up, build, and run every test (GPU tests report "skipped" with the reason when no GPU),
# then fuzz (and, with CUDACORE_SANITIZE=1, run the tests again under sanitizers).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir="${BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600
# Fuzz the readers, code inspection and validation (clang, ASan + UBSan) for 90 s in all.
bash scripts/fuzz.sh
# The same tests again under AddressSanitizer + UndefinedBehaviorSanitizer: a second full build,
# so opt-in (CUDACORE_SANITIZE=1) until the sanitizer pass over this round's code is clean.
if [ "${CUDACORE_SANITIZE:-0}" = 1 ]; then bash scripts/sanitize.sh; fi
