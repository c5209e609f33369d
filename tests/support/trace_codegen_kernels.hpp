// Kernels where NVRTC's time trace (--fdevice-time-trace) was seen to change code generation: a
// template recursion without includes (other register counts, reassociated xor chains) and
// <cuda/std> math (another sqrt slow path in the SASS). Each defines extern "C" `run`. Used by
// the cached-code identity test and bench/trace_codegen_bench.
#pragma once

namespace cudacore::test {

inline constexpr const char* kTraceRecursionSource = R"(
template <int N> struct Mix {
    __device__ static unsigned run(unsigned x, unsigned y) {
        x ^= (y << (N % 7)) + 0x9e3779b9u + (x >> 3);
        y = y * 2654435761u ^ x;
        return Mix<N - 1>::run(y ^ (x >> 5), x + N);
    }
};
template <> struct Mix<0> { __device__ static unsigned run(unsigned x, unsigned y) { return x ^ y; } };
extern "C" __global__ void run(unsigned* out, const unsigned* in, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = Mix<96>::run(in[i], in[(i + 1) % n]);
}
)";

inline constexpr const char* kTraceMathSource = R"(
#include <cuda/std/cmath>
extern "C" __global__ void run(float* out, const float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = x[(i + 1) % n];
    out[i] = cuda::std::sqrt(a * a + b * b) + cuda::std::cbrt(a) * cuda::std::exp2(b) -
             cuda::std::log1p(cuda::std::fabs(a)) / cuda::std::hypot(a, b + 1.0f);
}
)";

}  // namespace cudacore::test
