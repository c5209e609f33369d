#!/usr/bin/env bash
# Runs the file storm (tests/cpu/cache/compile/file_storm_test.cpp) long: PROCESSES processes at once
# compile through one disk cache and one header bundle folder for SECONDS while headers and
# folders are edited, created, removed, renamed and swapped under them (OPS: a comma-separated
# subset of edit,map-edit,create,remove,rename,swap,bundle-edit,bundle-link,bundle-swap; empty
# for all).
# Prints the harness's figures; exits non-zero on any wrong result, failed compile or crash.
#
#   scripts/file_storm.sh [BUILD_DIR] [SECONDS] [PROCESSES] [OPS]
#   e.g. scripts/file_storm.sh build 36000 16
set -euo pipefail
build=${1:-build}
export CUDACORE_STORM_SECONDS=${2:-3600}
export CUDACORE_STORM_PROCESSES=${3:-8}
export CUDACORE_STORM_OPS=${4:-}
cmake --build "$build" --target cpu_file_storm_test helper_file_storm_worker
exec "$build/tests/cpu_file_storm_test" --gtest_filter='FileStorm.*'
