// Kernels shared by the memory breadth GPU tests (compiled at run time by NVRTC).
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/program.hpp"

namespace cudacore::test {

inline constexpr const char* kBreadthKernels = R"(
__device__ unsigned pattern(unsigned long long i) { return (unsigned)(i * 2654435761ull + 17u); }

// Counts words below `valid` that differ from pattern(i), then writes pattern(i) to all `count`
// words. Each thread checks and writes only its own indices (grid-stride).
extern "C" __global__ void check_then_fill(unsigned* data, unsigned long long valid,
                                           unsigned long long count,
                                           unsigned long long* mismatches) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < count; i += stride) {
        if (i < valid && data[i] != pattern(i)) atomicAdd(mismatches, 1ull);
        data[i] = pattern(i);
    }
}

// data[i] = base + i for `count` words.
extern "C" __global__ void write_sequence(unsigned* data, unsigned long long count, unsigned base) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < count; i += stride)
        data[i] = base + (unsigned)i;
}
)";

inline ObjectCode compile_breadth_kernels(const Device& device) {
    ProgramOptions options;
    options.name = "memory_breadth_kernels";
    options.arch = device.arch();
    return Program(kBreadthKernels, SourceType::cxx, options).compile(CodeType::cubin);
}

// The host side of pattern() above.
inline unsigned breadth_pattern(unsigned long long i) {
    return static_cast<unsigned>(i * 2654435761ull + 17u);
}

}  // namespace cudacore::test
