#!/bin/sh
# Runs one signal test many times beside busy processes, the load under which a signal meets a
# temporary folder in the moment between its making and its registration (see
# src/support/removed_on_signal.hpp), and counts the runs that pass.
#
#   scripts/signal_stress.sh [RUNS [BUSY [FILTER]]]
#
# RUNS (200) runs of tests/cpu_cli_exits_test with the gtest filter FILTER
# (CliExits.ACompileSignalledInNvrtcLeavesNothingInTmpdir) beside BUSY (16) processes that spin.
# The build folder is $BUILD (build). Each failing run's output is kept in
# $BUILD/signal_stress/failed-N.log; the summary line is the last one printed. Exit status: 0 when
# every run passed.
set -u
runs=${1:-200}
busy=${2:-16}
filter=${3:-CliExits.ACompileSignalledInNvrtcLeavesNothingInTmpdir}
build=${BUILD:-build}
test_program="$build/tests/cpu_cli_exits_test"
[ -x "$test_program" ] || { echo "no $test_program: build cpu_cli_exits_test first" >&2; exit 2; }
logs="$build/signal_stress"
mkdir -p "$logs"

spinners=""
stop_spinners() {
    for pid in $spinners; do kill "$pid" 2>/dev/null; done
}
trap stop_spinners EXIT
trap 'exit 130' INT TERM
i=0
while [ "$i" -lt "$busy" ]; do
    sh -c 'while :; do :; done' &
    spinners="$spinners $!"
    i=$((i + 1))
done

passed=0
failed=0
start=$(date +%s)
run=1
while [ "$run" -le "$runs" ]; do
    if timeout 600 "$test_program" --gtest_filter="$filter" >"$logs/run.log" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        cp "$logs/run.log" "$logs/failed-$run.log"
        echo "run $run failed: $logs/failed-$run.log"
    fi
    run=$((run + 1))
done
echo "$filter: $passed of $runs passed, $failed failed, beside $busy busy processes, in $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ]
