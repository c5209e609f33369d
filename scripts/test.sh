#!/usr/bin/env bash
# Set up, build, and run every test (GPU tests report "skipped" with the reason when no GPU),
# then run the tests under ASan + UBSan, then fuzz, then the concurrency tests under
# ThreadSanitizer. Each step prints its time; the whole script is meant to stay under 30 minutes
# on a machine of 2 cores with nothing cached (three builds: the main one, then ASan + UBSan with
# clang, which makes the fuzzers too, and ThreadSanitizer, the last two unity builds of the
# library).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# The processor time of the children this shell has waited for, in whole seconds (user + system):
# on a shared machine it shows the work a step did when its wall time shows the others' too.
# (cutime + cstime of this shell, fields 16 and 17 of /proc/PID/stat, in clock ticks).
ticks=$(getconf CLK_TCK)
children_cpu() { awk -v ticks="$ticks" '{ printf "%d", ($16 + $17) / ticks }' "/proc/$$/stat"; }
step() {  # step NAME COMMAND...: runs it, then says how long it took
  local name=$1 began=$SECONDS cpu_before; shift
  cpu_before=$(children_cpu)
  "$@"
  echo "== step '$name': $((SECONDS - began)) s, processor $(( $(children_cpu) - cpu_before )) s (${SECONDS} s since the start)"
}
# The test programs share one precompiled GoogleTest header in each build and are compiled at -O1
# (-O0 in the sanitizer builds, and in the main build without a GPU; tests/CMakeLists.txt).
# Without a GPU the CPU suite runs once, in the ASan + UBSan build (scripts/sanitize.sh): the main
# build leaves the CPU test programs out (CUDACORE_CPU_TESTS_IN_ALL=OFF) but those of the compile
# corpus tests (label cpu_corpus), and runs those and the GPU tests, which report "skipped" with
# the reason. With a GPU, or with the sanitizer pass turned off, the main build runs every test.
cpu_suite_in_sanitizer=0
if ! nvidia-smi -L >/dev/null 2>&1 && [ "${CUDACORE_SANITIZE:-1}" = 1 ]; then cpu_suite_in_sanitizer=1; fi
if [ "$cpu_suite_in_sanitizer" = 1 ]; then
  # Nor the helper programs, which only CPU tests start here: the sanitizer build compiles them.
  # The test programs at -O0: without a GPU the GPU tests are compiled only, to skip (a sixth
  # quicker to compile than at -O1: 84 against 102 s for the 63 programs on 2 cores, no
  # compiler cache), and the compile corpus tests' time is NVRTC's. The rest at -O1, with
  # assertions on as in the sanitizer builds: nothing here times the library, and the build
  # takes 752 processor seconds instead of 1,041 at -O3 (6.1 against 8.5 minutes on 2 cores, no
  # compiler cache); -O1 rather than -O0 keeps GCC's warnings that need its data-flow analysis.
  # (The main build's alone: the sanitizer builds set their own flags.)
  main_args="-DCUDACORE_CPU_TESTS_IN_ALL=OFF -DCUDACORE_TESTS_NEED_ALL_HELPERS=OFF"
  main_args="$main_args -DCUDACORE_TEST_OPTIMIZE=-O0 -DCMAKE_CXX_FLAGS_RELEASE=-O1"
else
  main_args="-DCUDACORE_CPU_TESTS_IN_ALL=ON"
fi
step "set up and build" env CMAKE_ARGS="${CMAKE_ARGS:-} $main_args" bash scripts/setup.sh
build_dir="${BUILD_DIR:-build}"
if [ "$cpu_suite_in_sanitizer" = 1 ]; then
  step "GPU tests (no GPU: each says why it skips)" \
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 -L gpu
  # The library opened with dlopen and from Python's ctypes, and its TLS (tests/loadable): the
  # main build's library, as users load it (the sanitizer build's needs its runtime first).
  step "loadable with dlopen" \
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 -L loadable
  # The CPU tests whose subject is the code NVRTC gives over a corpus of programs (label
  # cpu_corpus, tests/CMakeLists.txt): here, in the main build, and not in the sanitizer pass.
  step "compile corpus tests" \
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 -L cpu_corpus
else
  step "tests" ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600
fi
# Every C++ block of README.md and docs/*.md and every example in the public headers compiles
# (-fsyntax-only -Wall -Wextra -Werror), so no snippet goes stale or warns in a user's build.
step "documentation snippets" python3 scripts/check-doc-snippets.py
# The layers hold: no include from a lower layer to a higher one, no include cycle among the public
# headers, each source under its layer's list (what still runs back up is listed, and may only
# shrink); every public header compiles on its own.
step "layers" python3 scripts/check-layers.py
# The same at symbol level, over the main build's objects: no layer references a symbol that only
# a higher layer defines (the CPU suite's CTest tests run it too, with fixtures that must fail).
step "layer symbols" python3 scripts/check-layer-symbols.py "$build_dir/cudacore-layer-objects.txt"
# No function in src/ or tools/ over 60 lines without a `// Long because:` comment above it
# (function extents from Universal Ctags).
step "function length" python3 scripts/check-function-length.py
# Every public call and struct follows docs/api-conventions.md (stream, options and destination
# order, a default on every field), as Universal Ctags parses the headers.
step "api conventions" python3 scripts/check-api-conventions.py
# Every deprecated form still compiles and names its replacement.
step "deprecated forms" python3 scripts/check-deprecated-forms.py
step "headers alone" python3 scripts/check-headers-alone.py
# The public headers carry the contract, not essays: comment blocks under 20 lines, a file comment
# of at most 10 lines besides its example, no header of 180-200 lines (the CTest
# scripts.header_comments runs it too, and the check itself on fixtures that must fail).
step "header comments" python3 scripts/check-header-comments.py
# Every file README.md and docs/ name exists (the CTest scripts.check_doc_paths runs it too).
step "doc paths" python3 scripts/check-doc-paths.py
# The API reference (Doxygen over include/cudacore): fails on any warning beyond the list of
# members not yet documented, which may only shrink.
step "API reference" bash scripts/docs.sh
# The packages and one consumer project built three ways against them (scripts/packages.sh):
# cpack's Debian packages (their Depends lines checked) and tarball, then find_package from a
# moved install prefix and from the packages unpacked with dpkg -x, plus pkg-config, then
# FetchContent of this tree building only the library, the CLI and the consumer (a unity build at
# -O0: it checks the subproject's wiring), without the remote tier (its CLI must refuse --remote).
# CUDACORE_PACKAGES=0 skips it.
if [ "${CUDACORE_PACKAGES:-1}" = 1 ]; then step "packages" bash scripts/packages.sh; fi
# The CPU tests (and with a GPU every test, again) under AddressSanitizer +
# UndefinedBehaviorSanitizer (a second build, with clang, of what the tests run and of the
# fuzzers). CUDACORE_SANITIZE=0 skips it (and the main build then runs the CPU tests).
if [ "${CUDACORE_SANITIZE:-1}" = 1 ]; then step "ASan + UBSan" bash scripts/sanitize.sh; fi
# Fuzz the readers of outside bytes (serialized code, cache entries, code inspection and
# validation, IPC descriptors, header bundles, MPI messages; clang, ASan + UBSan) for 60 s in
# all, and the isolated link for 20 s, one fuzzer per core at a time: a check against regressions
# from the committed corpus on every change (longer runs: FUZZ_SECONDS, LINK_FUZZ_SECONDS). The
# fuzzers are those the sanitizer build made (without it, scripts/fuzz.sh builds its own).
fuzz_dir="${FUZZ_BUILD_DIR:-build-fuzz}"
if [ "${CUDACORE_SANITIZE:-1}" = 1 ]; then fuzz_dir="${SANITIZE_BUILD_DIR:-build-sanitize}"; fi
step "fuzzing" env FUZZ_BUILD_DIR="$fuzz_dir" bash scripts/fuzz.sh
# ThreadSanitizer over the concurrency-heavy tests (scripts/tsan.sh): a third build, of the
# library and fifteen test programs. CUDACORE_TSAN=0 skips it.
if [ "${CUDACORE_TSAN:-1}" = 1 ]; then step "ThreadSanitizer" bash scripts/tsan.sh; fi
# Where the time went: each build's commands summed by kind of target, its slowest compiles and
# the slowest tests of its CTest run (scripts/ci-times.py).
python3 scripts/ci-times.py $(printf '%s\n' "$build_dir" "$fuzz_dir" "${TSAN_BUILD_DIR:-build-tsan}" | uniq)
echo "== all steps passed in $((SECONDS - start)) s, processor $(children_cpu) s"
