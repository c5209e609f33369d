#!/usr/bin/env bash
# Times cudacore::mpi with build/bench/mpi_compile_timing under mpirun, for several rank counts:
# how long until every rank holds all SPECS specializations of a <cuda/std> kernel when every rank
# compiles them all ("every"), when rank 0 compiles and broadcasts ("once"), and with
# compile_distributed ("distributed"), and compile_distributed with child processes ("processes");
# then broadcast() of a BYTES ObjectCode against MPI_Bcast.
#
#   bash bench/mpi_compile.sh [BUILD_DIR]          # defaults: build, SPECS=64, RANKS="1 2 4 8"
#   SPECS=4 RANKS="1 2" REPEAT=5 ROUNDS=1 bash bench/mpi_compile.sh build   # a quick try
#
# Each compile figure is the median of ROUNDS runs (3). The runs go mode by mode, each mode over
# the rank counts in an order turned by one each round, with SETTLE seconds (1) of rest before
# each. Run once per cell, rank count by rank count, the 8-rank "processes" run always came right
# after "every", "once" and threads at 8 ranks, the heaviest runs, and single 8-rank runs moved by
# half a second from run to run.
#
# Environment: SPECS, RANKS, ROUNDS, SETTLE, BYTES (10000000), REPEAT (20), ARCH (sm_90), MODES
# ("every once distributed processes"), WORKERS (compile_distributed's threads or children per
# rank; default: the node's cores divided among its ranks), MPIRUN (mpirun), MPIRUN_FLAGS (added
# to the Open MPI defaults below). bench/mpi_scale.sh shows where the time of each run goes.
# Targets: distributed (or processes) at 8 ranks at least 5x faster than "every" at 1 rank; broadcast within
# 1.2x of MPI_Bcast.
set -euo pipefail
build_dir="${1:-build}"
bench="$build_dir/bench/mpi_compile_timing"
[ -x "$bench" ] || { echo "error: $bench not found (build the mpi_compile_timing target; it needs MPI)" >&2; exit 1; }
specs="${SPECS:-64}"; ranks_list="${RANKS:-1 2 4 8}"; bytes="${BYTES:-10000000}"; repeat="${REPEAT:-20}"
rounds="${ROUNDS:-3}"; settle="${SETTLE:-1}"
arch="${ARCH:-sm_90}"; modes="${MODES:-every once distributed processes}"; mpirun="${MPIRUN:-mpirun}"

flags=()
if "$mpirun" --version 2>/dev/null | grep -q "Open MPI"; then
  # One machine: more ranks than cores allowed, shared memory only, no process_vm_readv.
  # Ranks unbound, so that compile_distributed's threads spread over the node's cores.
  flags+=(--oversubscribe --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
  [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
fi
# shellcheck disable=SC2206
flags+=(${MPIRUN_FLAGS:-})

run() { "$mpirun" "${flags[@]}" -np "$1" "$bench" "${@:2}"; }
value() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

echo "cudacore::mpi: $specs specializations, $(nproc) cores, ranks: $ranks_list, median of $rounds runs each"
# shellcheck disable=SC2206
ranks_array=($ranks_list)
declare -A runs=()  # "mode ranks" -> the seconds of each run
for ((round = 0; round < rounds; ++round)); do
  for m in $modes; do
    for ((i = 0; i < ${#ranks_array[@]}; ++i)); do
      n=${ranks_array[$(((i + round) % ${#ranks_array[@]}))]}
      sleep "$settle"
      line=$(run "$n" --mode "$m" --specs "$specs" --arch "$arch" --workers "${WORKERS:-0}")
      runs["$m $n"]+="$(value seconds "$line") "
    done
  done
done
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n |
           awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-6s' ranks; for m in $modes; do printf ' %14s' "${m}_s"; done
for m in $modes; do case $m in distributed|processes) printf ' %18s' "every@1 / $m";; esac; done; echo
baseline=""
speedup() { if [ -n "$baseline" ] && [ -n "$1" ]; then awk -v a="$baseline" -v b="$1" 'BEGIN { printf "%.2fx", a / b }'; else echo -; fi; }
for n in $ranks_list; do
  printf '%-6s' "$n"
  declare -A seconds=()
  for m in $modes; do
    s=$(median "${runs["$m $n"]}")
    printf ' %14s' "$s"
    [ "$m" = every ] && [ "$n" = 1 ] && baseline="$s"
    seconds[$m]="$s"
  done
  for m in $modes; do case $m in distributed|processes) printf ' %18s' "$(speedup "${seconds[$m]}")";; esac; done
  echo
  unset seconds
done
echo "each run (seconds, in the order run):"
for m in $modes; do for n in $ranks_list; do echo "  $m at $n ranks: ${runs["$m $n"]}"; done; done

echo
printf '%-6s %12s %12s %18s %14s %20s\n' ranks bytes raw_ms cudacore_ms ratio "(vs reused buffer)"
for n in $ranks_list; do
  [ "$n" -ge 2 ] || continue
  line=$(run "$n" --mode bcast --bytes "$bytes" --repeat "$repeat")
  printf '%-6s %12s %12s %18s %14s %20s\n' "$n" "$bytes" "$(value raw_ms "$line")" "$(value cudacore_ms "$line")" \
    "$(value ratio "$line")" "$(value ratio_reused "$line")"
done
