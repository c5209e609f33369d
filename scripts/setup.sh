#!/usr/bin/env bash
# Installs the Debian packages cudacore builds with (only those missing), then configures and
# builds into ${BUILD_DIR:-build}. The CUDA toolkit (headers only; nothing links against it)
# must already be installed, in /usr/local/cuda or $CUDA_HOME.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-packages.sh cmake ninja-build g++ libgtest-dev libbenchmark-dev \
  libcli11-dev libxxhash-dev libssl-dev nlohmann-json3-dev libdlpack-dev "$@"

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda_home/include/cuda.h" ]; then
  echo "error: the CUDA toolkit was not found at $cuda_home (set CUDA_HOME)" >&2
  exit 1
fi
export PATH="$cuda_home/bin:$PATH"

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDAToolkit_ROOT="$cuda_home" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
