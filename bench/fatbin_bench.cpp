// Four targets in one call against four compiles one after another: compile_fatbin(program,
// {sm_80, sm_90, sm_100, compute_90}) (the targets compiled in parallel, as compile_many does,
// then built into one fatbin) beside four Program::compile calls in a row and the same
// FatbinBuilder::build. Alternating rounds in one process; medians and their ratio. No GPU
// needed (NVRTC and nvFatbin run on the CPU); the ratio is bounded by the machine's free cores.
//
//   build/bench/fatbin_bench [--rounds 5] [--workers N] [--threads | --processes] [--small | --heavy]
//
// Two kernels, one row each: a small arithmetic one, and one that includes <cuda/std/cmath> and
// <cuda/std/complex> (most of its time in the front end). Automatic PCH is off on both sides, so
// every round compiles from scratch. Each kernel is measured with the targets compiled in
// threads (CompileStrategy::threads, the default) and in child processes (CompileStrategy::
// processes): NVRTC's threads share its locks, processes do not. --threads or --processes
// measures one; --small or --heavy one kernel. Google Benchmark's --benchmark_* flags are ignored (scripts/gpu-check.sh passes
// them to every bench).
#include "cudacore/fatbin.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

constexpr const char* kSmall = R"(
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

constexpr const char* kHeavy = R"(
#include <cuda/std/cmath>
#include <cuda/std/complex>
template <typename T>
__global__ void rotate(cuda::std::complex<T>* z, T angle, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] *= cuda::std::polar(T(1), angle) * cuda::std::exp(z[i] / T(n));
}
)";

const std::vector<std::string> kTargets{"sm_80", "sm_90", "sm_100", "compute_90"};

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// The four compiles in a row, then the same fatbin build.
std::size_t one_after_another(const Program& program, const std::vector<std::string>& names) {
    FatbinBuilder builder;
    for (const std::string& target : kTargets) {
        const FatbinTarget parsed = parse_fatbin_target(target);
        ProgramOptions options = program.options();
        options.arch = parsed.arch;
        builder.add(Program(program.source(), program.source_type(), options).compile(parsed.type, names), target);
    }
    return builder.build(program.options().name).size();
}

struct Row {
    std::string kernel;
    const char* strategy = "";
    std::size_t bytes = 0;
    double one_call = 0, in_a_row = 0;
};

Row measure(const char* kernel, const char* source, const char* name, int rounds, const CompileOptions& parallel) {
    ProgramOptions options;
    options.name = name;
    options.pch = false;
    const Program program(source, SourceType::cxx, options);
    const std::vector<std::string> names{std::string(name, std::strchr(name, '.')) + "<float>"};
    // One warm-up of each: NVRTC, nvFatbin and the toolkit's headers loaded and in the page cache.
    Row row{kernel, parallel.strategy == CompileStrategy::processes ? "processes" : "threads",
            compile_fatbin(program, kTargets, names, parallel).size()};
    if (one_after_another(program, names) != row.bytes) std::fprintf(stderr, "note: the two fatbins differ in size\n");
    std::vector<double> one_call, in_a_row;
    for (int round = 0; round < rounds; ++round) {
        auto start = Clock::now();
        compile_fatbin(program, kTargets, names, parallel);
        one_call.push_back(seconds_since(start));
        start = Clock::now();
        one_after_another(program, names);
        in_a_row.push_back(seconds_since(start));
    }
    row.one_call = median(one_call);
    row.in_a_row = median(in_a_row);
    return row;
}

}  // namespace

int main(int argc, char** argv) try {
    int rounds = 5;
    unsigned workers = 0;
    std::vector<CompileStrategy> strategies{CompileStrategy::threads, CompileStrategy::processes};
    bool small = true, heavy = true;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc) workers = unsigned(std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--threads") == 0) strategies = {CompileStrategy::threads};
        else if (std::strcmp(argv[i], "--processes") == 0) strategies = {CompileStrategy::processes};
        else if (std::strcmp(argv[i], "--small") == 0) heavy = false;
        else if (std::strcmp(argv[i], "--heavy") == 0) small = false;
        else if (std::strncmp(argv[i], "--benchmark_", 12) == 0) continue;
        else {
            std::fprintf(stderr, "usage: fatbin_bench [--rounds N] [--workers N] [--threads | --processes] "
                                 "[--small | --heavy]\n");
            return 2;
        }
    }
    std::vector<Row> rows;
    for (const auto& [kernel, source, name] : {std::tuple{"small (axpy)", kSmall, "axpy.cu"},
                                               std::tuple{"<cuda/std> complex", kHeavy, "rotate.cu"}}) {
        if (!(source == kSmall ? small : heavy)) continue;
        for (const CompileStrategy strategy : strategies) {
            CompileOptions parallel;
            parallel.workers = workers;
            parallel.strategy = strategy;
            rows.push_back(measure(kernel, source, name, rounds, parallel));
        }
    }
    std::printf("operation: a fatbin of sm_80, sm_90, sm_100 and compute_90; median of %d rounds; %u "
                "hardware threads; workers %s\n\n",
                rounds, std::thread::hardware_concurrency(), workers ? std::to_string(workers).c_str() : "all");
    std::printf("| kernel | fatbin bytes | compile_fatbin, one call | targets compiled in | four compiles "
                "one after another | ratio |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const Row& row : rows) {
        std::printf("| %s | %zu | %.1f ms | %s | %.1f ms | %.2fx |\n", row.kernel.c_str(), row.bytes,
                    row.one_call * 1e3, row.strategy, row.in_a_row * 1e3, row.in_a_row / row.one_call);
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
