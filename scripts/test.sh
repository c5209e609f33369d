#!/usr/bin/env bash
# Set up, build, and run every test (GPU tests report "skipped" with the reason when no GPU),
# then fuzz, then run the tests again under ASan + UBSan, then the concurrency tests under
# ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
# Time on 2 cores: ccache is the main build's compiler launcher, so the packages step's FetchContent
# build is made of cache hits (about 4 minutes of compiling saved), and the test programs share one
# precompiled GoogleTest header in each of the three builds (a fifth of each test's compile).
bash scripts/setup.sh
build_dir="${BUILD_DIR:-build}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600
# Every C++ block of README.md and docs/*.md compiles (-fsyntax-only), so no snippet goes stale.
python3 scripts/check-doc-snippets.py
# The layers hold: no include from a lower layer to a higher one, no include cycle among the public
# headers, each source under its layer's list (what still runs back up is listed, and may only
# shrink); every public header compiles on its own.
python3 scripts/check-layers.py
python3 scripts/check-headers-alone.py
# The API reference (Doxygen over include/cudacore): fails on any warning beyond the list of
# members not yet documented, which may only shrink.
bash scripts/docs.sh
# The packages and one consumer project built three ways against them (scripts/packages.sh):
# cpack's Debian packages (their Depends lines checked) and tarball, then find_package from a
# moved install prefix and from the packages unpacked with dpkg -x, plus pkg-config, then
# FetchContent of this tree building only the library, the CLI and the consumer. Measured on 2
# shared cores: 133 s with ccache warm (cpack and the Depends checks 37 s, each find_package way
# 25 s, FetchContent 42 s). Without ccache the FetchContent build compiles the library, the CLI
# and the link worker at -O0: 450 s of CPU, about 4 minutes on 2 cores of their own, so the step
# takes about 5.5 minutes and the whole script stays near 30. CUDACORE_PACKAGES=0 skips it.
if [ "${CUDACORE_PACKAGES:-1}" = 1 ]; then bash scripts/packages.sh; fi
# Fuzz the readers of outside bytes (serialized code, cache entries, code inspection and
# validation, IPC descriptors, MPI messages; clang, ASan + UBSan) for 90 s in all, then the
# isolated link for 30 s.
bash scripts/fuzz.sh
# The same tests again under AddressSanitizer + UndefinedBehaviorSanitizer: a second full build
# (about 8 minutes cold on 2 cores; the whole script stays near 20). CUDACORE_SANITIZE=0 skips it.
if [ "${CUDACORE_SANITIZE:-1}" = 1 ]; then bash scripts/sanitize.sh; fi
# ThreadSanitizer over the concurrency-heavy tests (scripts/tsan.sh): a third build, of the
# library and nine test programs only. Measured on 2 shared cores: 8 minutes of CPU time (11
# wall under a load of 6), the run itself 25 s; about 5 minutes on a CI machine of 2 cores of
# its own, so the whole script stays near 25. ccache would not help: no two of the builds here
# share compiler flags. CUDACORE_TSAN=0 skips it.
if [ "${CUDACORE_TSAN:-1}" = 1 ]; then bash scripts/tsan.sh; fi
