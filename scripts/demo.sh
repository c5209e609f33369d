#!/usr/bin/env bash
# The main job: set up, build, and run `cudacore demo`; then, where Open MPI is present (and so
# cudacore::mpi and its example were built), the MPI autotune example on 2 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the demo runs: the CLI, its helper programs and the MPI example (where Open MPI is).
BUILD_TARGETS="cudacore_cli cudacore_load_probe cudacore_link_worker cudacore_compile_worker example_mpi_autotune" \
  bash scripts/setup.sh
build_dir="${BUILD_DIR:-build}"
"$build_dir/tools/cudacore" demo

# Every rank compiles its share of the kernel variants and all ranks exchange them; with a GPU on
# every rank each times its share, the fastest is chosen by an all-reduce and every rank runs and
# checks it (ranks share a GPU where there are fewer GPUs than ranks).
example="$build_dir/examples/example_mpi_autotune"
if command -v mpirun >/dev/null && [ -x "$example" ]; then
  echo "== mpi (examples/mpi_autotune.cpp on 2 ranks)"
  flags=(--oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
  [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
  share=()
  [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -lt 2 ] && share=(--share-devices)
  mpirun "${flags[@]}" -np 2 "$example" "${share[@]}"
else
  echo "== mpi: SKIPPED (Open MPI's mpirun or the built example is missing)"
fi
