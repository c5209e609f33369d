#!/usr/bin/env bash
# Builds (or updates) ${BUILD_DIR:-build} and packs a stripped copy of its programs as
# BUNDLE_DIR/build.tar.gz, for a GPU machine that lacks the build dependencies (unpack it there
# and run scripts/gpu-check.sh on it). Shared libraries the GPU machine may lack (Google Benchmark,
# libcrypto, hiredis, uriparser, zstd) travel in runtime-libs/, which gpu-check.sh puts on LD_LIBRARY_PATH.
#   scripts/gpu-bundle.sh BUNDLE_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-packages.sh cpio
bundle="$1"
build_dir="${BUILD_DIR:-build}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
# The optimisation levels at their defaults unless CMAKE_ARGS sets them (as scripts/setup.sh does):
# a folder scripts/test.sh configured without a GPU has the library at -O1 and the tests at -O0.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DCUDAToolkit_ROOT="$cuda_home" \
  -DCUDACORE_CPU_TESTS_IN_ALL=ON -UCMAKE_CXX_FLAGS_RELEASE -UCUDACORE_TEST_OPTIMIZE ${CMAKE_ARGS:-} >/dev/null
# BUNDLE_TARGETS: build only these (what the GPU machine runs) before packing; default everything.
cmake --build "$build_dir" -j "$(nproc)" ${BUNDLE_TARGETS:+--target $BUNDLE_TARGETS}
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/runtime-libs"
(cd "$build_dir" && find . -maxdepth 4 \( -name 'libcudacore*.so*' -o -path './tests/cpu_*' -o \
   -path './tests/gpu_*' -o -path './tests/helper_*' -o -path './tests/data/*' -o -path './tests/mpi_*' -o -path './tools/cudacore' -o \
   -path './bench/*' -o -path './examples/*' -o -name 'cudacore-load-probe' -o -name 'cudacore-link-worker' -o -name 'cudacore-compile-worker' -o -path './tests/*.bc' \) \
   \( -type f -o -type l \) ! -name '*.cmake' \
   ! -path '*/CMakeFiles/*' -print | cpio -pdm --quiet "$stage/build")
find "$stage/build" -type f -perm -u+x -exec strip --strip-unneeded {} + 2>/dev/null || true
# Every library the programs link beyond the C and C++ runtimes and the driver (Google Benchmark,
# OpenSSL's libcrypto, hiredis, uriparser, zstd, ...): a GPU machine's distribution may lack them.
for lib in $(ldd "$build_dir"/bench/*_bench "$build_dir"/bench/side_by_side "$build_dir"/tools/cudacore "$build_dir"/lib*.so* \
               "$build_dir"/tests/cpu_* "$build_dir"/tests/gpu_* "$build_dir"/tests/helper_* 2>/dev/null |
             awk '/=> \// {print $3}' |
             grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt|ld-linux[^/]*|libcuda|libcudacore[^/]*)\.so' |
             grep -vE '/lib(mpi|open-|hwloc|event|udev)' | sort -u); do  # MPI comes from the GPU machine's own Open MPI
  cp -L "$lib" "$stage/build/runtime-libs/"
done
mkdir -p "$bundle"
tar -C "$stage" -czf "$bundle/build.tar.gz" build
ls -la "$bundle/build.tar.gz"
