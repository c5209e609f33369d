// Kernels shared by the multi-device and IPC GPU tests and their helper program (compiled at run
// time by NVRTC), and the value pattern they write and check.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/stream.hpp"

#include <cstdint>

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

// Writes i * multiplier + offset into the words of `buffer`, on `stream` (not waited for).
inline void write_pattern(const ObjectCode& code, const Buffer& buffer, const Stream& stream,
                          unsigned multiplier, unsigned offset) {
    launch(stream, LaunchConfig{.grid = 1024, .block = 256}, code.get_kernel("write_pattern"),
           buffer, static_cast<unsigned long long>(buffer.size() / 4), multiplier, offset);
}

// Words of `buffer` that differ from i * multiplier + offset, counted by a kernel on `stream`'s
// device (which waits for the stream's work first); synchronizes the stream.
inline unsigned long long mismatches(const ObjectCode& code, const Buffer& buffer, const Stream& stream,
                                     unsigned multiplier, unsigned offset) {
    Buffer bad = stream.device().allocate(sizeof(unsigned long long), stream);
    bad.fill_byte(0, stream);
    launch(stream, LaunchConfig{.grid = 1024, .block = 256}, code.get_kernel("count_mismatches"),
           buffer, static_cast<unsigned long long>(buffer.size() / 4), multiplier, offset, bad);
    unsigned long long host = ~0ull;
    bad.copy_to(&host, sizeof host, stream);
    stream.sync();
    return host;
}

// The same count read by the host, for host-accessible memory whose writers are done.
inline unsigned long long host_mismatches(const Buffer& buffer, unsigned multiplier, unsigned offset) {
    const auto* words = static_cast<const std::uint32_t*>(buffer.data());
    unsigned long long bad = 0;
    for (std::size_t i = 0; i < buffer.size() / 4; ++i)
        bad += words[i] != static_cast<std::uint32_t>(i * multiplier + offset);
    return bad;
}

}  // namespace cudacore::test
