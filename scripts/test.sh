#!/usr/bin/env bash
# Set up, build, and run every test (GPU tests report "skipped" with the reason when no GPU),
# then fuzz, then run the tests again under ASan + UBSan (and, with CUDACORE_TSAN=1, the
# concurrency tests under ThreadSanitizer).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir="${BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600
# Every C++ block of README.md and docs/*.md compiles (-fsyntax-only), so no snippet goes stale.
python3 scripts/check-doc-snippets.py
# The API reference (Doxygen over include/cudacore): fails on any warning beyond the list of
# members not yet documented, which may only shrink.
bash scripts/docs.sh
# Fuzz the readers, code inspection and validation (clang, ASan + UBSan) for 90 s in all.
bash scripts/fuzz.sh
# The same tests again under AddressSanitizer + UndefinedBehaviorSanitizer: a second full build
# (about 8 minutes cold on 2 cores; the whole script stays near 20). CUDACORE_SANITIZE=0 skips it.
if [ "${CUDACORE_SANITIZE:-1}" = 1 ]; then bash scripts/sanitize.sh; fi
# ThreadSanitizer over the concurrency-heavy tests (scripts/tsan.sh): a third build, opt-in
# (CUDACORE_TSAN=1) to keep CI's time well under 30 minutes.
if [ "${CUDACORE_TSAN:-0}" = 1 ]; then bash scripts/tsan.sh; fi
