#!/usr/bin/env bash
# Whether more ranks on one host make compile_distributed slower than one rank: runs
# build/bench/mpi_compile_timing --phases 1 for each strategy and rank count in turn, round after
# round, with the order of the rank counts turned by one each round (in mpi_compile.sh the 8-rank
# processes run always comes right after "every", "once" and threads at 8 ranks), and SETTLE
# seconds of rest before each run. Prints every run with where its time went, then per strategy
# and rank count the median and the least seconds, and the median over the first count's median.
# Target: processes no slower at any rank count than at one (ratio at most 1.05).
#
#   bash bench/mpi_scale.sh [BUILD_DIR]                  # SPECS=64 RANKS="1 8" ROUNDS=5 SETTLE=2
#   SPECS=8 RANKS="1 2 4" ROUNDS=3 bash bench/mpi_scale.sh build   # a quick try
#
# Environment: SPECS, RANKS, ROUNDS, SETTLE, STRATEGIES ("processes distributed"), ARCH (sm_90),
# WORKERS (0: the default), BEFORE (a mode of mpi_compile_timing run untimed at the same rank count
# right before each timed run; "every" gives each run the state mpi_compile.sh's processes runs
# met), WAKERS (K: each round also runs processes at the first rank count with K threads waking
# every millisecond, "processes+wakers": what K ranks waiting in a sleep loop cost, as
# compile_distributed's waiting ranks did before they slept on a futex), MPIRUN, MPIRUN_FLAGS.
#
# Columns: seconds (until every rank holds all codes); keys (the slowest rank's cache keys);
# to_child (from the keys to the first child: collectives and the PCH build); children (first
# child started to last one gone); tail (last child gone to the end: the wait, the exchange);
# peak (children at once) / started; cpu_lead (the pooling rank's own CPU seconds, wakers
# included), cpu_kids (its children's), cpu_others (the other ranks' together); dirty_mb (dirty
# and writeback page cache before the run).
set -euo pipefail
build_dir="${1:-build}"
bench="$build_dir/bench/mpi_compile_timing"
[ -x "$bench" ] || { echo "error: $bench not found (build the mpi_compile_timing target; it needs MPI)" >&2; exit 1; }
specs="${SPECS:-64}"; rounds="${ROUNDS:-5}"; settle="${SETTLE:-2}"
# shellcheck disable=SC2206
ranks_list=(${RANKS:-1 8})
strategies="${STRATEGIES:-processes distributed}"; arch="${ARCH:-sm_90}"; workers="${WORKERS:-0}"
before="${BEFORE:-}"; wakers="${WAKERS:-0}"; mpirun="${MPIRUN:-mpirun}"

flags=()
if "$mpirun" --version 2>/dev/null | grep -q "Open MPI"; then
  # As mpi_compile.sh: one machine, ranks unbound, shared memory only.
  # shellcheck disable=SC2054
  flags+=(--oversubscribe --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
  [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
fi
# shellcheck disable=SC2206
flags+=(${MPIRUN_FLAGS:-})

value() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
dirty_mb() { awk '/^(Dirty|Writeback):/ { kb += $2 } END { printf "%d", kb / 1024 }' /proc/meminfo; }

echo "host: $(nproc) CPUs for this process; $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
lscpu 2>/dev/null | grep -E '^(Socket|Core|Thread|NUMA node\(s\))' | tr -s ' ' | paste -sd ';' || true
echo "governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo none)" \
  "cpuidle: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
echo "TMPDIR ${TMPDIR:-/tmp}: $(df -T "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 ", " $5 " KB free" }')"
echo "$("$mpirun" --version 2>/dev/null | head -1); flags: ${flags[*]}"
echo "specs=$specs ranks=${ranks_list[*]} rounds=$rounds settle=${settle}s strategies=$strategies" \
  "before=${before:-none} wakers=$wakers"
echo

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
printf '%-17s %5s %5s %8s %6s %8s %8s %6s %9s %8s %8s %10s %8s\n' strategy ranks round seconds keys to_child \
  children tail peak/kids cpu_lead cpu_kids cpu_others dirty_mb
one_run() {  # strategy ranks round [extra arguments]
  local strategy=$1 n=$2 round=$3 mode=${1%%+*}
  shift 3
  [ -n "$before" ] && "$mpirun" "${flags[@]}" -np "$n" "$bench" --mode "$before" --specs "$specs" --arch "$arch" >/dev/null
  sleep "$settle"
  local dirty; dirty=$(dirty_mb)
  local line
  line=$("$mpirun" "${flags[@]}" -np "$n" "$bench" --mode "$mode" --specs "$specs" --arch "$arch" \
         --workers "$workers" --phases 1 "$@")
  local s k from to
  s=$(value seconds "$line"); k=$(value keys_s "$line"); from=$(value children_from_s "$line"); to=$(value children_to_s "$line")
  local to_child=- children=- tail=-
  if [ "$from" != "-1.000" ]; then
    to_child=$(awk -v a="$from" -v b="$k" 'BEGIN { printf "%.3f", a - b }')
    children=$(awk -v a="$to" -v b="$from" 'BEGIN { printf "%.3f", a - b }')
    tail=$(awk -v a="$s" -v b="$to" 'BEGIN { printf "%.3f", a - b }')
  fi
  printf '%-17s %5s %5s %8s %6s %8s %8s %6s %9s %8s %8s %10s %8s\n' "$strategy" "$n" "$round" "$s" "$k" \
    "$to_child" "$children" "$tail" "$(value peak_children "$line")/$(value children "$line")" \
    "$(value cpu_child_rank_s "$line")" "$(value cpu_children_s "$line")" "$(value cpu_others_s "$line")" "$dirty"
  echo "$strategy $n $s" >>"$rows"
}

for ((round = 1; round <= rounds; ++round)); do
  # This round's order of the rank counts: turned by one each round.
  count=${#ranks_list[@]}
  order=()
  for ((i = 0; i < count; ++i)); do order+=("${ranks_list[$(((i + round - 1) % count))]}"); done
  for strategy in $strategies; do
    for n in "${order[@]}"; do one_run "$strategy" "$n" "$round"; done
  done
  if [ "$wakers" -gt 0 ]; then one_run processes+wakers "${ranks_list[0]}" "$round" --wakers "$wakers"; fi
done

echo
printf '%-17s %5s %8s %8s %10s\n' strategy ranks median least "median/${ranks_list[0]}"
for strategy in $strategies $([ "$wakers" -gt 0 ] && echo processes+wakers); do
  base=""
  for n in "${ranks_list[@]}"; do
    times=$(awk -v s="$strategy" -v n="$n" '$1 == s && $2 == n { print $3 }' "$rows" | sort -n)
    [ -n "$times" ] || continue
    median=$(awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' <<<"$times")
    least=$(head -1 <<<"$times")
    if [ "$strategy" = processes+wakers ]; then
      base=$(awk -v n="${ranks_list[0]}" '$1 == "processes" && $2 == n { print $3 }' "$rows" | sort -n |
             awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    fi
    [ -n "$base" ] || base=$median
    printf '%-17s %5s %8s %8s %10s\n' "$strategy" "$n" "$median" "$least" \
      "$(awk -v a="$median" -v b="$base" 'BEGIN { printf "%.3f", a / b }')"
  done
done
