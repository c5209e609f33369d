// The JIT pipeline's fast paths, timed on the CPU (no GPU needed):
//   - a second <cuda/std> kernel with the same headers: NVRTC without PCH ("nopch/") against
//     Program::compile with its default automatic PCH ("cudacore/");
//   - 32 specializations: one Program with 32 name expressions, compile_many of 32 programs
//     (threads, processes) and 32 programs one by one;
//   - compile_many's scaling: 16 distinct programs on 1 worker and on all cores, threads against
//     forked processes (the counters say the speed-up; pick CompileOptions::strategy from it).
//
//   build/bench/jit_bench
//   build/bench/jit_bench --benchmark_filter=compile_many
#include "bench_support.hpp"

#include "cudacore/compile_many.hpp"
#include "cudacore/program.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kFirst = R"(
#include <cuda/std/complex>
#include <cuda/std/array>
template <typename T>
__global__ void rotate(cuda::std::complex<T>* data, T angle, int n) {
    const cuda::std::array<T, 2> signs{T(1), T(-1)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= cuda::std::polar(signs[i % 2], angle);
}
)";

constexpr const char* kSecond = R"(
#include <cuda/std/complex>
#include <cuda/std/array>
template <typename T, int N>
__global__ void magnitude(const cuda::std::complex<T>* data, T* out, int n) {
    const cuda::std::array<T, 2> weights{T(0.5), T(N)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cuda::std::abs(data[i]) * weights[i % 2];
}
)";

constexpr const char* kSmall = R"(
template <typename T>
__global__ void saxpy(T a, const T* x, T* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
)";

ProgramOptions options_for(const std::string& name, bool pch = true) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.pch = pch;
    return options;
}

std::string fresh(const char* source) {
    static int counter = 0;
    return std::string(source) + "\n// variant " + std::to_string(++counter) + "\n";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A second kernel with the same headers, after a first one (made outside the timing).
void second_kernel(benchmark::State& state, bool pch) {
    Program(fresh(kFirst), SourceType::cxx, options_for("first", pch))
        .compile(CodeType::cubin, {"rotate<float>"});
    for (auto _ : state) {
        Program program(fresh(kSecond), SourceType::cxx, options_for("second", pch));
        benchmark::DoNotOptimize(program.compile(CodeType::cubin, {"magnitude<float, 2>"}));
        if (pch && program.pch_status().outcome != PchOutcome::used)
            state.SkipWithError(("PCH not used: " + program.pch_status().reason).c_str());
    }
}
void BM_second_kernel_nopch(benchmark::State& state) { second_kernel(state, false); }
void BM_second_kernel_pch(benchmark::State& state) { second_kernel(state, true); }
BENCHMARK(BM_second_kernel_nopch)->Name("nopch/second_cuda_std_kernel")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_second_kernel_pch)->Name("cudacore/second_cuda_std_kernel")
    ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

std::vector<std::vector<std::string>> specializations(int count) {
    std::vector<std::vector<std::string>> lists;
    for (int i = 0; i < count; ++i)
        lists.push_back({"magnitude<" + std::string(i % 2 ? "double" : "float") + ", " +
                         std::to_string(i / 2 + 1) + ">"});
    return lists;
}

// 32 specializations of the <cuda/std> kernel, each way; state.range(0): 0 one program with 32
// name expressions, 1 compile_many threads, 2 compile_many processes, 3 one by one.
void BM_32_specializations(benchmark::State& state) {
    const auto lists = specializations(32);
    for (auto _ : state) {
        const std::string source = fresh(kSecond);
        const auto start = std::chrono::steady_clock::now();
        switch (state.range(0)) {
            case 0: {
                std::vector<std::string> all;
                for (const auto& list : lists) all.push_back(list[0]);
                Program(source, SourceType::cxx, options_for("one_program"))
                    .compile(CodeType::cubin, all);
                break;
            }
            case 1:
            case 2: {
                CompileOptions many;
                many.strategy =
                    state.range(0) == 1 ? CompileStrategy::threads : CompileStrategy::processes;
                compile_many(source, options_for("many"), CodeType::cubin, lists, many);
                break;
            }
            default:
                for (const auto& list : lists)
                    Program(source, SourceType::cxx, options_for("one_by_one"))
                        .compile(CodeType::cubin, list);
        }
        state.SetIterationTime(seconds_since(start));
    }
}
BENCHMARK(BM_32_specializations)->Name("specializations_32/one_program")->Arg(0)
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);
BENCHMARK(BM_32_specializations)->Name("specializations_32/compile_many_threads")->Arg(1)
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);
BENCHMARK(BM_32_specializations)->Name("specializations_32/compile_many_processes")->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);
BENCHMARK(BM_32_specializations)->Name("specializations_32/one_by_one")->Arg(3)
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

// compile_many of 16 distinct small programs: 1 worker against all cores, per strategy.
void compile_many_scaling(benchmark::State& state, CompileStrategy strategy) {
    constexpr int kPrograms = 16;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    double serial = 0, parallel = 0;
    auto run = [&](unsigned workers) {
        std::vector<Program> programs;
        for (int i = 0; i < kPrograms; ++i)
            programs.emplace_back(fresh(kSmall), SourceType::cxx,
                                  options_for("program_" + std::to_string(i)));
        CompileOptions many;
        many.strategy = strategy;
        many.workers = workers;
        const auto start = std::chrono::steady_clock::now();
        compile_many(programs, CodeType::cubin, std::vector<std::vector<std::string>>(
                                                    kPrograms, {"saxpy<float>"}), many);
        return seconds_since(start);
    };
    for (auto _ : state) {
        serial += run(1);
        const double all = run(cores);
        parallel += all;
        state.SetIterationTime(all);
    }
    const char* name = strategy == CompileStrategy::threads ? "threads" : "processes";
    state.counters["cores"] = cores;
    state.counters["speedup"] = serial / parallel;
    std::printf("compile_many (%s): 16 programs: 1 worker %.3f s, %u workers %.3f s, speed-up "
                "%.2fx\n", name, serial / state.iterations(), cores,
                parallel / state.iterations(), serial / parallel);
}
void BM_compile_many_threads(benchmark::State& state) {
    compile_many_scaling(state, CompileStrategy::threads);
}
void BM_compile_many_processes(benchmark::State& state) {
    compile_many_scaling(state, CompileStrategy::processes);
}
BENCHMARK(BM_compile_many_threads)->Name("compile_many/16_programs_threads")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(2);
BENCHMARK(BM_compile_many_processes)->Name("compile_many/16_programs_processes")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(2);

}  // namespace

CUDACORE_BENCH_MAIN()
