#!/usr/bin/env bash
# Packages the build (cpack: Debian packages and a tarball) and builds the consumer project
# (tests/install/consumer) three ways, running its programs each time (tests/install/check_consumer.cmake):
#   1. find_package against a `cmake --install` prefix, moved to another folder after the install
#      (the package is relocatable), plus the pkg-config file and the installed CLI;
#   2. find_package against the Debian packages unpacked with `dpkg -x` into a scratch root
#      (no root install), the same checks;
#   3. FetchContent of this source tree, building only the targets the consumer needs (the
#      library, the CLI for cudacore_add_header_bundle, the link worker). What it checks is the
#      subproject's wiring (its targets, options and helper programs), not the compiler's
#      output, which the main build covers: so it is a unity build at -O0 (no debug
#      information), the quickest compile. (With the build's flags it would cost a second full
#      build: ccache misses it, since its generated headers lie in another folder.) It builds
#      cudacore without the remote tier (CUDACORE_BUILD_REMOTE=OFF), as a machine without
#      hiredis, OpenSSL or uriparser does: no libcudacore_remote, and a CLI that refuses --remote.
# `dpkg-deb --info` of each package is printed and its Depends line checked.
# Needs a finished build in ${BUILD_DIR:-build} (scripts/setup.sh); writes ${BUILD_DIR}-packages.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
build_dir="$(cd "${BUILD_DIR:-build}" && pwd)"
work="${build_dir}-packages"
rm -rf "$work"
mkdir -p "$work"

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
generator="$(cache_value CMAKE_GENERATOR)"
build_type="$(cache_value CMAKE_BUILD_TYPE)"
launcher="$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)"
cxx="$(cache_value CMAKE_CXX_COMPILER)"
libdir="$(cache_value CMAKE_INSTALL_LIBDIR)"
with_mpi=OFF
[ -e "$build_dir/libcudacore_mpi.so" ] && with_mpi=ON
common=(-DCONSUMER_DIR="$root/tests/install/consumer" -DGENERATOR="$generator" -DBUILD_TYPE="$build_type"
        -DLAUNCHER="$launcher" -DCXX="$cxx" -DLIBDIR="$libdir" -DWITH_MPI="$with_mpi")

step_start=$SECONDS
step_done() { echo "   ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
echo "== cpack: Debian packages and a tarball"
(cd "$work" && cpack --config "$build_dir/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log") ||
  { cat "$work/cpack.log"; exit 1; }
ls "$work"/out/*.deb "$work"/out/*.tar.gz

# Each package's Depends line must name what it needs: its own libraries (from dpkg-shlibdeps)
# and, for the others, libcudacore0 at the same version.
depends_of() { dpkg-deb --field "$1" Depends; }
check_depends() {  # package-file pattern, then the names its Depends must list
  local deb
  deb="$(ls "$work"/out/$1_*.deb)"
  echo "== dpkg-deb --info $(basename "$deb")"
  dpkg-deb --info "$deb" | sed -n '/^ [A-Z][A-Za-z-]*:/,$p'
  shift
  for name in "$@"; do
    if ! depends_of "$deb" | tr ',' '\n' | grep -Eq "^ *($name)( |$)"; then
      echo "error: $(basename "$deb"): Depends lacks $name: $(depends_of "$deb")" >&2
      exit 1
    fi
  done
}
version="$(dpkg-deb --field "$(ls "$work"/out/libcudacore0_*.deb)" Version)"
check_depends libcudacore0 libc6 'libstdc\+\+6' libzstd1 'libnettle[0-9]+'
check_depends libcudacore-remote0 libcudacore0 'libssl3|libssl3t64' 'libhiredis[0-9.]+' liburiparser1
check_depends libcudacore-dev libcudacore0 libssl-dev libzstd-dev nettle-dev libhiredis-dev liburiparser-dev libdlpack-dev
check_depends cudacore-tools libcudacore0 libcudacore-remote0 libc6 'libstdc\+\+6'
depends_of "$(ls "$work"/out/libcudacore-dev_*.deb)" | grep -q "libcudacore0 (= $version)" ||
  { echo "error: libcudacore-dev does not depend on libcudacore0 (= $version)" >&2; exit 1; }
if [ "$with_mpi" = ON ]; then
  check_depends libcudacore-mpi0 libcudacore0 'libopenmpi[0-9]+'
fi
echo "== the tarball: every component"
tar tzf "$work"/out/*.tar.gz | grep -E "/(lib/libcudacore\.so\.0|bin/cudacore|include/cudacore/cudacore\.hpp|lib/cmake/cudacore/cudacoreConfig\.cmake|libexec/cudacore/cudacore-link-worker)$" |
  sort | tee "$work/tarball-files"
[ "$(wc -l <"$work/tarball-files")" -eq 5 ] || { echo "error: the tarball lacks files" >&2; exit 1; }

step_done
echo "== 1. find_package from a cmake --install prefix, moved after the install"
cmake --install "$build_dir" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/moved-prefix"
cmake "${common[@]}" -DWORK_DIR="$work/consumer-prefix" -DPREFIX="$work/moved-prefix" \
  -P tests/install/check_consumer.cmake

step_done
echo "== 2. find_package from the Debian packages unpacked with dpkg -x"
for deb in "$work"/out/*.deb; do dpkg -x "$deb" "$work/deb-root"; done
cmake "${common[@]}" -DWORK_DIR="$work/consumer-deb" -DPREFIX="$work/deb-root/usr" \
  -P tests/install/check_consumer.cmake

step_done
echo "== 3. FetchContent of the source tree, built without the remote tier (CUDACORE_BUILD_REMOTE=OFF)"
cmake "${common[@]}" -DWORK_DIR="$work/consumer-fetch" -DFETCH_SOURCE="$root" -DFAST_BUILD=ON -DWITH_REMOTE=OFF \
  -P tests/install/check_consumer.cmake
step_done
echo "packages and the three consumer builds: ok (${SECONDS} s in all)"
