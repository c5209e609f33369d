#!/usr/bin/env bash
# Builds the library and its tests with AddressSanitizer + UndefinedBehaviorSanitizer (clang) in
# ${SANITIZE_BUILD_DIR:-build-sanitize}, with the libFuzzer targets beside them (scripts/fuzz.sh
# runs them from this build: the library is compiled once for both), and runs the CPU tests
# (GPU tests too, where a GPU is present: CUDA needs ASAN_OPTIONS=protect_shadow_gap=0, set here)
# but the compile corpus tests, which the main build runs (label cpu_corpus, tests/CMakeLists.txt).
# Leaks inside NVRTC and nvJitLink themselves are suppressed (tests/lsan.supp); any other report
# fails the run.
# handle_segv=0: tests that crash a child on purpose (the load probe, the link worker) expect it
# to die of the signal, not of ASan's report; a segfault elsewhere still fails its test.
# The MPI tests run with leak detection off: Open MPI leaves allocations of its plugins, which it
# has unloaded by then, at MPI_Finalize (their frames name no library a suppression could match).
set -euo pipefail
cd "$(dirname "$0")/.."
# clang 14 (Debian bookworm) needs libclang-rt-14-dev for the sanitizers' and libFuzzer's runtimes.
bash scripts/install-packages.sh clang libclang-rt-14-dev
build_dir="${SANITIZE_BUILD_DIR:-build-sanitize}"
# clang, not GCC: the fuzzers need its -fsanitize=fuzzer, so one build serves the tests and the
# fuzzers (the library compiled once, with fuzzer-no-link coverage, fuzz/CMakeLists.txt), and it
# compiles the test programs in about half GCC's time (-O0 under ASan). -shared-libsan: the
# sanitizer runtime as a shared library, as GCC links it, so the fault-injection library
# (tests/support/fault_injection.c) still tells the runtime's own calls by their library's name
# and the tests that preload a library turn off the runtime's link-order check as they do for
# GCC's (its folder goes into each program's run path). Two checks of clang's UBSan are left
# out, as GCC's never made them: vptr (a virtual call's object), which asks the kernel through a
# pipe whether memory is readable, so that in a process whose descriptors or pipes are made to
# fail on purpose (the fault-injection tests) it reports sound objects; and enum, which takes the
# range of an enum without a fixed type to be the bits its enumerators need, where GCC takes the
# whole underlying type: Errors.EveryDriverStatusHasItsName gives driver_status_name an unknown
# CUresult (123456) on purpose.
flags="-fsanitize=address,undefined -fno-sanitize=vptr,enum -fno-sanitize-recover=undefined"
flags="$flags -fno-omit-frame-pointer -shared-libsan"
link_flags="$flags -Wl,-rpath,$(clang++ --print-runtime-dir)"
# Set before the build, which runs the sanitized CLI (`cudacore bundle`, through NVRTC's front
# end) to make the header bundles of the tests.
# intercept_tls_get_addr=0: the sanitizer runtime of GCC 12 and LLVM 14 (up to GCC 13 / LLVM 16)
# takes a dynamic TLS block that happens to start 16 bytes past a page boundary for a pre-2.25
# glibc header and reads the words before it; LeakSanitizer's tracer then dies at exit ("Tracer
# caught signal 11"), as it did in CLI children that compiled (NVRTC's thread-local storage is
# dynamic). Static TLS is still scanned, and dynamic TLS blocks stay reachable through the
# thread's vector of them.
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:handle_segv=0:intercept_tls_get_addr=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# A unity build (CMake joins up to 8 sources of a target into one compile): the library compiles
# in a third of the time; each source still compiles alone in the main build. Everything at -O0
# (assertions on): under ASan the library and the CLI compile in half the time of -O1 (134
# against 304 processor seconds on 2 cores), the test programs a third quicker, and the CPU
# suite takes as long (572 against 550 s of test time: its time is NVRTC's, uninstrumented, and
# its child processes').
# A folder configured with GCC before: CMake keeps a build's compiler, so its cache goes.
if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++$' "$build_dir/CMakeCache.txt"; then
  rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O0" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_HOST_COMPILER=clang++ \
  -DCMAKE_UNITY_BUILD=ON -DCUDACORE_TEST_OPTIMIZE=-O0 -DCUDACORE_BUILD_BENCHMARKS=OFF \
  -DCUDACORE_BUILD_FUZZERS=ON -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$link_flags" -DCMAKE_SHARED_LINKER_FLAGS="$link_flags" >/dev/null
# Without a GPU only what the CPU tests run is built (the GPU tests and examples would skip):
# about a third less to compile.
if nvidia-smi -L >/dev/null 2>&1; then
  cmake --build "$build_dir" -j "$(nproc)"
  labels=()
else
  cmake --build "$build_dir" -j "$(nproc)" --target cudacore_cpu_checks cudacore_fuzzers
  labels=(-L cpu)
fi
# One rerun of a failing test stays until CI has shown the flag above is enough: the tracer's
# crash depends on where the allocator puts a block (about 1 run in 2 of the CLI cache tests under
# CTest before, none in 35 runs outside it since). A test that fails twice fails the pass.
# The compile corpus tests (label cpu_corpus) run in the main build only: their time is NVRTC's.
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 "${labels[@]}" \
  -LE cpu_corpus --repeat until-pass:2 -E '^mpi\.'
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
  ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 600 "${labels[@]}" -R '^mpi\.'
echo "sanitize: ASan + UBSan pass over the CPU suite clean"
