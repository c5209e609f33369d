// `cudacore demo`: The nvcc-style step: a kernel written for nvcc compiled by NVRTC through cudacore's standard
// headers, then a long compile cancelled from another thread.
#include "demo.hpp"

#include "cudacore/cancellation.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/program.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace cudacore::cli::demo {

namespace {

// A kernel written for nvcc: the standard headers it includes are cudacore's under NVRTC.
constexpr const char* kNvccStyleSource = R"(
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <type_traits>
template <class T>
__global__ void scaled(T* data, std::uint32_t n) {
    static_assert(std::is_floating_point<T>::value, "floating point only");
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = std::fma(data[i], T(2), std::numeric_limits<T>::epsilon());
    if (i == 0 && data[0] < T(0)) std::printf("negative first element\n");
}
)";
constexpr const char* kNvccStyleName = "scaled<float>";
// 2^13 class template instantiations: seconds of NVRTC's front end, cancelled long before.
constexpr const char* kLongInstantiationSource = R"(
template <int D, int I> struct Tree { static constexpr long long v = Tree<D - 1, 2 * I>::v + Tree<D - 1, 2 * I + 1>::v; };
template <int I> struct Tree<0, I> { static constexpr long long v = I; };
__global__ void k(long long* o) { *o = Tree<12, 7>::v; }
)";

}  // namespace

// A kernel written for nvcc compiled by NVRTC through cudacore's standard headers, then a long
// template instantiation cancelled from another thread (a server giving up on a request).
void step_nvcc_style(Demo& demo) {
    std::printf("== nvcc-style kernel (standard headers under NVRTC; a compile cancelled)\n");
    ProgramOptions options;
    options.arch = demo.arch;
    options.name = "nvcc_style";
    options.std_headers = true;  // cudacore's <cmath>, <cstdint>... under NVRTC
    // Their folder is made under the cache folder: the demo's own, never the user's.
    ::setenv("CUDACORE_CACHE_DIR", (demo.scratch_path() / "cache-folder").c_str(), 1);
    const ObjectCode code =
        Program(kNvccStyleSource, SourceType::cxx, options).compile(CodeType::cubin, {kNvccStyleName});
    std::printf("%s with <cmath>, <cstdint>, <cstdio>, <limits>, <type_traits>: %zu bytes\n",
                kNvccStyleName, code.size());
    options.name = "long_instantiation";
    CancellationToken token;
    const auto start = std::chrono::steady_clock::now();
    std::thread canceller([token] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        token.cancel();
    });
    bool cancelled = false;
    try {
        Program(kLongInstantiationSource, SourceType::cxx, options)
            .compile(CodeType::cubin, {}, CompileOptions{.cancellation = token});
    } catch (const CompileCancelled& e) {
        cancelled = e.nvrtc_status() == NVRTC_ERROR_CANCELLED;
    }
    canceller.join();
    std::printf("a long template instantiation cancelled at 100 ms returned at %.0f ms: %s\n",
                milliseconds_since(start), demo.outcomes.verify("nvcc-style", cancelled));
}

}  // namespace cudacore::cli::demo
