// Program::compile against the raw NVRTC calls for the same source and the same flags, the
// speed-up of compiling 16 programs on all cores against one core, and how soon a cancelled
// compile returns in this process (at NVRTC's flow callback) against in child processes
// (killed). No GPU needed.
//
//   build/bench/compile_bench                       (all)
//   build/bench/compile_bench --benchmark_filter=cubin
#include "bench_support.hpp"

#include "cudacore/cancellation.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/program.hpp"
#include "loader/compiler_apis.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
template <typename T>
__global__ void saxpy(T a, const T* x, T* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
extern "C" __global__ void reduce(const float* in, float* out, int n) {
    __shared__ float partial[256];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
)";

const char* const kNameExpression = "saxpy<float>";

ProgramOptions bench_options(const std::string& name = "bench_program") {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    return options;
}

// The raw NVRTC sequence Program::compile runs: create, add the name expression, compile with
// the same flags, fetch the log, the code and the lowered name, destroy.
std::string raw_compile(const std::vector<std::string>& flags, CodeType target) {
    const auto& api = detail::nvrtc();
    nvrtcProgram program = nullptr;
    if (api.nvrtcCreateProgram(&program, kSource, "bench_program", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        throw std::runtime_error("nvrtcCreateProgram failed");
    api.nvrtcAddNameExpression(program, kNameExpression);
    std::vector<const char*> argv;
    for (const auto& flag : flags) argv.push_back(flag.c_str());
    if (api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data()) != NVRTC_SUCCESS)
        throw std::runtime_error("nvrtcCompileProgram failed");
    size_t log_size = 0;
    api.nvrtcGetProgramLogSize(program, &log_size);
    std::string log(log_size, '\0');
    api.nvrtcGetProgramLog(program, log.data());
    size_t size = 0;
    std::string code;
    if (target == CodeType::cubin) {
        api.nvrtcGetCUBINSize(program, &size);
        code.resize(size);
        api.nvrtcGetCUBIN(program, code.data());
    } else {
        api.nvrtcGetPTXSize(program, &size);
        code.resize(size);
        api.nvrtcGetPTX(program, code.data());
    }
    const char* lowered = nullptr;
    api.nvrtcGetLoweredName(program, kNameExpression, &lowered);
    std::string keep = lowered ? lowered : "";
    api.nvrtcDestroyProgram(&program);
    return code;
}

void raw_compile_to(benchmark::State& state, CodeType target) {
    // Same flags as Program, computed once outside the timed loop as a raw user would.
    const auto flags = Program(kSource, SourceType::cxx, bench_options()).flags(target);
    for (auto _ : state) benchmark::DoNotOptimize(raw_compile(flags, target));
}

void cudacore_compile_to(benchmark::State& state, CodeType target) {
    for (auto _ : state) {
        Program program(kSource, SourceType::cxx, bench_options());
        benchmark::DoNotOptimize(program.compile(target, {kNameExpression}));
    }
}

void BM_raw_cubin(benchmark::State& state) { raw_compile_to(state, CodeType::cubin); }
void BM_cudacore_cubin(benchmark::State& state) { cudacore_compile_to(state, CodeType::cubin); }
void BM_raw_ptx(benchmark::State& state) { raw_compile_to(state, CodeType::ptx); }
void BM_cudacore_ptx(benchmark::State& state) { cudacore_compile_to(state, CodeType::ptx); }

BENCHMARK(BM_raw_cubin)->Name("raw/compile_cubin")->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_cudacore_cubin)->Name("cudacore/compile_cubin")->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_raw_ptx)->Name("raw/compile_ptx")->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_cudacore_ptx)->Name("cudacore/compile_ptx")->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);

// What Program adds around NVRTC, alone: building the Program and its flags (arch check, toolkit
// include dirs). Against a compile of tens of milliseconds this is the whole overhead.
void BM_program_overhead(benchmark::State& state) {
    for (auto _ : state) {
        Program program(kSource, SourceType::cxx, bench_options());
        benchmark::DoNotOptimize(program.flags(CodeType::cubin));
    }
}
BENCHMARK(BM_program_overhead)->Name("overhead/program_and_flags")->Unit(benchmark::kMicrosecond);

// Runs compile(i) for i in [0, count) on `threads` threads; returns the wall time in seconds.
double compile_many(int count, unsigned threads, const std::function<void(int)>& compile) {
    std::atomic<int> next{0};
    std::atomic<int> failures{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            for (int i = next++; i < count; i = next++) {
                try {
                    compile(i);
                } catch (...) {
                    ++failures;
                }
            }
        });
    }
    for (auto& worker : workers) worker.join();
    if (failures) throw std::runtime_error("compiles failed");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void compile_with_program(int i) {
    // Distinct sources, so nothing could be shared between the compiles.
    Program program(std::string(kSource) + "\n// program " + std::to_string(i) + "\n",
                    SourceType::cxx, bench_options("program_" + std::to_string(i)));
    benchmark::DoNotOptimize(program.compile(CodeType::cubin, {kNameExpression}));
}

void compile_raw(int) {
    static const std::vector<std::string> flags = Program(kSource, SourceType::cxx, bench_options())
                                                      .flags(CodeType::cubin);
    benchmark::DoNotOptimize(raw_compile(flags, CodeType::cubin));
}

// One core against all cores, 16 programs each, in the same run; the speed-up is a counter.
// The raw variant shows how far NVRTC itself scales on this machine.
void parallel_speedup(benchmark::State& state, const char* what,
                      const std::function<void(int)>& compile) {
    constexpr int kPrograms = 16;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    double serial = 0, parallel = 0;
    for (auto _ : state) {
        const double one = compile_many(kPrograms, 1, compile);
        const double all = compile_many(kPrograms, cores, compile);
        serial += one;
        parallel += all;
        state.SetIterationTime(all);
    }
    state.counters["cores"] = cores;
    state.counters["serial_s"] = serial / state.iterations();
    state.counters["parallel_s"] = parallel / state.iterations();
    state.counters["speedup"] = serial / parallel;
    std::printf("%s: compile 16 programs: 1 core %.3f s, %u cores %.3f s, speed-up %.2fx\n", what,
                serial / state.iterations(), cores, parallel / state.iterations(), serial / parallel);
}
void BM_parallel_speedup(benchmark::State& state) {
    parallel_speedup(state, "cudacore", compile_with_program);
}
void BM_parallel_speedup_raw(benchmark::State& state) {
    parallel_speedup(state, "raw NVRTC", compile_raw);
}
BENCHMARK(BM_parallel_speedup)->Name("parallel/compile_16_programs")->Unit(benchmark::kMillisecond)
    ->UseManualTime()->Iterations(2);
BENCHMARK(BM_parallel_speedup_raw)->Name("parallel/compile_16_programs_raw")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(2);

// ---- cancel: seconds from cancel() to the call's return, 0.25 s into compiles of 2^13 class
// template instantiations (a few seconds of front end), one program in this process against two
// in child processes (CompileStrategy::processes). Each iteration its own SEED: NVRTC's cache
// serves nothing.

Program long_program(int seed) {
    ProgramOptions options = bench_options("cancelled_" + std::to_string(seed));
    options.pch = false;
    options.no_cache = true;
    options.define_macro = {{"SEED", std::to_string(seed)}};
    return Program("template <int D, int I> struct Tree { static constexpr long long v = Tree<D - 1, 2 * I>::v + "
                   "Tree<D - 1, 2 * I + 1>::v; };\n"
                   "template <int I> struct Tree<0, I> { static constexpr long long v = I; };\n"
                   "__global__ void k(long long* o) { *o = Tree<12, SEED>::v; }\n",
                   SourceType::cxx, options);
}

void cancel_latency(benchmark::State& state, CompileStrategy strategy) {
    static int seed = 1000;
    for (auto _ : state) {
        std::vector<Program> programs;
        for (int i = 0; i < (strategy == CompileStrategy::processes ? 2 : 1); ++i) programs.push_back(long_program(++seed));
        CompileOptions options{.strategy = strategy, .workers = 2};
        std::chrono::steady_clock::time_point cancelled_at{};
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            cancelled_at = std::chrono::steady_clock::now();
            options.cancellation.cancel();
        });
        try {
            if (strategy == CompileStrategy::processes)
                compile_many(programs, CodeType::cubin, {}, options);
            else
                programs.front().compile(CodeType::cubin, {}, options);
        } catch (const CompileCancelled&) {
        }
        const auto returned = std::chrono::steady_clock::now();
        canceller.join();
        state.SetIterationTime(std::max(0.0, std::chrono::duration<double>(returned - cancelled_at).count()));
    }
}

void BM_cancel_in_process(benchmark::State& state) { cancel_latency(state, CompileStrategy::threads); }
void BM_cancel_child_processes(benchmark::State& state) { cancel_latency(state, CompileStrategy::processes); }

BENCHMARK(BM_cancel_in_process)->Name("cancel/return_after_cancel_in_process")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK(BM_cancel_child_processes)->Name("cancel/return_after_cancel_child_processes")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

}  // namespace

CUDACORE_BENCH_MAIN()
