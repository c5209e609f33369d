// The cost of checked_load (a probe load in cudacore-load-probe, then the load here) against a
// plain load, on a small cubin for the current device.
//
//   raw/checked_load_first        cuLibraryLoadData + cuLibraryUnload
//   cudacore/checked_load_first   checked_load of a fresh ObjectCode with the verdict cache
//                                 emptied: the probe process (start, driver init, load) + load
//   raw/checked_load_cached       cuLibraryLoadData + cuLibraryUnload
//   cudacore/checked_load_cached  checked_load with the verdict cached: hash + load
//
//   raw/validate_cubin            XXH3-64 over the cubin's bytes (reading it once)
//   cudacore/validate_cubin       the structural validation every link and load does first
//                                 (no GPU needed; sm_90 cubin of a few kernels, ~30 KB)
//
// The ratio printed at the end is cudacore / raw; the first probe's cost is dominated by the
// probe process starting the driver.
#include "bench_support.hpp"

#include "cudacore/checked_load.hpp"
#include "cudacore/device.hpp"
#include "cudacore/program.hpp"
#include "code/code_validation.hpp"
#include "loader/driver_api.hpp"
#include "runtime/library_box.hpp"
#include "runtime/load_probe_cache.hpp"

#include <xxhash.h>  // inlined (XXH_INLINE_ALL, from cudacore_internals)

#include <optional>
#include <string>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
extern "C" __global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)";

const std::string& cubin() {
    static const std::string code = [] {
        Device(0).set_current();
        ProgramOptions options;
        options.name = "checked_load_bench";
        options.arch = Device(0).arch();
        return std::string(Program(kSource, SourceType::cxx, options).compile(CodeType::cubin).code());
    }();
    return code;
}

void raw_load(benchmark::State& state) {
    if (bench::skip_without_gpu(state)) return;
    const std::string& code = cubin();
    const auto& api = detail::driver();
    for (auto _ : state) {
        CUlibrary library = nullptr;
        detail::check(api.cuLibraryLoadData(&library, code.data(), nullptr, nullptr, 0, nullptr,
                                             nullptr, 0),
                      "cuLibraryLoadData");
        detail::check(api.cuLibraryUnload(library), "cuLibraryUnload");
    }
}

void checked(benchmark::State& state, bool cached) {
    if (bench::skip_without_gpu(state)) return;
    const std::string& code = cubin();
    checked_load(ObjectCode::from_cubin(code));  // the probe program is found, the driver warm
    for (auto _ : state) {
        if (!cached) detail::forget_load_probe_verdicts();
        const ObjectCode fresh = ObjectCode::from_cubin(code);
        checked_load(fresh);
    }
}

// Several kernels, so that the tables to check are not trivial.
const std::string& validation_cubin() {
    static const std::string code = [] {
        std::string source;
        for (int i = 0; i < 24; ++i) {
            source += "extern \"C\" __global__ void k" + std::to_string(i) +
                      "(float* d, int n) { __shared__ float s[64]; int t = threadIdx.x; "
                      "s[t % 64] = d[t % n]; __syncthreads(); d[t] = s[(t + " + std::to_string(i) +
                      ") % 64] * " + std::to_string(i) + ".0f; }\n";
        }
        ProgramOptions options;
        options.arch = "sm_90";
        return std::string(Program(source, SourceType::cxx, options).compile(CodeType::cubin).code());
    }();
    return code;
}

void raw_validate(benchmark::State& state) {
    const std::string& code = validation_cubin();
    for (auto _ : state) benchmark::DoNotOptimize(XXH3_64bits(code.data(), code.size()));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * code.size()));
}

void cudacore_validate(benchmark::State& state) {
    const std::string& code = validation_cubin();
    for (auto _ : state) detail::validate_code(CodeType::cubin, code);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * code.size()));
}

void cudacore_first(benchmark::State& state) { checked(state, false); }
void cudacore_cached(benchmark::State& state) { checked(state, true); }

}  // namespace

BENCHMARK(raw_load)->Name("raw/checked_load_first")->Unit(benchmark::kMicrosecond);
BENCHMARK(cudacore_first)->Name("cudacore/checked_load_first")->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_load)->Name("raw/checked_load_cached")->Unit(benchmark::kMicrosecond);
BENCHMARK(cudacore_cached)->Name("cudacore/checked_load_cached")->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_validate)->Name("raw/validate_cubin");
BENCHMARK(cudacore_validate)->Name("cudacore/validate_cubin");

CUDACORE_BENCH_MAIN();
