// Identity as a key: finding an ObjectCode or a Stream in an unordered_set, beside the same lookup
// keyed by what the raw APIs give (the code bytes, the CUstream).
#include "bench_support.hpp"

#include "cudacore/identity.hpp"

#include <string>
#include <string_view>
#include <unordered_set>

namespace {

using namespace cudacore;

using bench::skip_without_gpu;

constexpr std::size_t kCodeSize = 256 * 1024;  // a mid-sized cubin

// Raw: code kept as bytes, keyed by its contents (hashed on every lookup).
void raw_find_code(benchmark::State& state) {
    const std::string code(kCodeSize, 'c');
    std::unordered_set<std::string_view> set = {code};
    const std::string_view key = code;
    for (auto _ : state) benchmark::DoNotOptimize(set.find(key));
}

// cudacore: an ObjectCode keyed by its value (hash cached in the shared state).
void cudacore_find_code(benchmark::State& state) {
    const ObjectCode code = ObjectCode::from_cubin(std::string(kCodeSize, 'c'), "bench");
    std::unordered_set<ObjectCode> set = {code};
    for (auto _ : state) benchmark::DoNotOptimize(set.find(code));
}

void raw_find_stream(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    std::unordered_set<CUstream> set = {stream.handle()};
    const CUstream key = stream.handle();
    for (auto _ : state) benchmark::DoNotOptimize(set.find(key));
}

void cudacore_find_stream(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    std::unordered_set<Stream> set = {stream};
    for (auto _ : state) benchmark::DoNotOptimize(set.find(stream));
}

}  // namespace

BENCHMARK(raw_find_code)->Name("raw/find_code");
BENCHMARK(cudacore_find_code)->Name("cudacore/find_code");
BENCHMARK(raw_find_stream)->Name("raw/find_stream");
BENCHMARK(cudacore_find_stream)->Name("cudacore/find_stream");

CUDACORE_BENCH_MAIN()
