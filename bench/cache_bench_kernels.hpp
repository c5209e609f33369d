// The two kernels the cache benchmarks compile and look up (cache_bench, remote_cache_bench): a
// small one, and one that includes <cuda/std> headers, whose key covers every header it read.
#pragma once

#include "cudacore/program.hpp"

namespace cudacore::bench {

inline const char* const small_source = R"(
extern "C" __global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)";

inline const char* const cuda_std_source = R"(
#include <cuda/std/array>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
template <typename T>
__global__ void fill(T* out, int n) {
    static_assert(cuda::std::is_floating_point_v<T>);
    cuda::std::array<T, 4> table{T(1), T(2), T(3), T(4)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[i % table.size()] + cuda::std::numeric_limits<T>::epsilon();
}
)";

// The program for `source`, for sm_90 (what the H100 runs; NVRTC compiles it on any machine).
inline Program make_program(const char* source) {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "bench.cu";
    return Program(source, SourceType::cxx, options);
}

}  // namespace cudacore::bench
