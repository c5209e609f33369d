// Runs the registered benchmarks and prints, for each operation timed both as "raw/OP" and
// "cudacore/OP", the ratio cudacore / raw (for alternating rounds "raw/OP@k", the medians). Use CUDACORE_BENCH_MAIN() instead of BENCHMARK_MAIN().
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/stream.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudacore::bench {

int run_with_ratios(int argc, char** argv);

// The median of `samples` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> samples);

// Which clock a benchmark's figure is read from: CPU time, wall time, or the batches the
// benchmark times itself (state.SetIterationTime).
enum class Clock { cpu, real, manual };

// Registers "raw/OP@k" and "cudacore/OP@k" for k = 1..rounds in alternating order (raw@1,
// cudacore@1, raw@2, ...), so that drifts over a run (GPU clocks, driver pools growing, the
// first calls' warm-up, a busy neighbour on a shared host) fall on both sides alike; the ratio
// table takes each side's median over its rounds. Many short rounds (0.1 s each) follow a drift
// more closely than a few long ones. Call at namespace scope:
// `const int registered = alternate(...);`.
int alternate(const std::string& op, std::function<void(benchmark::State&)> raw,
              std::function<void(benchmark::State&)> ours, Clock clock, int rounds = 15);
inline int alternate(const std::string& op, std::function<void(benchmark::State&)> raw,
                     std::function<void(benchmark::State&)> ours, bool real_time, int rounds = 15) {
    return alternate(op, std::move(raw), std::move(ours), real_time ? Clock::real : Clock::cpu, rounds);
}

// Launches per timed burst in the launch benchmarks: below the driver's launch queue depth, so
// a burst measures enqueueing, not waiting for room in the queue.
inline constexpr int launch_burst = 256;

// Times `burst()` (launch_burst launches on `stream`) per iteration with the host clock (use with
// UseManualTime), draining the stream outside the timing; reports ns_per_launch.
template <class Burst>
void time_launch_bursts(benchmark::State& state, const Stream& stream, Burst&& burst) {
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        burst();
        const auto end = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(end - start).count());
        stream.sync();
    }
    state.SetItemsProcessed(state.iterations() * launch_burst);
    state.counters["ns_per_launch"] = benchmark::Counter(
        state.iterations() * launch_burst, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The reason GPU benchmarks cannot run here (no driver, no device, or the driver's error), or
// empty when a GPU is present. Asked once per process; thread-safe.
const char* gpu_missing_reason();

// Marks the benchmark skipped (with the reason) and returns true when there is no GPU.
bool skip_without_gpu(benchmark::State& state);

// What a GPU benchmark's fixture starts from: device 0, made current, and a stream on it; both
// empty when gpu_missing_reason() is set (the derived fixture then makes nothing either).
struct GpuFixture {
    std::optional<Device> device;
    std::optional<Stream> stream;

    GpuFixture();
    // `source` (CUDA C++) compiled to a cubin for the device, named `name`.
    ObjectCode compile(const char* source, const char* name) const;
};

}  // namespace cudacore::bench

#define CUDACORE_BENCH_MAIN() \
    int main(int argc, char** argv) { return ::cudacore::bench::run_with_ratios(argc, argv); }
