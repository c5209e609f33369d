#!/usr/bin/env bash
# Installs the Debian packages cudacore builds with (only those missing), then configures and
# builds (everything, or $BUILD_TARGETS) into ${BUILD_DIR:-build}, build type ${BUILD_TYPE:-Release} (the tests and the demo need
# no debug information, which costs a third of the compile time; the GPU bundle builds
# RelWithDebInfo). The CUDA toolkit (headers only; nothing links against it) must already be
# installed, in /usr/local/cuda or $CUDA_HOME.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-packages.sh cmake ninja-build ccache g++ libgtest-dev libbenchmark-dev \
  libcli11-dev libxxhash-dev libzstd-dev nettle-dev libssl-dev nlohmann-json3-dev llvm-14 libdlpack-dev libhiredis-dev liburiparser-dev \
  libgl-dev libegl-dev "$@"
# libgl-dev, libegl-dev: GL/gl.h, to check cudaGL.h's types against the driver table, and the
# OpenGL interop tests' headless EGL context (the libraries are opened at run time, not linked).
# redis-server: the remote program cache's tests start their own server on a loopback port;
# openssl: its TLS tests make their CA and certificates with the openssl command.
bash scripts/install-packages.sh redis-server openssl
# Open MPI: the optional cudacore::mpi component, its tests (mpirun) and benchmark.
bash scripts/install-packages.sh libopenmpi-dev openmpi-bin
# The packages (scripts/packages.sh): cpack's Debian generator runs dpkg-shlibdeps (dpkg-dev),
# which reads binaries with file; the consumer build checks cudacore.pc with pkg-config.
bash scripts/install-packages.sh dpkg-dev file pkg-config
# scripts/check-function-length.py finds each function's extent with Universal Ctags.
bash scripts/install-packages.sh universal-ctags

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda_home/include/cuda.h" ]; then
  echo "error: the CUDA toolkit was not found at $cuda_home (set CUDA_HOME)" >&2
  exit 1
fi
export PATH="$cuda_home/bin:$PATH"

# libNVVM (with nvvm.h and libdevice), nvml.h and nvFatbin come with a full toolkit; where they are missing,
# NVIDIA's Python packages provide them, installed into .deps/python (found by CMakeLists.txt).
python_deps=()
[ -f "$cuda_home/nvvm/include/nvvm.h" ] || python_deps+=("nvidia-nvvm==13.0.*")
[ -f "$cuda_home/include/nvml.h" ] || python_deps+=("nvidia-nvml-dev==13.0.*")
[ -f "$cuda_home/include/nvFatbin.h" ] || python_deps+=("nvidia-nvfatbin==13.0.*")
# One pip call for all of them: they share the nvidia/ folder, which --target replaces.
if [ ${#python_deps[@]} -gt 0 ] && [ "$(cat .deps/python/.installed 2>/dev/null)" != "${python_deps[*]}" ]; then
  echo "installing ${python_deps[*]} into .deps/python"
  rm -rf .deps/python
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target .deps/python "${python_deps[@]}"
  echo "${python_deps[*]}" >.deps/python/.installed
fi

build_dir="${BUILD_DIR:-build}"
# ccache as the compiler launcher (unless CMAKE_ARGS names one): a build made again from scratch
# (another build folder of this checkout, a fresh clone at the same path) is made of hits.
launcher=()
case "${CMAKE_ARGS:-}" in
  *COMPILER_LAUNCHER*) ;;
  *) command -v ccache >/dev/null &&
       launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache) ;;
esac
# The optimisation levels go back to their defaults unless CMAKE_ARGS sets them again, so that a
# folder scripts/test.sh configured without a GPU (the library at -O1, the tests at -O0) builds
# the demo, benchmarks or a GPU run at the levels they are meant for.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DCUDAToolkit_ROOT="$cuda_home" "${launcher[@]}" -UCMAKE_CXX_FLAGS_RELEASE -UCUDACORE_TEST_OPTIMIZE \
  ${CMAKE_ARGS:-} >/dev/null
# BUILD_TARGETS: build only these (the demo: what it runs), those the configuration has; default
# everything.
targets=()
if [ -n "${BUILD_TARGETS:-}" ]; then
  known=$(cmake --build "$build_dir" --target help | awk -F: '{print $1}')
  for target in $BUILD_TARGETS; do
    grep -qx "$target" <<<"$known" && targets+=(--target "$target")
  done
fi
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
