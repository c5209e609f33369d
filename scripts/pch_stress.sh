#!/usr/bin/env bash
# Runs the PCH stress (tests/cpu/cache/compile/pch_stress_test.cpp) long: PROCESSES processes at once on
# one $TMPDIR and one disk cache until COMPILES compiles are done (or SECONDS pass), with SIGKILL
# of random processes. Prints the harness's figures; exits non-zero on any crash, wrong result or
# PCH folder left.
#
#   scripts/pch_stress.sh [BUILD_DIR] [COMPILES] [PROCESSES] [SECONDS]
#   e.g. scripts/pch_stress.sh build 8000 16 36000
set -euo pipefail
build=${1:-build}
export CUDACORE_STRESS_COMPILES=${2:-8000}
export CUDACORE_STRESS_PROCESSES=${3:-16}
export CUDACORE_STRESS_SECONDS=${4:-36000}
cmake --build "$build" --target cpu_pch_stress_test
exec "$build/tests/cpu_pch_stress_test" --gtest_filter='PchStress.*'
