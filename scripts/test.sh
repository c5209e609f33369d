#!/usr/bin/env bash
# Set up, build, and run every test (GPU tests report "skipped" with the reason when no GPU),
# then fuzz, then run the tests again under sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir="${BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600
# Fuzz the deserializer and the cache entry reader (clang, ASan + UBSan) for 60 s in all.
bash scripts/fuzz.sh
# The same tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
bash scripts/sanitize.sh
