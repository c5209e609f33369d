// CUDA C++ sources shared by the loading and launch GPU tests (compiled at run time by NVRTC).
#pragma once

namespace cudacore::test {

inline constexpr const char* kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

inline constexpr const char* kTemplateSource = R"(
template <typename T>
__global__ void scale(T* data, T factor, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)";

// Eight parameters of mixed sizes and alignments; the device writes back what it received.
inline constexpr const char* kMixedSource = R"(
struct Pair { int i; double d; };
extern "C" __global__ void mixed(int a, double b, const int* in, char c, Pair p,
                                 unsigned long long u, float f, double* out) {
    out[0] = a; out[1] = b; out[2] = in[0]; out[3] = c;
    out[4] = p.i; out[5] = p.d; out[6] = (double)u; out[7] = f;
}
)";

// Block limit 128 (launch bounds), cluster ranks, grid sync and large dynamic shared memory.
inline constexpr const char* kFeatureSource = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __launch_bounds__(128) bounded(int* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

extern "C" __global__ void cluster_ranks(unsigned* rank, unsigned* size) {
    unsigned r, n;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    if (threadIdx.x == 0) { rank[blockIdx.x] = r; size[blockIdx.x] = n; }
}

// Every block writes, the whole grid synchronises, then block 0 reads what all blocks wrote.
extern "C" __global__ void grid_sum(unsigned* slots, unsigned long long* total) {
    if (threadIdx.x == 0) slots[blockIdx.x] = blockIdx.x + 1;
    cg::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long sum = 0;
        for (unsigned b = 0; b < gridDim.x; ++b) sum += slots[b];
        *total = sum;
    }
}

// Fills `count` floats of dynamic shared memory, then sums them (one block).
extern "C" __global__ void shared_sum(float* out, unsigned count) {
    extern __shared__ float buffer[];
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) buffer[i] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0;
        for (unsigned i = 0; i < count; ++i) sum += buffer[i];
        *out = sum;
    }
}
)";

// Spins until *flag is set (or about `timeout_cycles` pass), then writes 42 (or -1 on timeout).
inline constexpr const char* kSpinSource = R"(
extern "C" __global__ void wait_for_flag(volatile int* flag, int* out, long long timeout_cycles) {
    long long start = clock64();
    while (*flag == 0) {
        if (clock64() - start > timeout_cycles) { *out = -1; return; }
    }
    *out = 42;
}
)";

}  // namespace cudacore::test
