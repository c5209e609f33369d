#!/usr/bin/env bash
# Builds the library and its concurrency-heavy CPU tests with ThreadSanitizer in
# ${TSAN_BUILD_DIR:-build-tsan} and runs them: the buffer-box arena and its per-thread free lists
# and copies dropped on several threads (memory), CachingMemoryResource's arenas, the kernel name
# table, the launch-stream slots and the capture registry, the per-thread
# block pool, the memory, disk, Redis and tiered program caches under many threads (the Redis
# tests start their own redis-server), one Program's cache-key memo hit from many threads,
# compile_many, the release thread fed from many threads (deferred releases), the event
# recycler, and an ObjectCode's lazy load entered by many threads at once. Any report fails the run. (The waits on streams and the driver's host-function
# thread need a GPU: the GPU suite covers them.)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${TSAN_BUILD_DIR:-build-tsan}"
flags="-fsanitize=thread -fno-omit-frame-pointer"
tests=(cpu_memory_test cpu_buffer_threads_test cpu_caching_memory_resource_test
       cpu_name_table_test cpu_launch_streams_test cpu_thread_block_pool_test
       cpu_program_cache_test cpu_program_key_memo_test cpu_disk_cache_test cpu_remote_cache_test
       cpu_compile_many_test
       cpu_deferred_release_test
       cpu_event_recycler_test cpu_thread_exit_test cpu_object_code_loading_test)
# The programs they start (helper_path in the tests, and the library's workers): only these are
# built (CUDACORE_TESTS_NEED_ALL_HELPERS=OFF), not the 37 helper programs of the whole suite.
helpers=(helper_memory_no_driver_probe helper_cache_writer helper_remote_cache_worker
         helper_object_code_loading_probe cudacore_compile_worker cudacore_link_worker
         cudacore_load_probe)
# A unity build at -O0 as in scripts/sanitize.sh (the library in 101 processor seconds against
# 151 at -O1; the programs run as long), without the CLI (no test here runs it), with line tables
# only (-g1: enough for the reports' file:line).
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O0 -g1" \
  -DCMAKE_UNITY_BUILD=ON -DCUDACORE_TEST_OPTIMIZE=-O0 -DCUDACORE_BUILD_TOOLS=OFF \
  -DCUDACORE_BUILD_BENCHMARKS=OFF -DCUDACORE_TESTS_NEED_ALL_HELPERS=OFF -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target "${tests[@]}" "${helpers[@]}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
# The programs run side by side, as many at once as there are cores (most of their tests are
# single-threaded or wait on child processes and servers), each with its own log.
run() {  # run TEST: the program under TSan, its output in TEST.tsan.log, its status in TEST.tsan.status
  local status=0
  "$build_dir/tests/$1" --gtest_brief=1 >"$build_dir/$1.tsan.log" 2>&1 || status=$?
  echo "$status" >"$build_dir/$1.tsan.status"
}
running=0
for t in "${tests[@]}"; do
  if [ "$running" -ge "$(nproc)" ]; then wait -n || true; running=$((running - 1)); fi
  run "$t" &
  running=$((running + 1))
done
wait
failed=0
total=0
for t in "${tests[@]}"; do
  if [ "$(cat "$build_dir/$t.tsan.status")" = 0 ]; then
    passed=$(grep -o 'PASSED  \] [0-9]* test' "$build_dir/$t.tsan.log" | grep -o '[0-9]*')
    total=$((total + passed))
    echo "tsan: $t: $passed tests passed, 0 reports"
  else
    failed=1
    echo "tsan: $t FAILED:"; tail -40 "$build_dir/$t.tsan.log"
  fi
done
[ "$failed" = 0 ] &&
  echo "tsan: ThreadSanitizer pass clean: $total tests in ${#tests[@]} programs, 0 reports"
exit "$failed"
