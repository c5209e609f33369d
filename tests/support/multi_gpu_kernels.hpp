// Kernels shared by the multi-device and IPC GPU tests and their helper program (compiled at run
// time by NVRTC), and the value pattern they write and check.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

namespace cudacore::test {

inline constexpr const char* kMultiGpuSource = R"(
// out[i] = i * multiplier + offset
extern "C" __global__ void write_pattern(unsigned* out, unsigned long long count,
                                         unsigned multiplier, unsigned offset) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < count; i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = (unsigned)(i * multiplier + offset);
}

// Adds to *bad the number of words that differ from i * multiplier + offset.
extern "C" __global__ void count_mismatches(const unsigned* data, unsigned long long count,
                                            unsigned multiplier, unsigned offset,
                                            unsigned long long* bad) {
    unsigned long long mine = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < count; i += (unsigned long long)gridDim.x * blockDim.x)
        if (data[i] != (unsigned)(i * multiplier + offset)) ++mine;
    if (mine) atomicAdd(bad, mine);
}

// Waits `nanoseconds` (one thread), then checks data against (check_multiplier, check_offset)
// into *bad and rewrites it as i * multiplier + offset: a slow reader-writer, so that a consumer
// that does not wait for it sees the old values.
extern "C" __global__ void spin_check_rewrite(unsigned* data, unsigned long long count,
                                              unsigned check_multiplier, unsigned check_offset,
                                              unsigned multiplier, unsigned offset,
                                              unsigned long long nanoseconds,
                                              unsigned long long* bad) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
    unsigned long long mine = 0;
    for (unsigned long long i = 0; i < count; ++i) {
        if (data[i] != (unsigned)(i * check_multiplier + check_offset)) ++mine;
        data[i] = (unsigned)(i * multiplier + offset);
    }
    *bad = mine;
}
)";

inline ObjectCode compile_multi_gpu_kernels(const Device& device) {
    ProgramOptions options;
    options.name = "multi_gpu_kernels";
    options.arch = device.arch();
    return Program(kMultiGpuSource, SourceType::cxx, options).compile(CodeType::cubin);
}

}  // namespace cudacore::test
