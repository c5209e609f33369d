// The kernels every system compiles, loads and launches in the side-by-side benchmark. This file
// is the one copy: the C++ areas include it and the Python side (harness.py) reads the same
// literals out of it (each as `constexpr const char* NAME = R"cuda(...)cuda";`), so C++,
// cuda.core and CuPy are handed the very same text.
#pragma once

namespace cudacore::bench::side_by_side {

// A few lines of plain CUDA C++: what NVRTC itself costs.
constexpr const char* small_source = R"cuda(
extern "C" __global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)cuda";

// Pulls in CCCL headers (<cuda/std/...>): dominated by header parsing and template work.
constexpr const char* cuda_std_source = R"cuda(
#include <cuda/std/complex>
#include <cuda/std/array>
template <typename T>
__global__ void rotate(cuda::std::complex<T>* data, T angle, int n) {
    const cuda::std::array<T, 2> signs{T(1), T(-1)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= cuda::std::polar(signs[i % 2], angle);
}
)cuda";
constexpr const char* cuda_std_name_expression = "rotate<float>";

// Loaded, looked up and launched. The 8 parameters are plain scalar and pointer types so that
// Python (numpy scalars) passes exactly the same sizes as C++.
constexpr const char* launch_source = R"cuda(
extern "C" __global__ void empty() {}
extern "C" __global__ void eight(int a, double b, const int* in, signed char c,
                                 unsigned long long u, float f, short s, double* out) {
    if (threadIdx.x == 1024) out[0] = a + b + in[0] + c + u + f + s;
}
)cuda";

// Many specializations of one <cuda/std> kernel: rotate_n<T, N> for T in float, double and
// N in 1..specializations_per_type (names built by specialization_names() here and in Python).
constexpr const char* cuda_std_many_source = R"cuda(
#include <cuda/std/complex>
#include <cuda/std/array>
template <typename T, int N>
__global__ void rotate_n(cuda::std::complex<T>* data, T angle, int n) {
    const cuda::std::array<T, 2> signs{T(1), T(-N)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= cuda::std::polar(signs[i % 2], angle * N);
}
)cuda";
constexpr int specializations_per_type = 16;

// Another kernel with the same headers as cuda_std_source: what a second compile costs when the
// first one's headers can be reused (precompiled headers).
constexpr const char* cuda_std_second_source = R"cuda(
#include <cuda/std/complex>
#include <cuda/std/array>
template <typename T>
__global__ void magnitude(const cuda::std::complex<T>* data, T* out, int n) {
    const cuda::std::array<T, 2> weights{T(0.5), T(2)};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cuda::std::abs(data[i]) * weights[i % 2];
}
)cuda";
constexpr const char* cuda_std_second_name_expression = "magnitude<float>";

}  // namespace cudacore::bench::side_by_side
