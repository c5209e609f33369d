// Runs the registered benchmarks and prints, for each operation timed both as "raw/OP" and
// "cudacore/OP", the ratio cudacore / raw. Use CUDACORE_BENCH_MAIN() instead of BENCHMARK_MAIN().
#pragma once

#include <benchmark/benchmark.h>

namespace cudacore::bench {

int run_with_ratios(int argc, char** argv);

// The reason GPU benchmarks cannot run here, or empty when a GPU is present.
const char* gpu_missing_reason();

// Marks the benchmark skipped (with the reason) and returns true when there is no GPU.
bool skip_without_gpu(benchmark::State& state);

}  // namespace cudacore::bench

#define CUDACORE_BENCH_MAIN() \
    int main(int argc, char** argv) { return ::cudacore::bench::run_with_ratios(argc, argv); }
