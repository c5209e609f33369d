#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer + UndefinedBehaviorSanitizer, the
# library compiled the same way) in ${FUZZ_BUILD_DIR:-build-fuzz} and runs each one, starting
# from the committed seed corpus in fuzz/corpus/. A folder already configured with the fuzzers
# (scripts/sanitize.sh's, which scripts/test.sh names) is used as it is: its library is the
# tests' ASan + UBSan build, at -O0 (fewer inputs a second than an optimised build; every input
# of the committed corpus runs whatever the time). FUZZ_SECONDS (default 60) is the total time,
# shared between the targets (more targets, less time each). Any crash, sanitizer report or leak
# fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

# clang 14 (Debian bookworm) needs libclang-rt-14-dev for -fsanitize=fuzzer's runtime.
bash scripts/install-packages.sh clang libclang-rt-14-dev

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
build_dir="${FUZZ_BUILD_DIR:-build-fuzz}"
# Every reader of outside bytes: serialized code, cache entries, code inspection and validation,
# the code reader's lenient users (parameter count, arch fit), IPC descriptors, header bundles, cache
# artefacts, and where their components are built (as setup.sh's packages make them) remote
# cache entries and MPI messages.
targets=(deserialize cache_entry inspect code_validation code_reader ipc_descriptor bundle cache_artefact)
if ! grep -qx 'CUDACORE_BUILD_FUZZERS:BOOL=ON' "$build_dir/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_COMPILER=clang++ -DCUDAToolkit_ROOT="$cuda_home" -DCMAKE_UNITY_BUILD=ON \
    -DCUDACORE_BUILD_FUZZERS=ON -DCUDACORE_BUILD_TESTS=OFF -DCUDACORE_BUILD_BENCHMARKS=OFF \
    -DCUDACORE_BUILD_TOOLS=OFF ${CMAKE_ARGS:-} >/dev/null
fi
if ninja -C "$build_dir" -t targets all | grep '^fuzz_remote_entry:' >/dev/null; then
  targets+=(remote_entry)
else
  echo "fuzz: the remote tier is not built, its entry reader is not fuzzed"
fi
if ninja -C "$build_dir" -t targets all | grep '^fuzz_mpi_message:' >/dev/null; then
  targets+=(mpi_message)
else
  echo "fuzz: MPI not found, the MPI message reader is not fuzzed"
fi
cmake --build "$build_dir" -j "$(nproc)" --target cudacore_fuzzers

total="${FUZZ_SECONDS:-60}"
per_target=$(( total / ${#targets[@]} ))
[ "$per_target" -lt 1 ] && per_target=1
link_seconds="${LINK_FUZZ_SECONDS:-20}"
mkdir -p "$build_dir/artifacts" "$build_dir/corpus/link"
# Every reader bounds what reading costs before it allocates (decompressed bytes, elements, the
# memory a decoded value takes: a symbol map at most 64 MiB in many small nodes, an artefact's
# entries at most the fuzzer's max_memory of 16 MiB, zstd's window 8 MiB), so no single allocation
# of any reader comes near FUZZ_MALLOC_LIMIT_MB (64): libFuzzer fails the run on the first one
# that passes it (-malloc_limit_mb), and on a process past FUZZ_RSS_LIMIT_MB (2048) in all.
malloc_limit_mb="${FUZZ_MALLOC_LIMIT_MB:-64}"
rss_limit_mb="${FUZZ_RSS_LIMIT_MB:-2048}"
# Fuzzers of the sanitizer build (scripts/sanitize.sh) take the sanitizer runtime as a shared
# library, which libFuzzer's C++ runtime precedes among their libraries: it is preloaded, as ASan
# asks, so that its allocator and interceptors come first.
preload=()
if readelf -d "$build_dir/fuzz/fuzz_deserialize" | grep 'libclang_rt\.asan' >/dev/null; then
  preload=(env LD_PRELOAD="$(clang++ -print-file-name=libclang_rt.asan-x86_64.so)")
fi
# fuzz NAME BINARY SECONDS CORPUS...: one fuzzer run, its output in $build_dir/NAME.fuzz.log and
# its exit status in $build_dir/NAME.fuzz.status. New inputs go to the first corpus (the working
# one in the build folder); the committed seeds are only read.
fuzz() {
  local name=$1 binary=$2 seconds=$3; shift 3
  local status=0
  "${preload[@]}" "$binary" -max_total_time="$seconds" -print_final_stats=1 \
    -malloc_limit_mb="$malloc_limit_mb" -rss_limit_mb="$rss_limit_mb" \
    -artifact_prefix="$build_dir/artifacts/$name-" "$@" >"$build_dir/$name.fuzz.log" 2>&1 || status=$?
  echo "$status" >"$build_dir/$name.fuzz.status"
}
# Each fuzzer runs on one core, so they run side by side, as many at once as there are cores:
# every target still fuzzes for its whole share of the time, in a fraction of the wall time.
lanes=$(nproc)
# The isolated link (nvJitLink in the link worker process, as `cudacore link` runs it) for
# LINK_FUZZ_SECONDS (default 20) more, from the code validator's seeds (the same input format).
# This process must never crash; inputs that crash nvJitLink itself end the worker and are
# counted from the fuzzer's "nvJitLink crashed" lines.
echo "fuzzing link (isolated) for ${link_seconds}s"
fuzz link "$build_dir/fuzz/fuzz_link" "$link_seconds" "$build_dir/corpus/link" \
  fuzz/corpus/code_validation &
running=1
for target in "${targets[@]}"; do
  if [ "$running" -ge "$lanes" ]; then wait -n || true; running=$((running - 1)); fi
  mkdir -p "$build_dir/corpus/$target"
  echo "fuzzing $target for ${per_target}s"
  fuzz "$target" "$build_dir/fuzz/fuzz_$target" "$per_target" "$build_dir/corpus/$target" \
    "fuzz/corpus/$target" &
  running=$((running + 1))
done
wait

failed=0
for target in "${targets[@]}"; do
  log="$build_dir/$target.fuzz.log"
  if [ "$(cat "$build_dir/$target.fuzz.status")" = 0 ]; then
    echo "fuzz: $target:"; grep -E '^(Done|stat::)' "$log" || true
  else
    failed=1
    echo "fuzz: $target FAILED:"; cat "$log"
  fi
done

link_log="$build_dir/link.fuzz.log"
status=$(cat "$build_dir/link.fuzz.status")
grep -v "^link fuzzer: nvJitLink crashed" "$link_log" | tail -n 20
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$link_log")
crashes=$(grep -c "^link fuzzer: nvJitLink crashed" "$link_log" || true)
echo "link fuzzing: ${runs:-0} inputs run, ${crashes} crashed nvJitLink in the link worker" \
     "(each reported as a LinkError), fuzzer exit status ${status}"
[ "$failed" = 0 ] && [ "$status" = 0 ]
