#!/usr/bin/env bash
# Runs a prebuilt tree's tests, CLI checks and benchmarks on a GPU machine, without CTest (so the
# build folder may have moved), and writes OUT_DIR/summary.txt and OUT_DIR/logs.tar.gz (one log
# per program).
#   scripts/gpu-check.sh BUILD_DIR OUT_DIR [tests|bench|all|sanitize|multi|torture]
# tests (and all): every test program, then every example (rc and its last line each), then
#   the MPI tests and example.
# bench (and all): every Google Benchmark program (*_bench, with its ratio table), then
#   bench/side_by_side.py, whose table, Markdown and chart go to OUT_DIR/side-by-side. BENCHES (a
#   shell pattern of program names, default '*_bench') and SIDE_BY_SIDE=0 split the run in two
#   where one command may not take it all.
# multi: the runs that need two GPUs (or more): the multi-device, IPC and virtual-memory test
#   programs, those under compute-sanitizer, the MPI autotune example with one rank per GPU, the
#   multi-GPU benchmark and bench/mpi_compile.sh (SPECS, RANKS as there).
# sanitize: every GPU test program (and the helper programs they start) under
#   compute-sanitizer --leak-check full --target-processes all; prints leaks and errors per program
#   and in total. Tests that make driver calls fail on purpose are listed in
#   tests/sanitize_expected_errors.txt: they run in a second pass whose counts are shown apart.
#   Those listed in tests/sanitize_excluded_tests.txt cannot run under the tool and are left out.
#   Exits 1 when the first pass finds any leak or error. COMPUTE_SANITIZER overrides the tool's path;
#   PARALLEL runs that many programs at once (default 1; under 8 at once on a 16-core host one
#   helper process aborted that runs clean alone: rerun a failing program alone before reading it
#   as a defect); SANITIZE_ONLY (a shell pattern of program names, e.g. 'gpu_[a-l]*') runs only
#   those.
# torture: the teardown torture program (tests/helpers/teardown_torture.cpp) for SEEDS seeds
#   (default 10000, from FIRST_SEED, default 1) in PARALLEL processes (default: the core count),
#   each under a TORTURE_TIMEOUT (default 60 s): counts passes, failures, crashes (by signal) and
#   hangs, keeps each failing seed's log; then SANITIZE_SEEDS of them (default 100) under
#   compute-sanitizer --leak-check full; then the adopted-stream teardown program RUNS times
#   (default 500) each with its output to a pipe, to a file and under timeout. A hung seed is
#   rerun HANG_RERUNS times (default 8) with every thread's stack written to its log when it hangs
#   again. Exits 1 on any crash, hang, failure, leak or sanitizer error.
# Shared libraries the build needs and the GPU machine may lack can be put in BUILD_DIR/runtime-libs.
set -uo pipefail
build="$(cd "$1" && pwd)"; out="$2"; what="${3:-all}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
final="$out"
out="$(mktemp -d)"
export LD_LIBRARY_PATH="$build:$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary="$final/summary.txt"
: >"$summary"

note() { echo "$*" | tee -a "$summary"; }

note "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
"$build/tools/cudacore" devices >"$out/devices.txt" 2>&1; note "cudacore devices: rc=$?"
"$build/tools/cudacore" demo >"$out/demo.txt" 2>&1; note "cudacore demo: rc=$? ($(grep -c SKIPPED "$out/demo.txt") skipped steps)"

if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in "$build"/tests/gpu_* "$build"/tests/cpu_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    timeout 300 "$t" --gtest_color=no >"$out/$name.log" 2>&1
    rc=$?
    passed=$(grep -c '^\[       OK \]' "$out/$name.log")
    failed=$(grep -c '^\[  FAILED  \] [A-Za-z]' "$out/$name.log")
    skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z]' "$out/$name.log")
    note "$(printf '%-44s rc=%-3s passed=%-3s failed=%-3s skipped=%s' "$name" "$rc" "$passed" "$failed" "$skipped")"
    grep -E '^\[  FAILED  \] [A-Za-z]|^\[  SKIPPED \] [A-Za-z]' "$out/$name.log" | sort -u | sed 's/^/    /' | tee -a "$summary" >/dev/null
  done
  # Every example (the MPI one below): each checks its own result and exits 1 when it is wrong;
  # "skipped: <why>" says the hardware it needs is missing. persistent_cache runs twice: the
  # second run must find the first one's code in the cache.
  example_tmp="$out/example-tmp"; mkdir -p "$example_tmp"
  for e in "$build"/examples/example_*; do
    [ -x "$e" ] || continue
    name=$(basename "$e")
    [[ "$name" == example_mpi_* ]] && continue  # under mpirun below
    runs=1; [ "$name" = example_persistent_cache ] && runs=2
    for run in $(seq "$runs"); do
      TMPDIR="$example_tmp" timeout 300 "$e" >"$out/$name.$run.log" 2>&1
      rc=$?
      label="$name"; [ "$runs" -gt 1 ] && label="$name (run $run)"
      note "$(printf '%-44s rc=%-3s %s' "$label" "$rc" "$(tail -1 "$out/$name.$run.log")")"
    done
  done
  # cudacore::mpi (when built and mpirun is here): its tests on 4 ranks, the autotune example on 2
  # ranks, one per GPU where there are two, sharing the GPU where there is one, and the
  # compile-once-per-fleet example on 2 ranks.
  if command -v mpirun >/dev/null && [ -x "$build/examples/example_mpi_autotune" ]; then
    mpi_flags=(--oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none -x LD_LIBRARY_PATH)
    [ "$(id -u)" = 0 ] && mpi_flags+=(--allow-run-as-root)
    for t in "$build"/tests/cpu_mpi_*; do
      [ -x "$t" ] || continue
      name=$(basename "$t")
      timeout 300 mpirun "${mpi_flags[@]}" -np 4 "$t" --gtest_color=no >"$out/$name.log" 2>&1
      note "$(printf '%-44s rc=%-3s (mpirun -np 4) passed=%s failed=%s' "$name" "$?" \
        "$(grep -c '^\[       OK \]' "$out/$name.log")" "$(grep -c '^\[  FAILED  \] [A-Za-z]' "$out/$name.log")")"
    done
    gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
    share=(); [ "$gpus" -lt 2 ] && share=(--share-devices)
    timeout 300 mpirun "${mpi_flags[@]}" -np 2 "$build/examples/example_mpi_autotune" "${share[@]}" \
      >"$out/mpi_autotune.log" 2>&1
    note "mpi autotune, 2 ranks on $gpus GPU(s): rc=$? $(grep -m1 -i 'fastest' "$out/mpi_autotune.log") $(grep -m1 -i 'all ranks' "$out/mpi_autotune.log")"
    if [ -x "$build/examples/example_mpi_compile_fleet" ]; then
      timeout 300 mpirun "${mpi_flags[@]}" -np 2 "$build/examples/example_mpi_compile_fleet" \
        >"$out/mpi_compile_fleet.log" 2>&1
      note "mpi compile fleet, 2 ranks: rc=$? $(grep -m1 'compiled once' "$out/mpi_compile_fleet.log") $(grep -m1 'all ranks' "$out/mpi_compile_fleet.log")"
    fi
  fi
fi

if [ "$what" = sanitize ]; then
  here="$(cd "$(dirname "$0")" && pwd)"
  expected_list="$here/../tests/sanitize_expected_errors.txt"
  excluded_list="$here/../tests/sanitize_excluded_tests.txt"
  sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
  note "sanitize: $("$sanitizer" --version 2>/dev/null | tail -1)"
  # Sums the per-process logs of one run: "leaks bytes errors api_errors".
  count_logs() {
    cat "$1"/*.log 2>/dev/null | awk '
      /LEAK SUMMARY: [0-9]+ bytes leaked in [0-9]+ allocations/ {
        for (i = 1; i <= NF; i++) { if ($i == "SUMMARY:") bytes += $(i+1); if ($i == "in") leaks += $(i+1) } }
      /ERROR SUMMARY: [0-9]+ error/ { for (i = 1; i <= NF; i++) if ($i == "SUMMARY:") total += $(i+1) }
      /Program hit / { api += 1 }
      END { errors = total - leaks; if (errors < 0) errors = 0; printf "%d %d %d %d\n", leaks, bytes, errors, api }'
  }
  # One program's two passes; its lines go to sanitize/NAME.notes and its counts (unexpected
  # leaks, unexpected errors, errors provoked on purpose) to sanitize/NAME.counts, so that
  # programs can run at once and be reported in order afterwards.
  sanitize_program() {
    local t="$1" name on_purpose not_here pass filter logs rc leaks bytes errors api failed
    local notes counts_leaks=0 counts_errors=0 counts_provoked=0
    name=$(basename "$t"); notes="$out/sanitize/$name.notes"
    on_purpose=$(awk -v p="$name" '$1 == p { printf "%s%s", sep, $2; sep = ":" }' "$expected_list")
    not_here=$(awk -v p="$name" '$1 == p { printf ":%s", $2 }' "$excluded_list")
    for pass in clean provoked; do
      if [ "$pass" = clean ]; then filter="-${on_purpose}${not_here}"; else filter="$on_purpose"; fi
      [ "$pass" = provoked ] && [ -z "$on_purpose" ] && continue
      # A program whose every test is listed has no clean pass (a run of 0 tests is no check).
      if ! "$t" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -q '^  '; then
        printf '%-30s %-8s (every test is listed)\n' "$name" "$pass" >>"$notes"; continue
      fi
      logs="$out/sanitize/$name.$pass"; mkdir -p "$logs"
      timeout 1200 "$sanitizer" --tool memcheck --leak-check full --target-processes all \
        --error-exitcode 86 --log-file "$logs/%p.log" \
        "$t" --gtest_color=no --gtest_filter="$filter" >"$out/$name.$pass.sanitized.log" 2>&1
      rc=$?
      read -r leaks bytes errors api <<<"$(count_logs "$logs")"
      failed=$(grep -c '^\[  FAILED  \] [A-Za-z]' "$out/$name.$pass.sanitized.log")
      printf '%-30s %-8s rc=%-3s leaks=%-4s (%s bytes) errors=%-4s (api %s) failed tests=%s\n' \
        "$name" "$pass" "$rc" "$leaks" "$bytes" "$errors" "$api" "$failed" >>"$notes"
      if [ "$pass" = clean ]; then
        counts_leaks=$leaks; counts_errors=$errors
        # Where they come from: the first reports.
        grep -h -m3 -E 'Leaked [0-9]+ bytes|Program hit|Invalid ' "$logs"/*.log 2>/dev/null | sed 's/^/    /' >>"$notes"
      else
        counts_provoked=$errors
      fi
    done
    echo "$counts_leaks $counts_errors $counts_provoked" >"$out/sanitize/$name.counts"
  }
  mkdir -p "$out/sanitize"
  # PARALLEL programs at once (default 1): each is a process of its own on the one GPU.
  parallel="${PARALLEL:-1}"
  for t in "$build"/tests/gpu_*; do
    [ -x "$t" ] || continue
    # SANITIZE_ONLY: a shell pattern of program names, to split the pass over several runs.
    case "$(basename "$t")" in ${SANITIZE_ONLY:-*}) ;; *) continue ;; esac
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
    sanitize_program "$t" &
  done
  wait
  unexpected=0; total_leaks=0; total_errors=0; provoked=0
  for counts in "$out"/sanitize/*.counts; do
    [ -e "$counts" ] || continue
    read -r leaks errors on_purpose <"$counts"
    note "$(cat "${counts%.counts}.notes")"
    total_leaks=$((total_leaks + leaks)); total_errors=$((total_errors + errors))
    provoked=$((provoked + on_purpose))
    [ $((leaks + errors)) -gt 0 ] && unexpected=1
  done
  note "sanitize total: leaks=$total_leaks errors=$total_errors (unexpected), $provoked error(s) provoked on purpose"
  tar -C "$out" -czf "$final/logs.tar.gz" .
  note "== done"
  exit "$unexpected"
fi

if [ "$what" = torture ]; then
  torture="$build/tests/helper_teardown_torture"
  adopted="$build/tests/helper_adopted_stream_teardown"
  seeds="${SEEDS:-10000}"; first="${FIRST_SEED:-1}"; parallel="${PARALLEL:-$(nproc)}"
  limit="${TORTURE_TIMEOUT:-60}"
  export CUDACORE_TORTURE_CACHE="$out/kernel-cache"
  mkdir -p "$out/torture"
  "$torture" "$first" --quiet >/dev/null 2>&1  # fills the kernel cache once
  # One line per seed: "seed rc". rc 124: hang (killed by timeout); above 128: a signal.
  seq "$first" $((first + seeds - 1)) | xargs -P "$parallel" -I{} bash -c '
    timeout '"$limit"' "$1" {} >"$2/torture/{}.log" 2>&1; rc=$?
    echo "{} $rc"; [ $rc = 0 ] && rm -f "$2/torture/{}.log"' _ "$torture" "$out" >"$out/torture.rc"
  awk '{ n++; if ($2 == 0) ok++; else if ($2 == 124) hang++; else if ($2 > 128) crash++; else failed++ }
       END { printf "torture: %d seeds, %d passed, %d failed, %d crashed, %d hung\n", n, ok, failed, crash, hang }' \
    "$out/torture.rc" | tee -a "$summary"
  awk '$2 != 0 { printf "    seed %s rc=%s\n", $1, $2 }' "$out/torture.rc" | head -40 | tee -a "$summary" >/dev/null
  bad=$(awk '$2 != 0' "$out/torture.rc" | wc -l)
  # Hung seeds: each rerun HANG_RERUNS times (default 8, in parallel) with a watchdog that, when
  # the run outlasts the limit, writes every thread's stack (gdb, else cuda-gdb) to its log.
  debugger=$(command -v gdb || command -v cuda-gdb || true)
  for seed in $(awk '$2 == 124 { print $1 }' "$out/torture.rc" | head -3); do
    [ -n "$debugger" ] || { note "    no gdb here: no stacks for hung seed $seed"; break; }
    seq "${HANG_RERUNS:-8}" | xargs -P "$parallel" -I{} bash -c '
      log="$4/torture/hang-$3-{}.log"
      "$1" "$3" >"$log" 2>&1 & pid=$!
      for _ in $(seq "$5"); do kill -0 $pid 2>/dev/null || exit 0; sleep 1; done
      echo "=== still running after $5 s: stacks" >>"$log"
      "$2" -p $pid -batch -ex "thread apply all bt" >>"$log" 2>&1
      kill -9 $pid' _ "$torture" "$debugger" "$seed" "$out" "$limit"
    note "    hung seed $seed rerun ${HANG_RERUNS:-8} times: $(grep -l 'still running after' "$out"/torture/hang-"$seed"-*.log 2>/dev/null | wc -l) hung again (stacks in torture/hang-$seed-*.log)"
  done
  sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
  sanitize_seeds="${SANITIZE_SEEDS:-100}"
  mkdir -p "$out/torture-sanitize"
  seq "$first" $((first + sanitize_seeds - 1)) | xargs -P "$(( parallel > 8 ? 8 : parallel ))" -I{} bash -c '
    timeout 600 "$1" --tool memcheck --leak-check full --error-exitcode 86 --log-file "$2/torture-sanitize/{}.log" \
      "$3" {} --quiet >/dev/null 2>&1; echo "{} $?"' _ "$sanitizer" "$out" "$torture" >"$out/torture-sanitize.rc"
  read -r leaks errors <<<"$(cat "$out"/torture-sanitize/*.log 2>/dev/null | awk '
    /LEAK SUMMARY: [0-9]+ bytes leaked in [0-9]+ allocations/ { for (i = 1; i <= NF; i++) if ($i == "in") leaks += $(i+1) }
    /ERROR SUMMARY: [0-9]+ error/ { for (i = 1; i <= NF; i++) if ($i == "SUMMARY:") total += $(i+1) }
    END { printf "%d %d\n", leaks, total - leaks }')"
  note "torture under compute-sanitizer: $sanitize_seeds seeds, rc!=0: $(awk '$2 != 0' "$out/torture-sanitize.rc" | wc -l), leaks=$leaks errors=$errors"
  grep -h -m3 -E 'Leaked [0-9]+ bytes|Program hit|Invalid ' "$out"/torture-sanitize/*.log 2>/dev/null | head -6 | sed 's/^/    /' | tee -a "$summary" >/dev/null
  runs="${RUNS:-500}"
  for sink in pipe file timeout; do  # timeout: under timeout, output discarded
    seq "$runs" | xargs -P "$parallel" -I{} bash -c '
      case "$2" in
        pipe) "$1" 2>&1 | cat >/dev/null; rc=${PIPESTATUS[0]} ;;
        file) "$1" >"$3/adopted.{}.txt" 2>&1; rc=$?; rm -f "$3/adopted.{}.txt" ;;
        timeout) timeout 60 "$1" >/dev/null 2>&1; rc=$? ;;
      esac; echo "$rc"' _ "$adopted" "$sink" "$out" >"$out/adopted.$sink.rc"
    note "adopted-stream teardown, $runs runs, output to a $sink: $(sort "$out/adopted.$sink.rc" | uniq -c | awk '{ printf "%s%s x rc=%s", sep, $1, $2; sep = ", " }')"
    bad=$((bad + $(grep -vc '^0$' "$out/adopted.$sink.rc")))
  done
  rm -rf "$out/kernel-cache"
  tar -C "$out" -czf "$final/logs.tar.gz" .
  note "== done"
  [ "$bad" = 0 ] && [ "$leaks" = 0 ] && [ "$errors" = 0 ]
  exit $?
fi

if [ "$what" = multi ]; then
  here="$(cd "$(dirname "$0")" && pwd)"
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  note "GPUs: $gpus"
  sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
  for name in gpu_multi_device_test gpu_ipc_test gpu_virtual_memory_test; do
    t="$build/tests/$name"
    [ -x "$t" ] || continue
    timeout 300 "$t" --gtest_color=no >"$out/$name.log" 2>&1
    note "$(printf '%-30s rc=%-3s passed=%-3s failed=%-3s skipped=%s' "$name" "$?" \
      "$(grep -c '^\[       OK \]' "$out/$name.log")" "$(grep -c '^\[  FAILED  \] [A-Za-z]' "$out/$name.log")" \
      "$(grep -c '^\[  SKIPPED \] [A-Za-z]' "$out/$name.log")")"
    grep -E '^\[  FAILED  \] [A-Za-z]|^\[  SKIPPED \] [A-Za-z]' "$out/$name.log" | sort -u | sed 's/^/    /' | tee -a "$summary" >/dev/null
    logs="$out/sanitize/$name"; mkdir -p "$logs"
    timeout 600 "$sanitizer" --tool memcheck --leak-check full --target-processes all \
      --log-file "$logs/%p.log" "$t" --gtest_color=no >"$out/$name.sanitized.log" 2>&1
    note "$(printf '  under compute-sanitizer: rc=%s, %s' "$?" \
      "$(cat "$logs"/*.log | grep -E 'LEAK SUMMARY|ERROR SUMMARY' | sort | uniq -c | tr -s ' ' | tr '\n' ';')")"
    grep -h -m3 -E 'Leaked [0-9]+ bytes|Program hit|Invalid ' "$logs"/*.log 2>/dev/null | sed 's/^/    /' | tee -a "$summary" >/dev/null
  done
  if command -v mpirun >/dev/null && [ -x "$build/examples/example_mpi_autotune" ]; then
    mpi_flags=(--oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none -x LD_LIBRARY_PATH)
    [ "$(id -u)" = 0 ] && mpi_flags+=(--allow-run-as-root)
    share=(); [ "$gpus" -lt 2 ] && share=(--share-devices)
    timeout 300 mpirun "${mpi_flags[@]}" -np 2 "$build/examples/example_mpi_autotune" "${share[@]}" \
      >"$out/mpi_autotune.log" 2>&1
    note "mpi autotune, 2 ranks on $gpus GPU(s): rc=$? $(grep -m1 -i 'fastest' "$out/mpi_autotune.log") $(grep -m1 -i 'all ranks' "$out/mpi_autotune.log")"
    grep -i "rank .* device\|device .* rank" "$out/mpi_autotune.log" | head -4 | sed 's/^/    /' | tee -a "$summary" >/dev/null
  fi
  if [ -x "$build/bench/multigpu_bench" ]; then
    timeout 240 "$build/bench/multigpu_bench" --benchmark_min_time=0.2 >"$out/multigpu_bench.txt" 2>&1
    note "multigpu_bench: rc=$?"
    sed -n '/^operation /,$p' "$out/multigpu_bench.txt" | tee -a "$summary" >/dev/null
  fi
  if command -v mpirun >/dev/null && [ -x "$build/bench/mpi_compile_timing" ]; then
    timeout 420 bash "$here/../bench/mpi_compile.sh" "$build" >"$out/mpi_compile.txt" 2>&1
    note "mpi_compile.sh: rc=$?"
    tee -a "$summary" <"$out/mpi_compile.txt" >/dev/null
  fi
  tar -C "$out" -czf "$final/logs.tar.gz" .
  note "== done"
  exit 0
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  for b in "$build"/bench/${BENCHES:-*_bench}; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    # Google Benchmark programs take its flags; the others (bundle_bench, the cache-scale and
    # Redis programs) have their own arguments and run with their defaults.
    flags=()
    if grep -qa benchmark_min_time "$b"; then
      flags=(--benchmark_min_time=0.2 --benchmark_enable_random_interleaving=true)
    fi
    timeout 240 "$b" "${flags[@]}" >"$out/$name.txt" 2>&1
    note "$name: rc=$?"
    sed -n '/^operation /,$p' "$out/$name.txt" | tee -a "$summary" >/dev/null
  done
  # The side-by-side table (raw and cudacore from bench/side_by_side, then cuda.core and CuPy
  # where this Python has them); its Markdown, JSON and chart go to OUT_DIR/side-by-side, from
  # which bench/make_results.py writes bench/RESULTS.md.
  if [ -x "$build/bench/side_by_side" ] && [ "${SIDE_BY_SIDE:-1}" != 0 ]; then
    timeout 600 python3 "$(dirname "$0")/../bench/side_by_side.py" --build-dir "$build" \
      --out "$final/side-by-side" >"$out/side_by_side.txt" 2>&1
    note "side_by_side.py: rc=$?"
    sed -n '/^operation /,/^(median per operation/p' "$out/side_by_side.txt" | tee -a "$summary" >/dev/null
  fi
fi
tar -C "$out" -czf "$final/logs.tar.gz" .
note "== done"
