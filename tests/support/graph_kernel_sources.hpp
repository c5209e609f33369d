// CUDA C++ sources for the graph tests (compiled at run time by NVRTC).
#pragma once

namespace cudacore::test {

// Plain kernels: an empty one, an add and a write at an index.
inline constexpr const char* kGraphKernelsSource = R"(
extern "C" __global__ void empty_kernel() {}

extern "C" __global__ void add_value(int* data, int value, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}

extern "C" __global__ void mark(int* out, int index, int value) {
    if (threadIdx.x == 0 && blockIdx.x == 0) out[index] = value;
}

// One block: out[0] = sum of data[0..n).
extern "C" __global__ void sum_ints(const int* data, unsigned n, long long* out) {
    __shared__ long long partial[256];
    long long local = 0;
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) local += data[i];
    partial[threadIdx.x] = local;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = partial[0];
}
)";

// Conditional nodes: the device sets the condition (cudaGraphSetConditional), as documented in
// graph_conditional.hpp. With NVRTC the declaration comes from <cuda_device_runtime_api.h>.
inline constexpr const char* kConditionalKernelsSource = R"(
#include <cuda_device_runtime_api.h>

// Computes a loop count on the device (n = seed * 2 + 1) and opens the while loop if it is > 0.
extern "C" __global__ void set_count(cudaGraphConditionalHandle loop, const int* seed,
                                     int* counter) {
    int n = *seed * 2 + 1;
    *counter = n;
    cudaGraphSetConditional(loop, n > 0 ? 1u : 0u);
}

// The while body: one step, then close the loop when the counter runs out.
extern "C" __global__ void while_step(cudaGraphConditionalHandle loop, int* counter, int* runs) {
    *runs += 1;
    if (--*counter <= 0) cudaGraphSetConditional(loop, 0u);
}

// Sets the condition to a value only the device has (if, if/else, switch).
extern "C" __global__ void set_condition(cudaGraphConditionalHandle handle,
                                         const unsigned* value) {
    cudaGraphSetConditional(handle, *value);
}
)";

}  // namespace cudacore::test
