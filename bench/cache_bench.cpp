// Program cache and serialization costs, side by side in one run.
//
//   raw/<kernel>_memory_hit, raw/<kernel>_disk_hit   a fresh Program::compile (NVRTC)
//   cudacore/<kernel>_memory_hit                     compile_cached() hitting a MemoryProgramCache
//   cudacore/<kernel>_disk_hit                       compile_cached() hitting a DiskProgramCache
//     (the same Program each time: its keys are remembered with it, so a hit of a program that
//     reads no file outside the toolkit is one lookup; one with a project header reads that
//     header's bytes again; program.hpp, "Cache keys")
//   cudacore/<kernel>_memory_hit_new_program         the memory hit for a new, equal Program each
//     time: its key computed afresh (canonical flags, SHA-256), the toolkit's headers skipped
//   raw/<kernel>_miss, cudacore/<kernel>_miss        a compile, and compile_cached() into a new cache
//     (the snapshot of the files, the compile from memory beside the check compile in the
//     compile worker, store): the difference is what keeping the code exact costs
//   raw/serialize_roundtrip_10MB                     memcpy of a 10 MB cubin-like payload
//   cudacore/serialize_roundtrip_10MB                ObjectCode::serialize + deserialize of it
//
// The ratio printed at the end is cudacore / raw: for the hits, 0.001 means the hit is 1000
// times faster than compiling (the goal for a disk hit on the small kernel). Kernels: "small" (a
// few lines), "cuda_std" (includes <cuda/std/...> headers) and "project" (includes a header of its
// project folder, read at every lookup). Runs without a GPU (arch sm_90).
#include "bench_support.hpp"

#include "cache_bench_kernels.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace {

using namespace cudacore;

using bench::cuda_std_source;
using bench::make_program;
using bench::project_source;
using bench::small_source;

std::vector<std::string> names_for(const char* source) {
    return source == cuda_std_source ? std::vector<std::string>{"fill<float>"}
                                     : std::vector<std::string>{source == project_source ? "apply" : "scale"};
}

// A private cache directory for this run, removed at exit.
const std::filesystem::path& bench_cache_dir() {
    static struct Dir {
        std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("cudacore-cache-bench-" + std::to_string(::getpid()));
        ~Dir() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    } dir;
    return dir.path;
}

void fresh_compile(benchmark::State& state, const char* source) {
    Program program = make_program(source);
    const auto names = names_for(source);
    for (auto _ : state) benchmark::DoNotOptimize(program.compile(CodeType::cubin, names));
}

// The median of a few fresh compiles of `source`, measured once per run.
double fresh_compile_seconds(const char* source) {
    static std::map<const char*, double> measured;
    auto [it, inserted] = measured.emplace(source, 0.0);
    if (inserted) {
        Program program = make_program(source);
        std::vector<double> times;
        for (int i = 0; i < 3; ++i) {
            const auto start = std::chrono::steady_clock::now();
            program.compile(CodeType::cubin, names_for(source));
            times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        std::sort(times.begin(), times.end());
        it->second = times[1];
    }
    return it->second;
}

template <typename Cache>
void cache_hit(benchmark::State& state, const char* source) {
    std::unique_ptr<Cache> cache;
    if constexpr (std::is_same_v<Cache, DiskProgramCache>) cache = std::make_unique<Cache>(bench_cache_dir());
    else cache = std::make_unique<Cache>();
    Program program = make_program(source);
    const auto names = names_for(source);
    compile_cached(program, CodeType::cubin, names, {.cache = cache.get()});  // fill the cache
    const double compile_seconds = fresh_compile_seconds(source);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) benchmark::DoNotOptimize(compile_cached(program, CodeType::cubin, names, {.cache = cache.get()}));
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (cache->stats().hits < state.iterations()) state.SkipWithError("a lookup missed the cache");
    // How many times faster than compiling this hit is (the ratio table's rows show 0.000).
    state.counters["times_faster_than_compile"] =
        compile_seconds / (elapsed.count() / static_cast<double>(state.iterations()));
}

void memory_hit(benchmark::State& state, const char* source) { cache_hit<MemoryProgramCache>(state, source); }

void memory_hit_new_program(benchmark::State& state, const char* source) {
    MemoryProgramCache cache;
    const auto names = names_for(source);
    Program first = make_program(source);
    compile_cached(first, CodeType::cubin, names, {.cache = &cache});  // fill the cache
    for (auto _ : state) {
        Program program = make_program(source);
        benchmark::DoNotOptimize(compile_cached(program, CodeType::cubin, names, {.cache = &cache}));
    }
    if (cache.stats().hits < state.iterations()) state.SkipWithError("a lookup missed the cache");
}
void disk_hit(benchmark::State& state, const char* source) { cache_hit<DiskProgramCache>(state, source); }

// A miss: a new cache each time, so each call reads the files, keys, compiles (and checks in the
// compile worker) and stores. Beside raw/<kernel>_miss, the compile alone.
void memory_miss(benchmark::State& state, const char* source) {
    Program program = make_program(source);
    const auto names = names_for(source);
    for (auto _ : state) {
        MemoryProgramCache cache;
        benchmark::DoNotOptimize(compile_cached(program, CodeType::cubin, names, {.cache = &cache}));
        if (cache.stats().insertions == 0) state.SkipWithError("the miss was not stored");
    }
}

// The small kernel compiles in milliseconds; <cuda/std> takes much longer: fewer iterations.
BENCHMARK_CAPTURE(fresh_compile, small, small_source)->Name("raw/small_miss")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(memory_miss, small, small_source)->Name("cudacore/small_miss")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(fresh_compile, cuda_std, cuda_std_source)->Name("raw/cuda_std_miss")->Unit(benchmark::kMicrosecond)->Iterations(5);
BENCHMARK_CAPTURE(memory_miss, cuda_std, cuda_std_source)->Name("cudacore/cuda_std_miss")->Unit(benchmark::kMicrosecond)->Iterations(5);
BENCHMARK_CAPTURE(fresh_compile, small, small_source)->Name("raw/small_memory_hit")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(memory_hit, small, small_source)->Name("cudacore/small_memory_hit")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(fresh_compile, small, small_source)->Name("raw/small_disk_hit")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(disk_hit, small, small_source)->Name("cudacore/small_disk_hit")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(fresh_compile, cuda_std, cuda_std_source)->Name("raw/cuda_std_memory_hit")->Unit(benchmark::kMicrosecond)->Iterations(3);
BENCHMARK_CAPTURE(memory_hit, cuda_std, cuda_std_source)->Name("cudacore/cuda_std_memory_hit")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(fresh_compile, cuda_std, cuda_std_source)->Name("raw/cuda_std_disk_hit")->Unit(benchmark::kMicrosecond)->Iterations(3);
BENCHMARK_CAPTURE(disk_hit, cuda_std, cuda_std_source)->Name("cudacore/cuda_std_disk_hit")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(fresh_compile, project, project_source)->Name("raw/project_miss")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(memory_miss, project, project_source)->Name("cudacore/project_miss")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(fresh_compile, project, project_source)->Name("raw/project_memory_hit")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(memory_hit, project, project_source)->Name("cudacore/project_memory_hit")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(fresh_compile, project, project_source)->Name("raw/project_disk_hit")->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(disk_hit, project, project_source)->Name("cudacore/project_disk_hit")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(memory_hit_new_program, small, small_source)->Name("cudacore/small_memory_hit_new_program")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(memory_hit_new_program, cuda_std, cuda_std_source)->Name("cudacore/cuda_std_memory_hit_new_program")->Unit(benchmark::kMicrosecond);

constexpr std::size_t payload_size = 10 * 1000 * 1000;

std::string cubin_like_payload() {
    // Mostly incompressible bytes behind an ELF-like header, as a real cubin is.
    std::string bytes(payload_size, '\0');
    std::memcpy(bytes.data(), "\x7f" "ELF\x02\x01\x01", 7);
    std::mt19937_64 random(42);
    for (std::size_t i = 64; i + 8 <= bytes.size(); i += 8) {
        const std::uint64_t value = random();
        std::memcpy(bytes.data() + i, &value, 8);
    }
    return bytes;
}

void memcpy_payload(benchmark::State& state) {
    const std::string source = cubin_like_payload();
    std::string destination(source.size(), '\0');
    for (auto _ : state) {
        std::memcpy(destination.data(), source.data(), source.size());
        benchmark::DoNotOptimize(destination.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(source.size()));
}

void serialize_roundtrip(benchmark::State& state) {
    const ObjectCode code = ObjectCode::from_cubin(cubin_like_payload(), "payload.cubin",
                                                   {{"kernel<float>", "_Z6kernelIfEvPT_"}});
    for (auto _ : state) {
        ObjectCode copy = ObjectCode::deserialize(code.serialize());
        benchmark::DoNotOptimize(copy);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(code.size()));
}

BENCHMARK(memcpy_payload)->Name("raw/serialize_roundtrip_10MB")->Unit(benchmark::kMillisecond);
BENCHMARK(serialize_roundtrip)->Name("cudacore/serialize_roundtrip_10MB")->Unit(benchmark::kMillisecond);

}  // namespace

CUDACORE_BENCH_MAIN()
