#!/usr/bin/env bash
# The main job: set up, build, and run `cudacore demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
"${BUILD_DIR:-build}/tools/cudacore" demo
