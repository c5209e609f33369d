// Device code behind copy_batch: many small copies in one kernel launch, instead of one copy
// command per pair (cuMemcpyBatchAsync still costs the device about one command per pair).
//
// The pairs travel in the kernel's parameters (up to 32 KiB since CUDA 12.1 on sm_70 and newer),
// so nothing is uploaded first and a launch is valid inside a stream capture too. Three kernels
// of different capacities keep the parameter block small for small batches. Each warp copies one
// pair at a time, 16, 4 or 1 bytes per access depending on how both ends are aligned.
//
// Compiled by nvcc at build time into a fatbin that the library embeds (see CMakeLists.txt);
// the host side is src/memory/batched_copy.cpp, which must agree with the layout below.

#include <cstdint>

namespace {

template <int Capacity>
struct CopyList {
    unsigned long long count;
    unsigned long long destination[Capacity];
    unsigned long long source[Capacity];
    unsigned long long bytes[Capacity];
};

template <class Word>
__device__ void copy_words(char* destination, const char* source, unsigned long long words,
                           unsigned lane) {
    auto* to = reinterpret_cast<Word*>(destination);
    const auto* from = reinterpret_cast<const Word*>(source);
    for (unsigned long long i = lane; i < words; i += 32) to[i] = from[i];
}

__device__ void copy_one(unsigned long long destination, unsigned long long source,
                         unsigned long long bytes, unsigned lane) {
    char* to = reinterpret_cast<char*>(destination);
    const char* from = reinterpret_cast<const char*>(source);
    const unsigned long long alignment = destination | source;
    unsigned long long done = 0;
    if ((alignment & 15) == 0) {
        copy_words<uint4>(to, from, bytes / 16, lane);
        done = bytes / 16 * 16;
    } else if ((alignment & 3) == 0) {
        copy_words<unsigned>(to, from, bytes / 4, lane);
        done = bytes / 4 * 4;
    }
    for (unsigned long long i = done + lane; i < bytes; i += 32) to[i] = from[i];
}

template <int Capacity>
__device__ void copy_list(const CopyList<Capacity>& list) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned long long warps = (unsigned long long)gridDim.x * blockDim.x / 32;
    for (unsigned long long pair = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32;
         pair < list.count; pair += warps)
        copy_one(list.destination[pair], list.source[pair], list.bytes[pair], lane);
}

}  // namespace

// 24 bytes a pair plus the count: 1,360 pairs fill 32,648 of the 32,764 bytes allowed.
extern "C" __global__ void cudacore_copy_batch_32(const __grid_constant__ CopyList<32> list) {
    copy_list(list);
}
extern "C" __global__ void cudacore_copy_batch_256(const __grid_constant__ CopyList<256> list) {
    copy_list(list);
}
extern "C" __global__ void cudacore_copy_batch_1360(const __grid_constant__ CopyList<1360> list) {
    copy_list(list);
}
